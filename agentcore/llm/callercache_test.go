package llm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A caller's own breakpoints (CacheBreakpoint, from Mastra's
// providerOptions.anthropic.cacheControl on a message or an instruction)
// land on their blocks of the Anthropic request, come before Parley's, and
// the request never carries more than four: Parley's fill what is left.
func TestCallerCacheBreakpoints(t *testing.T) {
	const cassette = "TestAnthropicCommonWithCacheControl/claude-sonnet-4/tool_streaming.yaml"
	sys := func(text string, mark bool) Message {
		return Message{Role: RoleSystem, Text: text, CacheBreakpoint: mark}
	}
	user := func(text string, mark bool) Message {
		return Message{Role: RoleUser, Text: text, CacheBreakpoint: mark}
	}
	for _, c := range []struct {
		name    string
		msgs    []Message
		noCache bool
		want    []string
	}{
		{"none: Parley's own", []Message{sys("A", false), sys("B", false), user("Q", false)},
			false, []string{".messages[0].content[0]", ".system[1]", ".tools[0]"}},
		{"the first instruction and the question", []Message{sys("A", true), sys("B", false), user("Q", true)},
			false, []string{".messages[0].content[0]", ".system[0]", ".system[1]", ".tools[0]"}},
		{"the first instruction: Parley's fill up to four", []Message{sys("A", true), sys("B", false), user("Q", false)},
			false, []string{".messages[0].content[0]", ".system[0]", ".system[1]", ".tools[0]"}},
		{"three of the caller's leave one", []Message{sys("A", true), user("Q1", true), Message{Role: RoleAssistant, Text: "R1", CacheBreakpoint: true}, user("Q2", false)},
			false, []string{".messages[0].content[0]", ".messages[1].content[0]", ".system[0]", ".tools[0]"}},
		{"six of the caller's: the newest four, none of Parley's", []Message{sys("A", true), sys("B", true), user("Q1", true),
			{Role: RoleAssistant, Text: "R1", CacheBreakpoint: true}, user("Q2", true), {Role: RoleAssistant, Text: "R2", CacheBreakpoint: true}, user("Q3", false)},
			false, []string{".messages[0].content[0]", ".messages[1].content[0]", ".messages[2].content[0]", ".messages[3].content[0]"}},
		{"cacheControl false for the call keeps the caller's own", []Message{sys("A", true), sys("B", false), user("Q", false)},
			true, []string{".system[0]"}},
		{"an empty assistant message's mark goes to the message before it", []Message{sys("A", false), user("Q1", false),
			{Role: RoleAssistant, CacheBreakpoint: true}, user("Q2", false)},
			true, []string{".messages[0].content[0]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, srv := openReplay(t, cassette, "anthropic/claude-sonnet-4-20250514", "")
			req := Request{Messages: c.msgs, Tools: []ToolSpec{weatherTool}, ToolChoice: "auto", MaxOutputTokens: 4000}
			if c.noCache {
				req.Options.Anthropic = &AnthropicOptions{NoCache: true}
			}
			if _, err := collect(t, m, req); err != nil {
				t.Fatal(err)
			}
			got := marks(t, srv.Body(0))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("breakpoints %v, want %v\n%s", got, c.want, srv.Body(0))
			}
			if len(got) > maxCacheBreakpoints {
				t.Errorf("%d breakpoints, Anthropic allows %d", len(got), maxCacheBreakpoints)
			}
		})
	}

	// The first instruction's block is the one marked, byte for byte as
	// Anthropic's API takes a cached system block.
	m, _, srv := openReplay(t, cassette, "anthropic/claude-sonnet-4-20250514", "")
	if _, err := collect(t, m, Request{Messages: []Message{sys("Stable rules.", true), sys("Today's date.", false), user("Q", false)},
		Tools: []ToolSpec{weatherTool}, MaxOutputTokens: 4000}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System []json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal([]byte(srv.Body(0)), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 2 || !sameJSON(t, string(body.System[0]), `{"type":"text","text":"Stable rules.","cache_control":{"type":"ephemeral"}}`, nil) {
		t.Errorf("system blocks %s", body.System)
	}

	// Other providers are not sent Anthropic's marks.
	for _, spec := range []string{"openai/gpt-4o", "google/gemini-2.5-flash", "openrouter/openai/gpt-5.4-nano"} {
		provider, modelID, _ := strings.Cut(spec, "/")
		fc, err := toCall(Request{Messages: []Message{sys("A", true), user("Q", true)}}, provider, modelID)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(fc); strings.Contains(string(b), "cache_control") || strings.Contains(string(b), "ephemeral") {
			t.Errorf("%s got Anthropic's breakpoints: %s", spec, b)
		}
	}
}

// Across the six steps of a tool-using run whose question the caller
// marked, the request never holds more than four breakpoints, and the
// caller's stays on the question.
func TestCallerCacheBreakpointsAcrossSteps(t *testing.T) {
	req := Request{Messages: []Message{{Role: RoleSystem, Text: "A", CacheBreakpoint: true}, {Role: RoleUser, Text: "Q", CacheBreakpoint: true}},
		Tools: []ToolSpec{weatherTool}}
	for step := range 6 {
		fc, err := toCall(req, "anthropic", "claude-sonnet-4-5")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tool := range fc.Tools {
			if b, _ := json.Marshal(tool); strings.Contains(string(b), "ephemeral") {
				n++
			}
		}
		for i, m := range fc.Prompt {
			if m.ProviderOptions != nil {
				n++
			}
			if (i == 0 || i == 1) && m.ProviderOptions == nil {
				t.Errorf("step %d: the caller's mark on message %d is gone", step, i)
			}
		}
		if n > maxCacheBreakpoints {
			t.Errorf("step %d: %d breakpoints", step, n)
		}
		id := "call_" + string(rune('a'+step))
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "weather", Input: `{"location":"Oslo"}`}}},
			Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: id, Name: "weather", Output: "12 C"}}})
	}
}
