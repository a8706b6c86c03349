package scripted_test

import (
	"errors"
	"net/http"
	"testing"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/openaicompat"
	"github.com/openai/openai-go/v3/option"

	"parley/agentcore/scripted"
)

// The real OpenAI-compatible client must read the scripted wire format as it
// reads OpenAI's.

func model(t *testing.T, s *scripted.Server) fantasy.LanguageModel {
	t.Helper()
	p, err := openaicompat.New(
		openaicompat.WithBaseURL(s.URL()),
		openaicompat.WithAPIKey("test"),
		openaicompat.WithSDKOptions(option.WithMaxRetries(0)),
	)
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.LanguageModel(t.Context(), "scripted")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var weather = fantasy.FunctionTool{
	Name:        "weather",
	Description: "Get the weather",
	InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
}

func call() fantasy.Call {
	return fantasy.Call{
		Prompt: fantasy.Prompt{fantasy.NewUserMessage("What's the weather in Florence?")},
		Tools:  []fantasy.Tool{weather},
	}
}

func stream(t *testing.T, m fantasy.LanguageModel) []fantasy.StreamPart {
	t.Helper()
	seq, err := m.Stream(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	var parts []fantasy.StreamPart
	for p := range seq {
		parts = append(parts, p)
	}
	return parts
}

func TestFantasyStreamsTextAndToolCall(t *testing.T) {
	s := scripted.NewServer()
	defer s.Close()
	const args = `{"city":"Florence, Italy"}`
	s.Push(scripted.Reply{
		Text:      "Let me check the weather.",
		ToolCalls: []scripted.ToolCall{{ID: "call_w", Name: "weather", Args: args}},
		Usage:     scripted.Usage{PromptTokens: 61, CompletionTokens: 16},
	})

	var text, input string
	var deltas int
	var got []fantasy.StreamPart
	for _, p := range stream(t, model(t, s)) {
		switch p.Type {
		case fantasy.StreamPartTypeTextDelta:
			text += p.Delta
		case fantasy.StreamPartTypeToolInputDelta:
			input += p.Delta
			deltas++
		case fantasy.StreamPartTypeToolInputStart, fantasy.StreamPartTypeToolCall, fantasy.StreamPartTypeFinish:
			got = append(got, p)
		case fantasy.StreamPartTypeError:
			t.Fatal(p.Error)
		}
	}
	if text != "Let me check the weather." || input != args || deltas < 5 {
		t.Errorf("text %q, input %q in %d deltas", text, input, deltas)
	}
	if len(got) != 3 {
		t.Fatalf("parts = %+v", got)
	}
	start, tc, finish := got[0], got[1], got[2]
	if start.ID != "call_w" || start.ToolCallName != "weather" {
		t.Errorf("tool input start = %+v", start)
	}
	if tc.ID != "call_w" || tc.ToolCallName != "weather" || tc.ToolCallInput != args {
		t.Errorf("tool call = %+v", tc)
	}
	if finish.FinishReason != fantasy.FinishReasonToolCalls ||
		finish.Usage.InputTokens != 61 || finish.Usage.OutputTokens != 16 || finish.Usage.TotalTokens != 77 {
		t.Errorf("finish = %+v", finish)
	}

	req := s.Requests()[0]
	if req.Model != "scripted" || !req.Stream || req.LastUserText() != "What's the weather in Florence?" ||
		len(req.Tools) != 1 || req.Tools[0].Function.Name != "weather" {
		t.Errorf("request = %+v", req)
	}
}

func TestFantasyStreamsDemoReply(t *testing.T) {
	s := scripted.NewServer()
	defer s.Close()
	s.SetDefault(func(req scripted.Request) scripted.Reply {
		r := scripted.Demo(req)
		r.Delay = 0
		return r
	})
	var text string
	var finish fantasy.StreamPart
	for _, p := range stream(t, model(t, s)) {
		switch p.Type {
		case fantasy.StreamPartTypeTextDelta:
			text += p.Delta
		case fantasy.StreamPartTypeFinish:
			finish = p
		case fantasy.StreamPartTypeError:
			t.Fatal(p.Error)
		}
	}
	want := scripted.Demo(s.Requests()[0]).Text
	if text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
	if finish.FinishReason != fantasy.FinishReasonStop || finish.Usage.OutputTokens == 0 || finish.Usage.InputTokens == 0 {
		t.Errorf("finish = %+v", finish)
	}
}

func TestFantasyGenerate(t *testing.T) {
	s := scripted.NewServer()
	defer s.Close()
	s.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "call_g", Name: "weather", Args: `{"city":"Oslo"}`}}})
	res, err := model(t, s).Generate(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Content.ToolCalls()
	if len(calls) != 1 || calls[0].ToolCallID != "call_g" || calls[0].Input != `{"city":"Oslo"}` ||
		res.FinishReason != fantasy.FinishReasonToolCalls || res.Usage.TotalTokens == 0 {
		t.Errorf("response = %+v", res)
	}
	if s.Requests()[0].Stream {
		t.Error("Generate sent stream: true")
	}
}

func TestFantasySeesInjectedErrors(t *testing.T) {
	tests := []struct {
		name   string
		reply  scripted.Reply
		status int // of the ProviderError, 0 for a stream failure
	}{
		{"rate limited", scripted.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}, 429},
		{"server error", scripted.Reply{Status: http.StatusInternalServerError}, 500},
		{"cut", scripted.Reply{Text: "one two three", CutAfter: 1}, 0},
		{"malformed", scripted.Reply{Text: "one", Malformed: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted.NewServer()
			defer s.Close()
			s.Push(tt.reply)
			var err error
			for _, p := range stream(t, model(t, s)) {
				if p.Type == fantasy.StreamPartTypeFinish {
					t.Fatalf("finished: %+v", p)
				}
				if p.Type == fantasy.StreamPartTypeError {
					err = p.Error
				}
			}
			if err == nil {
				t.Fatal("no error part")
			}
			var pe *fantasy.ProviderError
			if tt.status != 0 && (!errors.As(err, &pe) || pe.StatusCode != tt.status || !pe.IsRetryable()) {
				t.Errorf("err = %v, want a retryable provider error %d", err, tt.status)
			}
		})
	}
}
