package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"charm.land/fantasy"
)

// sentBody is the JSON body a request to spec sends; the server refuses it
// (the answer is not what these tests look at).
func sentBody(t *testing.T, spec string, req Request) map[string]any {
	t.Helper()
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"refused by the test","type":"invalid_request_error","code":400,"status":"INVALID_ARGUMENT"}}`)
	}))
	defer srv.Close()
	provider, _, _ := strings.Cut(spec, "/")
	m, err := Open(spec, Config{APIKeys: map[string]string{provider: "k"}, BaseURLs: map[string]string{provider: srv.URL},
		Getenv: func(string) string { return "" }, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if req.Messages == nil {
		req.Messages = []Message{{Role: RoleSystem, Text: "Be brief."}, {Role: RoleUser, Text: "Hi"}}
	}
	for range m.Stream(t.Context(), req) {
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: request body %q: %v", spec, body, err)
	}
	return v
}

// at reads a path of keys from a decoded body; nil when absent.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// Each thinking level reaches each provider as its own setting.
func TestThinkingLevelsPerProvider(t *testing.T) {
	cases := []struct {
		spec  string
		level Thinking
		path  []string
		want  any // nil: the key is absent
	}{
		// OpenAI: reasoning_effort; off is minimal on GPT-5, nothing on o-series.
		{"openai/gpt-5", ThinkingDefault, []string{"reasoning_effort"}, nil},
		{"openai/gpt-5", ThinkingOff, []string{"reasoning_effort"}, "minimal"},
		{"openai/gpt-5", ThinkingLow, []string{"reasoning_effort"}, "low"},
		{"openai/gpt-5", ThinkingMedium, []string{"reasoning_effort"}, "medium"},
		{"openai/gpt-5", ThinkingHigh, []string{"reasoning_effort"}, "high"},
		{"openai/o3", ThinkingOff, []string{"reasoning_effort"}, nil},
		// Anthropic: extended thinking with a budget, max_tokens above it.
		{"anthropic/claude-sonnet-4-5", ThinkingDefault, []string{"thinking"}, nil},
		{"anthropic/claude-sonnet-4-5", ThinkingOff, []string{"thinking"}, nil},
		{"anthropic/claude-sonnet-4-5", ThinkingLow, []string{"thinking"}, map[string]any{"type": "enabled", "budget_tokens": 2048.0}},
		{"anthropic/claude-sonnet-4-5", ThinkingMedium, []string{"thinking"}, map[string]any{"type": "enabled", "budget_tokens": 8192.0}},
		{"anthropic/claude-sonnet-4-5", ThinkingHigh, []string{"thinking"}, map[string]any{"type": "enabled", "budget_tokens": 24576.0}},
		{"anthropic/claude-sonnet-4-5", ThinkingHigh, []string{"max_tokens"}, 24576.0 + 4096},
		// Gemini 2.5: a budget, thoughts included; Gemini 3: a level.
		{"google/gemini-2.5-flash", ThinkingDefault, []string{"generationConfig", "thinkingConfig"}, nil},
		{"google/gemini-2.5-flash", ThinkingOff, []string{"generationConfig", "thinkingConfig"}, nil},
		{"google/gemini-2.5-flash", ThinkingLow, []string{"generationConfig", "thinkingConfig"}, map[string]any{"includeThoughts": true, "thinkingBudget": 1024.0}},
		{"google/gemini-2.5-flash", ThinkingMedium, []string{"generationConfig", "thinkingConfig"}, map[string]any{"includeThoughts": true, "thinkingBudget": 8192.0}},
		{"google/gemini-2.5-flash", ThinkingHigh, []string{"generationConfig", "thinkingConfig"}, map[string]any{"includeThoughts": true, "thinkingBudget": 24576.0}},
		{"google/gemini-3-pro-preview", ThinkingLow, []string{"generationConfig", "thinkingConfig"}, map[string]any{"includeThoughts": true, "thinkingLevel": "LOW"}},
		{"google/gemini-3-pro-preview", ThinkingHigh, []string{"generationConfig", "thinkingConfig"}, map[string]any{"includeThoughts": true, "thinkingLevel": "HIGH"}},
		// OpenRouter: its reasoning object.
		{"openrouter/openai/gpt-5", ThinkingMedium, []string{"reasoning"}, map[string]any{"effort": "medium"}},
		{"openrouter/openai/gpt-5", ThinkingOff, []string{"reasoning"}, map[string]any{"enabled": false}},
	}
	for _, tc := range cases {
		t.Run(tc.spec+"/"+string(tc.level), func(t *testing.T) {
			body := sentBody(t, tc.spec, Request{Thinking: tc.level})
			if got := at(body, tc.path...); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %#v, want %#v", strings.Join(tc.path, "."), got, tc.want)
			}
		})
	}
}

// The caller's provider options win over the thinking level, and TopP
// goes out as top_p.
func TestProviderOptionsWin(t *testing.T) {
	body := sentBody(t, "openai/gpt-5", Request{Thinking: ThinkingHigh, CacheKey: "t1",
		Options: ProviderOptions{OpenAI: &OpenAIOptions{ReasoningEffort: "low", PromptCacheKey: "mine"}}})
	if body["reasoning_effort"] != "low" || body["prompt_cache_key"] != "mine" {
		t.Errorf("reasoning_effort %v, prompt_cache_key %v", body["reasoning_effort"], body["prompt_cache_key"])
	}
	topP := 0.5
	body = sentBody(t, "anthropic/claude-sonnet-4-5", Request{Thinking: ThinkingLow, TopP: &topP,
		Options: ProviderOptions{Anthropic: &AnthropicOptions{ThinkingBudget: 5000, NoCache: true}}})
	if got := at(body, "thinking", "budget_tokens"); got != 5000.0 {
		t.Errorf("budget %v", got)
	}
	if b, _ := json.Marshal(body); strings.Contains(string(b), "cache_control") {
		t.Errorf("cacheControl off still sent breakpoints: %s", b)
	}
	body = sentBody(t, "anthropic/claude-sonnet-4-5", Request{TopP: &topP})
	if body["top_p"] != 0.5 {
		t.Errorf("top_p %v", body["top_p"])
	}
	budget := int64(2000)
	body = sentBody(t, "google/gemini-2.5-flash", Request{Thinking: ThinkingHigh,
		Options: ProviderOptions{Google: &GoogleOptions{ThinkingBudget: &budget}}})
	if got := at(body, "generationConfig", "thinkingConfig", "thinkingBudget"); got != 2000.0 {
		t.Errorf("thinkingBudget %v", got)
	}
}

// With thinking on, Claude's signed thinking before a tool call goes back
// at the start of the assistant message that made the call, as Anthropic
// requires.
func TestAnthropicThinkingGoesBackWithToolCall(t *testing.T) {
	c := converter{anthropic: true}
	for _, fp := range anthropicThinkingStream() {
		for _, p := range c.parts(fp) {
			if p.Type == PartToolCall {
				body := sentBody(t, "anthropic/claude-sonnet-4-5", Request{Thinking: ThinkingLow, Messages: []Message{
					{Role: RoleUser, Text: "Weather?"},
					{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: p.ToolCallID, Name: p.ToolName, Input: p.Input, Signature: p.Signature}}},
					{Role: RoleTool, ToolResults: []ToolResult{{CallID: p.ToolCallID, Name: p.ToolName, Output: "40 C"}}},
				}})
				first := at(body, "messages").([]any)[1].(map[string]any)["content"].([]any)[0].(map[string]any)
				if first["type"] != "thinking" || first["thinking"] != "Let me check." || first["signature"] != "sig-1" {
					t.Errorf("assistant message starts with %v", first)
				}
				return
			}
		}
	}
	t.Fatal("no tool call")
}

// anthropicThinkingStream is what streamMessages yields for a thinking
// block followed by a tool call.
func anthropicThinkingStream() []fantasy.StreamPart {
	return []fantasy.StreamPart{
		{Type: fantasy.StreamPartTypeReasoningStart, ID: "0"},
		{Type: fantasy.StreamPartTypeReasoningDelta, ID: "0", Delta: "Let me "},
		{Type: fantasy.StreamPartTypeReasoningDelta, ID: "0", Delta: "check."},
		{Type: fantasy.StreamPartTypeReasoningEnd, ID: "0", ProviderMetadata: anthropicReasoning("sig-1", "")},
		{Type: fantasy.StreamPartTypeToolInputStart, ID: "toolu_1", ToolCallName: "weather"},
		{Type: fantasy.StreamPartTypeToolInputEnd, ID: "toolu_1"},
		{Type: fantasy.StreamPartTypeToolCall, ID: "toolu_1", ToolCallName: "weather", ToolCallInput: `{"location":"Florence"}`},
	}
}
