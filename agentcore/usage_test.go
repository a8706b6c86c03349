package agentcore_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/llm/llmtest"
	"parley/storage"
)

// wireUsage is what a provider reported on the wire, read straight from the
// recorded response bodies (independently of fantasy and of Parley's
// adapters): prompt tokens (cached included) and output tokens summed over
// the exchange's calls, and the last call's prompt + output.
type wireUsage struct {
	prompt, output, lastCall int64
}

func recordedUsage(t *testing.T, c llmtest.Cassette) wireUsage {
	t.Helper()
	var w wireUsage
	for _, in := range c.Interactions {
		var prompt, output int64
		for line := range strings.Lines(in.Response.Body) {
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
			if !ok {
				continue
			}
			var chunk struct {
				Type  string `json:"type"`
				Usage *struct {
					PromptTokens     int64 `json:"prompt_tokens"`
					CompletionTokens int64 `json:"completion_tokens"`
					InputTokens      int64 `json:"input_tokens"`
					CacheRead        int64 `json:"cache_read_input_tokens"`
					OutputTokens     int64 `json:"output_tokens"`
				} `json:"usage"`
				Message *struct {
					Usage struct {
						InputTokens int64 `json:"input_tokens"`
						CacheRead   int64 `json:"cache_read_input_tokens"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &chunk) != nil {
				continue
			}
			switch {
			case chunk.Type == "message_start" && chunk.Message != nil: // Anthropic: the prompt
				prompt = chunk.Message.Usage.InputTokens + chunk.Message.Usage.CacheRead
			case chunk.Type == "message_delta" && chunk.Usage != nil: // Anthropic: the output so far
				output = chunk.Usage.OutputTokens
			case chunk.Usage != nil && chunk.Usage.PromptTokens > 0: // OpenAI: one usage chunk at the end
				prompt, output = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
			}
		}
		if prompt == 0 || output == 0 {
			t.Fatalf("no usage in recorded response to %s", in.Request.URL)
		}
		w.prompt += prompt
		w.output += output
		w.lastCall = prompt + output
	}
	return w
}

// Usage on the real recorded provider streams: a reply of two model calls
// (a tool call, then the answer) records the sum of both calls as the
// providers reported them, and the context fill of the last; the thread's
// total sums replies per model, across providers.
func TestUsageOnRecordedStreams(t *testing.T) {
	cases := []struct{ cassette, spec, basePath string }{
		{"TestOpenAICommon/openai-gpt-4o/tool_streaming.yaml", "openai/gpt-4o", "/v1"},
		{"TestAnthropicCommon/claude-sonnet-4/tool_streaming.yaml", "anthropic/claude-sonnet-4-20250514", ""},
	}
	cfg := llm.Config{APIKeys: map[string]string{}, BaseURLs: map[string]string{}, Getenv: func(string) string { return "" }}
	want := map[string]wireUsage{}
	for _, tc := range cases {
		c := llmtest.LoadCassette(t, tc.cassette)
		srv := llmtest.NewReplayServer(t, c)
		provider, _, _ := strings.Cut(tc.spec, "/")
		cfg.APIKeys[provider] = "test-key"
		cfg.BaseURLs[provider] = srv.URL + tc.basePath
		want[tc.spec] = recordedUsage(t, c)
	}
	type weatherIn struct {
		Location string `json:"location" desc:"the city"`
	}
	weather := agentcore.NewTool("weather", "Get weather information for a location",
		func(ctx context.Context, in weatherIn, tc *agentcore.ToolContext) (string, error) { return "40 C", nil })
	agent := &agentcore.Agent{
		ID: "a", Model: cases[0].spec, Instructions: agentcore.Text("You are a helpful assistant"),
		Tools:  map[string]*agentcore.Tool{"weather": weather},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
		Log:    slog.New(slog.DiscardHandler),
	}
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	rt := agentcore.NewRuntime(db, slog.New(slog.DiscardHandler), agent)
	t.Cleanup(func() { rt.Close(); db.Close() })
	th := thread(t, rt)

	for _, tc := range cases {
		sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Model: tc.spec,
			Text: "What's the weather in Florence,Italy?"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		err = rt.Wait(ctx, th.ID)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		m, err := db.GetMessage(t.Context(), sent.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != agentcore.StatusComplete {
			t.Fatalf("%s: reply %s: %v", tc.spec, m.Status, m.Content.Metadata["error"])
		}
		u, ok := agentcore.MessageUsage(m.Content)
		w := want[tc.spec]
		if !ok || u.InputTokens+u.CachedTokens != w.prompt || u.OutputTokens != w.output {
			t.Errorf("%s: reply recorded %+v (ok %v); the provider reported %d prompt, %d output tokens", tc.spec, u, ok, w.prompt, w.output)
		}
		if n, _ := agentcore.MessageContextTokens(m.Content); n != w.lastCall {
			t.Errorf("%s: context %d, want the last call's %d", tc.spec, n, w.lastCall)
		}
		run, err := db.GetRun(t.Context(), sent.Run.ID)
		if err != nil || run.Usage != u {
			t.Errorf("%s: run usage %+v, reply %+v (%v)", tc.spec, run.Usage, u, err)
		}
	}

	got, err := db.ThreadUsage(t.Context(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Replies != 2 || len(got.ByModel) != 2 {
		t.Fatalf("thread usage %+v", got)
	}
	var prompt, output int64
	for _, tc := range cases {
		u := got.ByModel[tc.spec]
		w := want[tc.spec]
		if u.InputTokens+u.CachedTokens != w.prompt || u.OutputTokens != w.output {
			t.Errorf("thread, %s: %+v, want %d prompt, %d output", tc.spec, u, w.prompt, w.output)
		}
		prompt, output = prompt+w.prompt, output+w.output
	}
	if tot := got.Total(); tot.InputTokens+tot.CachedTokens != prompt || tot.OutputTokens != output {
		t.Errorf("thread total %+v, want %d prompt, %d output", tot, prompt, output)
	}
	last := cases[len(cases)-1].spec
	if got.ContextTokens != want[last].lastCall || got.ContextModel != last {
		t.Errorf("thread context %d on %s, want %d on %s", got.ContextTokens, got.ContextModel, want[last].lastCall, last)
	}
}
