package llm

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"parley/agentcore/llm/llmtest"
)

// marks lists where a request body carries cache_control, as JSON paths.
func marks(t *testing.T, body string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("request is not JSON: %v\n%s", err, body)
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if cc, ok := v["cache_control"]; ok {
				if m, _ := cc.(map[string]any); m["type"] != "ephemeral" {
					t.Errorf("%s: cache_control %v", path, cc)
				}
				out = append(out, path)
			}
			for k, e := range v {
				if k != "cache_control" {
					walk(path+"."+k, e)
				}
			}
		case []any:
			for i, e := range v {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk("", v)
	slices.Sort(out)
	return out
}

// Anthropic's breakpoints go where fantasy's recorded cached requests have
// them (TestAnthropicCommonWithCacheControl: cache_control on the system
// block and on the last block of a message), plus the tool definitions;
// across a tool call the conversation's breakpoints move as Anthropic's
// guide places them — the newest message, and the end of the previous
// request (the message before the last assistant turn) — where fantasy's
// test marks the last two messages. Everything else is byte for byte the
// recording.
func TestAnthropicCacheBreakpointsMatchRecording(t *testing.T) {
	const cassette = "TestAnthropicCommonWithCacheControl/claude-sonnet-4/tool_streaming.yaml"
	m, c, srv := openReplay(t, cassette, "anthropic/claude-sonnet-4-20250514", "")
	req := Request{
		Messages: []Message{
			{Role: RoleSystem, Text: "You are a helpful assistant"},
			{Role: RoleUser, Text: "What's the weather in Florence,Italy?"},
		},
		Tools: []ToolSpec{weatherTool}, ToolChoice: "auto", MaxOutputTokens: 4000,
	}
	parts, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	got0, want0 := srv.Body(0), c.Interactions[0].Request.Body
	if g, w := marks(t, got0), append(marks(t, want0), ".tools[0]"); !reflect.DeepEqual(g, sorted(w)) {
		t.Errorf("turn 1 breakpoints %v, want the recording's and the tools' %v", g, sorted(w))
	}
	var g0 map[string]any
	_ = json.Unmarshal([]byte(got0), &g0)
	delete(g0["tools"].([]any)[0].(map[string]any), "cache_control")
	noToolMark, _ := json.Marshal(g0)
	if !sameJSON(t, string(noToolMark), want0, nil) {
		t.Errorf("turn 1 differs from the recording beyond the tools' breakpoint:\n got %s\nwant %s", got0, want0)
	}

	call := ofType(parts, PartToolCall)[0]
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Text: joined(ofType(parts, PartTextDelta)), ToolCalls: []ToolCall{{ID: call.ToolCallID, Name: call.ToolName, Input: call.Input}}},
		Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: call.ToolCallID, Name: call.ToolName, Output: "40 C"}}})
	if _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	got1, want1 := srv.Body(1), c.Interactions[1].Request.Body
	if !sameJSON(t, got1, want1, []string{"cache_control"}) {
		t.Errorf("turn 2 differs from the recording:\n got %s\nwant %s", got1, want1)
	}
	if g, w := marks(t, want1), []string{".messages[1].content[1]", ".messages[2].content[0]", ".system[0]"}; !reflect.DeepEqual(g, w) {
		t.Fatalf("the recording's breakpoints are %v, not %v", g, w)
	}
	want := []string{".messages[0].content[0]", ".messages[2].content[0]", ".system[0]", ".tools[0]"}
	if g := marks(t, got1); !reflect.DeepEqual(g, want) {
		t.Errorf("turn 2 breakpoints %v, want %v", g, want)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// Through OpenRouter a Claude model gets the same breakpoints, in
// OpenRouter's shape, as fantasy recorded them
// (TestOpenRouterCommonWithAnthropicCache); a model of another vendor gets
// none.
func TestOpenRouterAnthropicCacheMatchesRecording(t *testing.T) {
	const cassette = "TestOpenRouterCommonWithAnthropicCache/anthropic/tool_streaming.yaml"
	m, c, srv := openReplay(t, cassette, "openrouter/anthropic/claude-haiku-4.5", "/api/v1")
	req := Request{
		Messages: []Message{
			{Role: RoleSystem, Text: "You are a helpful assistant"},
			{Role: RoleUser, Text: "What's the weather in Florence,Italy?"},
		},
		Tools: []ToolSpec{weatherTool}, ToolChoice: "auto", MaxOutputTokens: 4000,
	}
	if _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Body(0), c.Interactions[0].Request.Body; !sameJSON(t, got, want, nil) {
		t.Errorf("request differs from the recording:\n got %s\nwant %s", got, want)
	}

	fc, err := toCall(req, "openrouter", "openai/gpt-5.4-nano")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(fc)
	if strings.Contains(string(b), "cache_control") {
		t.Errorf("an OpenAI model through OpenRouter got Anthropic's breakpoints: %s", b)
	}
}

// openEdited is openReplay over a cassette whose responses edit changed.
func openEdited(t *testing.T, cassette, spec, basePath string, edit func(string) string) Model {
	t.Helper()
	c := llmtest.LoadCassette(t, cassette)
	for i := range c.Interactions {
		c.Interactions[i].Response.Body = edit(c.Interactions[i].Response.Body)
	}
	srv := llmtest.NewReplayServer(t, c)
	provider, _, _ := strings.Cut(spec, "/")
	m, err := Open(spec, Config{APIKeys: map[string]string{provider: "k"}, BaseURLs: map[string]string{provider: srv.URL + basePath},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Cache reads and writes are read from recorded streams. The recordings'
// prompts were too short to be cached (Anthropic caches from 1,024 tokens,
// OpenAI from 1,024), so their zero counts are set to what a long prompt
// reports, in the recorded wire shape.
func TestCacheUsageFromRecordedStreams(t *testing.T) {
	hello := Request{Messages: []Message{{Role: RoleSystem, Text: "You are a helpful assistant"}, {Role: RoleUser, Text: "Say hi in Portuguese"}}, MaxOutputTokens: 4000}

	// Anthropic: input_tokens leave both out; message_delta repeats them.
	m := openEdited(t, "TestAnthropicCommonWithCacheControl/claude-sonnet-4/simple_streaming.yaml", "anthropic/claude-sonnet-4-20250514", "",
		func(s string) string {
			return strings.NewReplacer(`"cache_creation_input_tokens":0`, `"cache_creation_input_tokens":1500`,
				`"cache_read_input_tokens":0`, `"cache_read_input_tokens":3000`).Replace(s)
		})
	parts, err := collect(t, m, hello)
	if err != nil {
		t.Fatal(err)
	}
	u := parts[len(parts)-1].Usage
	if u.CacheWriteTokens != 1500 || u.CachedTokens != 3000 || u.InputTokens <= 0 || u.InputTokens > 100 {
		t.Errorf("anthropic usage %+v, want 1,500 written, 3,000 read, the recorded input apart", u)
	}

	// OpenAI: prompt_tokens include the cached ones.
	m = openEdited(t, "TestOpenAICommon/openai-gpt-4o/simple_streaming.yaml", "openai/gpt-4o", "/v1",
		func(s string) string {
			return strings.NewReplacer(`"prompt_tokens":20,`, `"prompt_tokens":2000,`, `"total_tokens":22,`, `"total_tokens":2002,`,
				`"cached_tokens":0`, `"cached_tokens":1920`).Replace(s)
		})
	if parts, err = collect(t, m, hello); err != nil {
		t.Fatal(err)
	}
	u = parts[len(parts)-1].Usage
	if u.CachedTokens != 1920 || u.InputTokens != 80 || u.CacheWriteTokens != 0 {
		t.Errorf("openai usage %+v, want 80 full-price input and 1,920 read from cache", u)
	}
}

// The catalog prices Anthropic's cache writes at 1.25 times the input and
// reads at the cached price.
func TestCostWithCache(t *testing.T) {
	info, ok := Lookup("anthropic/claude-sonnet-4-5")
	if !ok {
		t.Fatal("claude-sonnet-4-5 not in the catalog")
	}
	usd, _ := info.Cost(1_000_000, 1_000_000, 1_000_000, 0)
	if want := 3 + 0.30 + 3.75; usd < want-1e-9 || usd > want+1e-9 {
		t.Errorf("cost %v, want %v", usd, want)
	}
	if o, _ := Lookup("openai/gpt-5"); o.CacheWrite != 0 || !o.Reasoning {
		t.Errorf("gpt-5: %+v", o)
	}
	if o, _ := Lookup("openai/gpt-4o"); o.Reasoning {
		t.Errorf("gpt-4o has no reasoning: %+v", o)
	}
}
