package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore/llm/llmtest"
)

// Replays of real HTTP exchanges that fantasy recorded against the live
// providers (go-vcr cassettes shipped in fantasy's module). Each tool
// cassette holds two turns: the model calls the weather tool, then answers
// from the tool's result. Our requests are checked against the recorded
// ones, so the prompt conversion is tested on the real wire format too.

// collect drains a stream with a deadline so a broken adapter fails the
// test instead of hanging it.
func collect(t *testing.T, m Model, req Request) ([]Part, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var parts []Part
	for p, err := range m.Stream(ctx, req) {
		if err != nil {
			return parts, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func ofType(parts []Part, typ PartType) []Part {
	var out []Part
	for _, p := range parts {
		if p.Type == typ {
			out = append(out, p)
		}
	}
	return out
}

func joined(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// sameJSON reports whether two JSON documents are equal once the named
// keys are dropped everywhere.
func sameJSON(t *testing.T, got, want string, ignore []string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("our request is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("recorded request is not JSON: %v", err)
	}
	for _, k := range ignore {
		drop(g, k)
		drop(w, k)
	}
	return reflect.DeepEqual(g, w)
}

func drop(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for _, e := range v {
			drop(e, key)
		}
	case []any:
		for _, e := range v {
			drop(e, key)
		}
	}
}

var weatherTool = ToolSpec{
	Name:        "weather",
	Description: "Get weather information for a location",
	InputSchema: json.RawMessage(`{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object"}`),
}

func TestReplayToolCallAndAnswer(t *testing.T) {
	cases := []struct {
		name     string
		cassette string
		spec     string
		basePath string   // API base below the server root
		ignore   []string // request keys that legitimately differ
		// minInputDeltas: Gemini sends a call's arguments whole, in one delta.
		minInputDeltas int
		signature      bool // the call carries a Gemini thought signature
	}{
		{
			name:           "openai",
			cassette:       "TestOpenAICommon/openai-gpt-4o/tool_streaming.yaml",
			spec:           "openai/gpt-4o",
			basePath:       "/v1",
			minInputDeltas: 5,
		},
		{
			name:     "anthropic",
			cassette: "TestAnthropicCommon/claude-sonnet-4/tool_streaming.yaml",
			spec:     "anthropic/claude-sonnet-4-20250514",
			// Recorded without prompt caching; Parley's breakpoints are
			// checked against the cached recording in cache_test.go.
			ignore:         []string{"cache_control"},
			minInputDeltas: 2,
		},
		{
			name:     "google",
			cassette: "TestGoogleCommon/gemini-2.5-flash/tool_streaming.yaml",
			spec:     "google/gemini-2.5-flash",
			// The recording's call ids came from a test id generator;
			// ours are UUIDs.
			ignore:         []string{"id"},
			minInputDeltas: 1,
			signature:      true,
		},
		{
			name:           "openrouter",
			cassette:       "TestOpenRouterCommon/openai/tool_streaming.yaml",
			spec:           "openrouter/openai/gpt-5.4-nano",
			basePath:       "/api/v1",
			minInputDeltas: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, srv := openReplay(t, tc.cassette, tc.spec, tc.basePath)

			// Turn 1: the model calls the weather tool.
			req := Request{
				Messages: []Message{
					{Role: RoleSystem, Text: "You are a helpful assistant"},
					{Role: RoleUser, Text: "What's the weather in Florence,Italy?"},
				},
				Tools:           []ToolSpec{weatherTool},
				ToolChoice:      "auto",
				MaxOutputTokens: 4000,
			}
			parts, err := collect(t, m, req)
			if err != nil {
				t.Fatalf("turn 1: %v", err)
			}
			if !sameJSON(t, srv.Body(0), c.Interactions[0].Request.Body, tc.ignore) {
				t.Errorf("turn 1 request differs from the recording:\n got %s\nwant %s", srv.Body(0), c.Interactions[0].Request.Body)
			}
			starts, deltas := ofType(parts, PartToolInputStart), ofType(parts, PartToolInputDelta)
			ends, calls := ofType(parts, PartToolInputEnd), ofType(parts, PartToolCall)
			if len(starts) != 1 || len(ends) != 1 || len(calls) != 1 {
				t.Fatalf("want one tool input start/end/call, got %d/%d/%d: %+v", len(starts), len(ends), len(calls), parts)
			}
			call := calls[0]
			if starts[0].ToolName != "weather" || call.ToolName != "weather" || call.ToolCallID == "" || starts[0].ToolCallID != call.ToolCallID {
				t.Errorf("tool input start %+v, call %+v", starts[0], call)
			}
			if len(deltas) < tc.minInputDeltas {
				t.Errorf("got %d tool input deltas, want at least %d", len(deltas), tc.minInputDeltas)
			}
			// The deltas add up to the final input, which is complete JSON.
			if got := joined(deltas); !sameJSON(t, got, call.Input, nil) {
				t.Errorf("tool input deltas add up to %q, final input is %q", got, call.Input)
			}
			var input struct{ Location string }
			if err := json.Unmarshal([]byte(call.Input), &input); err != nil || !strings.Contains(input.Location, "Florence") {
				t.Errorf("tool input %q: %v", call.Input, err)
			}
			if tc.signature != (call.Signature != "") {
				t.Errorf("tool call signature %q, want one: %v", call.Signature, tc.signature)
			}
			checkFinish(t, parts, "tool-calls")

			// Turn 2: the model answers from the tool result.
			req.Messages = append(req.Messages,
				Message{Role: RoleAssistant, Text: joined(ofType(parts, PartTextDelta)), ToolCalls: []ToolCall{{
					ID: call.ToolCallID, Name: call.ToolName, Input: call.Input, Signature: call.Signature,
				}}},
				Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: call.ToolCallID, Name: call.ToolName, Output: "40 C"}}},
			)
			parts, err = collect(t, m, req)
			if err != nil {
				t.Fatalf("turn 2: %v", err)
			}
			if !sameJSON(t, srv.Body(1), c.Interactions[1].Request.Body, tc.ignore) {
				t.Errorf("turn 2 request differs from the recording:\n got %s\nwant %s", srv.Body(1), c.Interactions[1].Request.Body)
			}
			text := ofType(parts, PartTextDelta)
			if len(text) < 2 {
				t.Errorf("want the answer in several deltas, got %d", len(text))
			}
			if !strings.Contains(joined(text), "40") {
				t.Errorf("answer %q does not mention the tool result", joined(text))
			}
			checkFinish(t, parts, "stop")
		})
	}
}

