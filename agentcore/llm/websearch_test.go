package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"
)

// Replays of fantasy's recorded web-search streams. Only the first turn
// of TestAnthropicWebSearch is replayed: its second request sends the
// search back (server_tool_use and the encrypted web_search_tool_result)
// in separate text blocks, provider state Parley's history does not keep
// (see ToolCall.ProviderExecuted).
func TestWebSearchReplay(t *testing.T) {
	cases := []struct {
		name, cassette, spec, basePath string
		query                          string // what the model searched for
		results                        int    // pages named in the result
		source                         Source // one of the source parts
	}{
		{
			name:     "openai",
			cassette: "TestOpenAIWebSearch/stream.yaml",
			spec:     "openai/gpt-4.1",
			basePath: "/v1",
			query:    "current population of Tokyo 2024",
			source:   Source{URL: "https://www.toukei.metro.tokyo.lg.jp/index.htm?utm_source=openai", Title: "東京都の統計"},
		},
		{
			name:     "anthropic",
			cassette: "TestAnthropicWebSearch/stream.yaml",
			spec:     "anthropic/claude-sonnet-4-20250514",
			query:    "Tokyo population 2026 current",
			results:  10,
			source:   Source{URL: "https://en.wikipedia.org/wiki/Demographics_of_Tokyo", Title: "Demographics of Tokyo - Wikipedia"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, srv := openReplay(t, tc.cassette, tc.spec, tc.basePath)
			if err := CheckProviderTool(tc.spec, WebSearch); err != nil {
				t.Errorf("CheckProviderTool: %v", err)
			}
			parts, err := collect(t, m, Request{
				Messages: []Message{
					{Role: RoleSystem, Text: "You are a helpful assistant"},
					{Role: RoleUser, Text: "What is the current population of Tokyo? Cite your source."},
				},
				Tools:           []ToolSpec{{Name: WebSearch, ProviderDefined: true}},
				ToolChoice:      "auto",
				MaxOutputTokens: 4000,
			})
			if err != nil {
				t.Fatal(err)
			}
			// The provider's tool definition went out as recorded.
			// (recorded without prompt caching: see cache_test.go)
			if !sameJSON(t, srv.Body(0), c.Interactions[0].Request.Body, []string{"cache_control"}) {
				t.Errorf("request differs from the recording:\n got %s\nwant %s", srv.Body(0), c.Interactions[0].Request.Body)
			}

			// Every tool part belongs to one provider-executed search.
			var id string
			for _, p := range parts {
				switch p.Type {
				case PartToolInputStart, PartToolInputDelta, PartToolInputEnd, PartToolCall, PartToolResult:
					if !p.ProviderExecuted {
						t.Errorf("tool part not marked provider-executed: %+v", p)
					}
					if id == "" {
						id = p.ToolCallID
					}
					if p.ToolCallID != id {
						t.Errorf("tool part of another call %q, want %q: %+v", p.ToolCallID, id, p)
					}
				}
			}
			starts, calls, results := ofType(parts, PartToolInputStart), ofType(parts, PartToolCall), ofType(parts, PartToolResult)
			if len(starts) != 1 || len(calls) != 1 || len(results) != 1 {
				t.Fatalf("want one tool input start, call and result, got %d/%d/%d: %+v", len(starts), len(calls), len(results), parts)
			}
			call, result := calls[0], results[0]
			if starts[0].ToolName != WebSearch || call.ToolName != WebSearch || result.ToolName != WebSearch {
				t.Errorf("tool names %q, %q, %q, want %q", starts[0].ToolName, call.ToolName, result.ToolName, WebSearch)
			}
			var input struct{ Query string }
			if err := json.Unmarshal([]byte(call.Input), &input); err != nil || input.Query != tc.query {
				t.Errorf("call input %q (%v), want query %q", call.Input, err, tc.query)
			}
			if deltas := ofType(parts, PartToolInputDelta); len(deltas) > 0 && !sameJSON(t, joined(deltas), call.Input, nil) {
				t.Errorf("input deltas add up to %q, call input is %q", joined(deltas), call.Input)
			}
			var res WebSearchResult
			if err := json.Unmarshal([]byte(result.Result), &res); err != nil {
				t.Fatalf("result %q: %v", result.Result, err)
			}
			if result.IsError || res.Error != "" || res.Query != tc.query || len(res.Results) != tc.results {
				t.Errorf("result %s (error %v), want query %q and %d results", result.Result, result.IsError, tc.query, tc.results)
			}
			for _, r := range res.Results {
				if !strings.HasPrefix(r.URL, "https://") || r.Title == "" {
					t.Errorf("result page %+v lacks a URL or title", r)
				}
			}

			// Sources come once per URL, and the answer follows the search.
			var sources []Source
			for _, p := range ofType(parts, PartSource) {
				sources = append(sources, Source{URL: p.URL, Title: p.Title})
			}
			if !slices.Contains(sources, tc.source) {
				t.Errorf("sources %+v lack %+v", sources, tc.source)
			}
			urls := map[string]bool{}
			for _, s := range sources {
				if urls[s.URL] {
					t.Errorf("source %s came twice", s.URL)
				}
				urls[s.URL] = true
			}
			callAt := slices.IndexFunc(parts, func(p Part) bool { return p.Type == PartToolCall })
			resultAt := slices.IndexFunc(parts, func(p Part) bool { return p.Type == PartToolResult })
			textAt := slices.IndexFunc(parts, func(p Part) bool { return p.Type == PartTextDelta })
			if !(callAt < resultAt && resultAt < textAt) {
				t.Errorf("call at %d, result at %d, first text at %d: want them in this order", callAt, resultAt, textAt)
			}
			if text := joined(ofType(parts, PartTextDelta)); !strings.Contains(text, "Tokyo") {
				t.Errorf("answer %q does not mention Tokyo", text)
			}
			checkFinish(t, parts, "stop")
		})
	}
}

func TestWebSearchUnsupportedProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	for _, spec := range []string{"openrouter/openai/gpt-5.4-nano", "ollama/llama3.2", "openai-compatible/qwen3"} {
		provider, _, _ := strings.Cut(spec, "/")
		want := "web_search is not available for " + provider + " models: use an OpenAI, Anthropic or Gemini model"
		t.Run(provider, func(t *testing.T) {
			m, err := Open(spec, Config{
				APIKeys:  map[string]string{provider: "test-key"},
				BaseURLs: map[string]string{provider: srv.URL},
				Getenv:   func(string) string { return "" },
			})
			if err != nil {
				t.Fatal(err)
			}
			parts, err := collect(t, m, Request{
				Messages: []Message{{Role: RoleUser, Text: "news?"}},
				Tools:    []ToolSpec{weatherTool, {Name: WebSearch, ProviderDefined: true}},
			})
			var unsupported *UnsupportedToolError
			if len(parts) != 0 || err == nil || err.Error() != want || !errors.As(err, &unsupported) {
				t.Errorf("got %+v, %v; want the error %q", parts, err, want)
			}
			if err := CheckProviderTool(spec, WebSearch); err == nil || err.Error() != want {
				t.Errorf("CheckProviderTool: %v, want %q", err, want)
			}
		})
	}
}

// A search done by the provider is not sent back: there is nothing of
// ours to answer it with.
func TestWebSearchHistoryLeavesOutExecutedCalls(t *testing.T) {
	call, err := toCall(Request{Messages: []Message{
		{Role: RoleUser, Text: "news?"},
		{Role: RoleAssistant, Text: "Here they are.", ToolCalls: []ToolCall{
			{ID: "srvtoolu_1", Name: WebSearch, Input: `{"query":"news"}`, ProviderExecuted: true},
		}},
		{Role: RoleUser, Text: "more"},
	}}, "anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	assistant := call.Prompt[1]
	if len(assistant.Content) != 1 || assistant.Content[0].GetType() != fantasy.ContentTypeText {
		t.Errorf("assistant message %+v, want its text alone", assistant.Content)
	}
}

// An OpenAI search call comes without input; it waits for its result,
// which names the query, and is released at the finish if none comes.
func TestWebSearchHeldCall(t *testing.T) {
	var c converter
	var got []Part
	for _, fp := range []fantasy.StreamPart{
		{Type: fantasy.StreamPartTypeToolInputStart, ID: "ws_1", ToolCallName: WebSearch, ProviderExecuted: true},
		{Type: fantasy.StreamPartTypeToolInputEnd, ID: "ws_1"},
		{Type: fantasy.StreamPartTypeToolCall, ID: "ws_1", ToolCallName: WebSearch, ProviderExecuted: true},
		{Type: fantasy.StreamPartTypeToolInputStart, ID: "ws_2", ToolCallName: WebSearch, ProviderExecuted: true},
		{Type: fantasy.StreamPartTypeToolCall, ID: "ws_2", ToolCallName: WebSearch, ProviderExecuted: true},
		{Type: fantasy.StreamPartTypeFinish, FinishReason: fantasy.FinishReasonStop},
	} {
		got = append(got, c.parts(fp)...)
	}
	want := []Part{
		{Type: PartToolInputStart, ToolCallID: "ws_1", ToolName: WebSearch, ProviderExecuted: true},
		{Type: PartToolInputEnd, ToolCallID: "ws_1", ProviderExecuted: true},
		{Type: PartToolInputStart, ToolCallID: "ws_2", ToolName: WebSearch, ProviderExecuted: true},
		{Type: PartToolCall, ToolCallID: "ws_1", ToolName: WebSearch, Input: "{}", ProviderExecuted: true},
		{Type: PartToolCall, ToolCallID: "ws_2", ToolName: WebSearch, Input: "{}", ProviderExecuted: true},
		{Type: PartFinish, FinishReason: "stop"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
