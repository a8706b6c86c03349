package agentcore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/llm/llmtest"
)

// The agent loop on real recorded provider streams: each provider's own way
// of streaming tool arguments (OpenAI's tool_calls[].function.arguments,
// Anthropic's input_json_delta, Gemini's whole-call parts) becomes the same
// ordered events — input start, argument deltas, input end, tool-call,
// tool-result — and the second recorded turn answers from the result.
func TestAgentLoopOnRecordedStreams(t *testing.T) {
	cases := []struct {
		name, cassette, spec, basePath string
		minDeltas                      int
	}{
		{"openai", "TestOpenAICommon/openai-gpt-4o/tool_streaming.yaml", "openai/gpt-4o", "/v1", 5},
		{"anthropic", "TestAnthropicCommon/claude-sonnet-4/tool_streaming.yaml", "anthropic/claude-sonnet-4-20250514", "", 2},
		{"google", "TestGoogleCommon/gemini-2.5-flash/tool_streaming.yaml", "google/gemini-2.5-flash", "", 1},
	}
	type weatherIn struct {
		Location string `json:"location" desc:"the city"`
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewReplayServer(t, llmtest.LoadCassette(t, tc.cassette))
			provider, _, _ := strings.Cut(tc.spec, "/")
			cfg := llm.Config{
				APIKeys:  map[string]string{provider: "test-key"},
				BaseURLs: map[string]string{provider: srv.URL + tc.basePath},
				Getenv:   func(string) string { return "" },
			}
			var got string
			weather := agentcore.NewTool("weather", "Get weather information for a location",
				func(ctx context.Context, in weatherIn, tc *agentcore.ToolContext) (string, error) {
					got = in.Location
					return "40 C", nil
				})
			a := &agentcore.Agent{
				ID: "a", Model: tc.spec, Instructions: agentcore.Text("You are a helpful assistant"),
				Tools:  map[string]*agentcore.Tool{"weather": weather},
				Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
				Log:    slog.New(slog.DiscardHandler),
			}
			events := collectRun(a, agentcore.StreamOptions{}, "What's the weather in Florence,Italy?")
			seq := types(events)
			want := "tool-call-input-streaming-start tool-call-delta tool-call-input-streaming-end tool-call tool-result step-finish step-start"
			if !strings.Contains(seq, want) || !strings.HasSuffix(seq, "finish") {
				t.Fatalf("event order: %s", seq)
			}
			deltas := find(events, agentcore.EventToolCallDelta)
			var args strings.Builder
			for _, d := range deltas {
				args.WriteString(d.Text)
			}
			call := find(events, agentcore.EventToolCall)[0]
			if len(deltas) < tc.minDeltas || !strings.Contains(args.String(), "Florence") || !strings.Contains(string(call.Args), "Florence") {
				t.Fatalf("%d deltas adding up to %q; call args %s", len(deltas), args.String(), call.Args)
			}
			if !strings.Contains(got, "Florence") {
				t.Fatalf("tool ran with location %q", got)
			}
			var answer strings.Builder
			for _, e := range find(events, agentcore.EventTextDelta) {
				answer.WriteString(e.Text)
			}
			if !strings.Contains(answer.String(), "40") {
				t.Fatalf("answer %q does not use the tool result", answer.String())
			}
		})
	}
}

// web_search runs at the provider: the agent shows the call, its result and
// the sources, runs nothing itself, and makes no second model call.
func TestAgentProviderExecutedWebSearch(t *testing.T) {
	for _, tc := range []struct{ cassette, spec, basePath string }{
		{"TestOpenAIWebSearch/stream.yaml", "openai/gpt-4.1", "/v1"},
		{"TestAnthropicWebSearch/stream.yaml", "anthropic/claude-sonnet-4-20250514", ""},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			srv := llmtest.NewReplayServer(t, llmtest.LoadCassette(t, tc.cassette))
			provider, _, _ := strings.Cut(tc.spec, "/")
			cfg := llm.Config{APIKeys: map[string]string{provider: "k"}, BaseURLs: map[string]string{provider: srv.URL + tc.basePath}, Getenv: func(string) string { return "" }}
			a := &agentcore.Agent{ID: "a", Model: tc.spec, Log: slog.New(slog.DiscardHandler),
				Tools:  map[string]*agentcore.Tool{"web_search": {ID: "web_search", ProviderDefined: true}},
				Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }}
			events := collectRun(a, agentcore.StreamOptions{}, "What is the weather in San Francisco?")
			if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
				t.Fatalf("run ended with %+v (%s)", last, types(events))
			}
			calls, results := find(events, agentcore.EventToolCall), find(events, agentcore.EventToolResult)
			if len(calls) == 0 || len(results) == 0 || !calls[0].ProviderExecuted || !results[0].ProviderExecuted {
				t.Fatalf("provider-executed call/result missing: %s", types(events))
			}
			if n := len(find(events, agentcore.EventStepStart)); n != 1 {
				t.Fatalf("%d steps: the search must not trigger a second model call", n)
			}
			if len(find(events, agentcore.EventTextDelta)) == 0 {
				t.Fatal("no answer text")
			}
		})
	}
}