func TestReplaySimpleText(t *testing.T) {
	cases := []struct{ name, cassette, spec, basePath string }{
		{"openai", "TestOpenAICommon/openai-gpt-4o/simple_streaming.yaml", "openai/gpt-4o", "/v1"},
		{"anthropic", "TestAnthropicCommon/claude-sonnet-4/simple_streaming.yaml", "anthropic/claude-sonnet-4-20250514", ""},
		{"google", "TestGoogleCommon/gemini-2.5-pro/simple_streaming.yaml", "google/gemini-2.5-pro", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := openReplay(t, tc.cassette, tc.spec, tc.basePath)
			parts, err := collect(t, m, Request{
				Messages: []Message{
					{Role: RoleSystem, Text: "You are a helpful assistant"},
					{Role: RoleUser, Text: "Say hi in Portuguese"},
				},
				MaxOutputTokens: 4000,
			})
			if err != nil {
				t.Fatal(err)
			}
			text := ofType(parts, PartTextDelta)
			if len(text) < 2 || !strings.Contains(strings.ToLower(joined(text)), "ol") {
				t.Errorf("want a greeting in several deltas, got %q in %d", joined(text), len(text))
			}
			checkFinish(t, parts, "stop")
		})
	}
}

// checkFinish asserts the stream ended with one finish carrying usage.
func checkFinish(t *testing.T, parts []Part, reason string) {
	t.Helper()
	if len(parts) == 0 || parts[len(parts)-1].Type != PartFinish {
		t.Fatalf("stream did not end with a finish: %+v", parts)
	}
	f := parts[len(parts)-1]
	if f.FinishReason != reason {
		t.Errorf("finish reason %q, want %q", f.FinishReason, reason)
	}
	u := f.Usage
	// Only presence is checked here; TestGeminiUsageOfRecording checks
	// Gemini's exact counts (fantasy alone adds up its running totals).
	if u.InputTokens <= 0 || u.OutputTokens <= 0 || u.TotalTokens <= 0 {
		t.Errorf("usage not read: %+v", u)
	}
}

// openReplay opens spec against a local server replaying the cassette.
func openReplay(t *testing.T, cassette, spec, basePath string) (Model, llmtest.Cassette, *llmtest.ReplayServer) {
	t.Helper()
	c := llmtest.LoadCassette(t, cassette)
	srv := llmtest.NewReplayServer(t, c)
	provider, _, _ := strings.Cut(spec, "/")
	m, err := Open(spec, Config{
		APIKeys:  map[string]string{provider: "test-key"},
		BaseURLs: map[string]string{provider: srv.URL + basePath},
		Getenv:   func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, c, srv
}
