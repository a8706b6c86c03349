package scripted

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireChunk is what a client decodes from one SSE data line.
type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// result is a stream reassembled by a client.
type result struct {
	chunks    []wireChunk
	text      string
	calls     []ToolCall
	argPieces int
	finish    string
	usage     *usage
	done      bool // saw data: [DONE]
	arrivals  []time.Time
}

func post(ctx context.Context, t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

const streamBody = `{"model":"gpt-test","messages":[{"role":"user","content":"hi there"}],"stream":true,"stream_options":{"include_usage":true}}`

// read decodes an SSE body as a client would; it returns what it got before
// any error.
func read(body io.Reader) (result, error) {
	var r result
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return r, fmt.Errorf("not a data line: %q", line)
		}
		if data == "[DONE]" {
			r.done = true
			continue
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return r, fmt.Errorf("chunk %q: %w", data, err)
		}
		r.chunks = append(r.chunks, c)
		r.arrivals = append(r.arrivals, time.Now())
		if c.Usage != nil {
			r.usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				r.text += *ch.Delta.Content
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == len(r.calls) {
					r.calls = append(r.calls, ToolCall{})
				}
				call := &r.calls[tc.Index]
				call.ID += tc.ID
				call.Name += tc.Function.Name
				call.Args += tc.Function.Arguments
				if tc.Function.Arguments != "" {
					r.argPieces++
				}
			}
			if ch.FinishReason != nil {
				r.finish = *ch.FinishReason
			}
		}
	}
	return r, sc.Err()
}

func TestStreamText(t *testing.T) {
	const text = "Hello, world! Here's a *markdown* reply:\n\n```go\nfmt.Println(\"hi\")\n```\n  "
	tests := []struct {
		name   string
		reply  Reply
		want   string
		chunks int // content chunks
	}{
		{"tokens of one", Reply{Text: text}, text, len(split(text))},
		{"chunk size 3", Reply{Text: text, ChunkSize: 3}, text, (len(split(text)) + 2) / 3},
		{"explicit tokens", Reply{Tokens: []string{"a", "b c", " d"}}, "ab c d", 3},
		{"empty", Reply{}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			s.Push(tt.reply)
			res := post(t.Context(), t, s, streamBody)
			if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			r, err := read(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if r.text != tt.want {
				t.Errorf("text = %q, want %q", r.text, tt.want)
			}
			// content chunks, then finish, then usage
			if got := len(r.chunks) - 2; got != tt.chunks {
				t.Errorf("%d content chunks, want %d", got, tt.chunks)
			}
			first := r.chunks[0]
			if first.Object != "chat.completion.chunk" || !strings.HasPrefix(first.ID, "chatcmpl-") ||
				first.Model != "gpt-test" || first.Choices[0].Delta.Role != "assistant" {
				t.Errorf("first chunk = %+v", first)
			}
			for _, c := range r.chunks {
				if c.ID != first.ID {
					t.Errorf("chunk id %q, want %q", c.ID, first.ID)
				}
			}
			if r.finish != "stop" || !r.done {
				t.Errorf("finish = %q, done = %v", r.finish, r.done)
			}
			last := r.chunks[len(r.chunks)-1]
			if len(last.Choices) != 0 || r.usage == nil || r.usage.PromptTokens == 0 ||
				r.usage.TotalTokens != r.usage.PromptTokens+r.usage.CompletionTokens {
				t.Errorf("usage chunk = %+v, usage %+v", last, r.usage)
			}
		})
	}
}

func TestStreamToolCalls(t *testing.T) {
	calls := []ToolCall{
		{ID: "call_1", Name: "write_file", Args: `{"path":"src/main.go","content":"package main\n\nfunc main() {}\n"}`},
		{Name: "ask_user", Args: `{"question":"Ça va? 🙂 Which one?","options":["a","b"]}`},
	}
	for _, size := range []int{0, 1, 7} {
		t.Run(fmt.Sprint("chunk size ", size), func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			s.Push(Reply{Text: "Let me do that.", ToolCalls: calls, ChunkSize: size})
			r, err := read(post(t.Context(), t, s, streamBody).Body)
			if err != nil {
				t.Fatal(err)
			}
			if r.text != "Let me do that." || r.finish != "tool_calls" || !r.done {
				t.Errorf("text %q, finish %q, done %v", r.text, r.finish, r.done)
			}
			if len(r.calls) != 2 {
				t.Fatalf("calls = %+v", r.calls)
			}
			if r.calls[0] != calls[0] {
				t.Errorf("call 0 = %+v, want %+v", r.calls[0], calls[0])
			}
			if c := r.calls[1]; c.Name != calls[1].Name || c.Args != calls[1].Args || c.ID == "" {
				t.Errorf("call 1 = %+v", c)
			}
			if r.argPieces < 10 {
				t.Errorf("arguments came in %d pieces, want many", r.argPieces)
			}
			for _, c := range r.calls {
				if !json.Valid([]byte(c.Args)) {
					t.Errorf("args %q are not JSON", c.Args)
				}
			}
		})
	}
}

func TestDelayStreamsChunksSeparately(t *testing.T) {
	const delay = 40 * time.Millisecond
	s := NewServer()
	defer s.Close()
	var mu sync.Mutex
	var written []time.Time
	s.Push(Reply{Text: "one two three four five", Delay: delay, OnChunk: func(i int, tok string, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if i != len(written) {
			t.Errorf("OnChunk index %d, want %d", i, len(written))
		}
		written = append(written, at)
	}})
	start := time.Now()
	r, err := read(post(t.Context(), t, s, streamBody).Body)
	if err != nil {
		t.Fatal(err)
	}
	if r.text != "one two three four five" {
		t.Errorf("text = %q", r.text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(written) != 5 {
		t.Fatalf("OnChunk called %d times, want 5", len(written))
	}
	for i := 1; i < len(written); i++ {
		if gap := written[i].Sub(written[i-1]); gap < delay {
			t.Errorf("chunk %d written %v after the previous, want >= %v", i, gap, delay)
		}
	}
	// The client holds the first chunk while the rest are still to come.
	if first, last := r.arrivals[0], r.arrivals[4]; last.Sub(first) < delay {
		t.Errorf("first chunk arrived %v after start, last %v: not streamed", first.Sub(start), last.Sub(start))
	}
}

func TestErrorStatus(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Push(
		Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}},
		Reply{Status: http.StatusInternalServerError, ErrorBody: `{"error":{"message":"boom"}}`},
	)
	res := post(t.Context(), t, s, streamBody)
	var body struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" || body.Error.Message != "Too Many Requests" {
		t.Errorf("got %d, Retry-After %q, message %q", res.StatusCode, res.Header.Get("Retry-After"), body.Error.Message)
	}
	res = post(t.Context(), t, s, streamBody)
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 500 || string(b) != `{"error":{"message":"boom"}}` {
		t.Errorf("got %d %s", res.StatusCode, b)
	}
}

func TestCutAfter(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream ", stream), func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			s.Push(Reply{Text: "one two three four", CutAfter: 2})
			body := strings.Replace(streamBody, `"stream":true`, fmt.Sprintf(`"stream":%v`, stream), 1)
			req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/chat/completions", strings.NewReader(body))
			res, err := http.DefaultClient.Do(req)
			if !stream {
				if err == nil {
					res.Body.Close()
					t.Fatal("no error from a cut connection")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			r, err := read(res.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("err = %v, want unexpected EOF", err)
			}
			if r.text != "one two" || r.done {
				t.Errorf("text %q, done %v", r.text, r.done)
			}
		})
	}
}

func TestStallAfter(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Push(Reply{Text: "one two three", StallAfter: 1})
	ctx, cancel := context.WithCancel(t.Context())
	res := post(ctx, t, s, streamBody)
	got := make(chan string)
	go func() {
		r, _ := read(res.Body)
		got <- r.text
	}()
	select {
	case text := <-got:
		t.Fatalf("stream ended with %q instead of stalling", text)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if text := <-got; text != "one" {
		t.Errorf("text = %q, want %q", text, "one")
	}

	// Close ends a stall too.
	s.Push(Reply{StallAfter: 1})
	res = post(t.Context(), t, s, streamBody)
	go s.Close()
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Error("stalled stream ended cleanly after Close")
	}
}

func TestMalformed(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Push(Reply{Text: "half", Malformed: true}, Reply{Text: "x", Malformed: true})
	r, err := read(post(t.Context(), t, s, streamBody).Body)
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) || r.text != "half" {
		t.Errorf("err = %v, text %q; want a JSON syntax error after the text", err, r.text)
	}
	b, _ := io.ReadAll(post(t.Context(), t, s, `{"messages":[]}`).Body)
	if json.Valid(b) {
		t.Errorf("non-streaming malformed body is valid JSON: %s", b)
	}
}

func TestNonStreaming(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Push(
		Reply{Text: "Hello there.", Usage: Usage{PromptTokens: 11, CompletionTokens: 3}},
		Reply{ToolCalls: []ToolCall{{ID: "call_9", Name: "ls", Args: `{"dir":"."}`}}},
	)
	var got struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string     `json:"role"`
				Content   *string    `json:"content"`
				ToolCalls []ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	res := post(t.Context(), t, s, body)
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if got.Object != "chat.completion" || c.Message.Role != "assistant" || *c.Message.Content != "Hello there." ||
		c.FinishReason != "stop" || got.Usage != (usage{11, 3, 14}) {
		t.Errorf("got %+v", got)
	}
	got.Choices = nil
	if err := json.NewDecoder(post(t.Context(), t, s, body).Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	c = got.Choices[0]
	if c.Message.Content != nil || c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0] != (ToolCall{"call_9", "ls", `{"dir":"."}`}) {
		t.Errorf("got %+v", got)
	}
}

func TestPushDefaultRequests(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Push(Reply{Text: "first"}, Reply{Text: "second"})
	body := `{"model":"demo","stream":true,"messages":[
		{"role":"system","content":"be nice"},
		{"role":"user","content":[{"type":"text","text":"look "},{"type":"image_url","image_url":{"url":"data:,"}},{"type":"text","text":"here"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"a.txt"}],
		"tools":[{"type":"function","function":{"name":"ls","description":"List files","parameters":{"type":"object"}}}]}`
	for _, want := range []string{"first", "second"} {
		if r, _ := read(post(t.Context(), t, s, body).Body); r.text != want {
			t.Errorf("text = %q, want %q", r.text, want)
		}
	}
	if res := post(t.Context(), t, s, body); res.StatusCode != 500 {
		t.Errorf("empty queue without default: status %d, want 500", res.StatusCode)
	}
	s.SetDefault(func(req Request) Reply { return Reply{Text: "echo: " + req.LastUserText()} })
	if r, _ := read(post(t.Context(), t, s, body).Body); r.text != "echo: look here" {
		t.Errorf("default reply = %q", r.text)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	req := reqs[3]
	if req.Model != "demo" || !req.Stream || len(req.Messages) != 4 || !json.Valid(req.Body) {
		t.Fatalf("request = %+v", req)
	}
	if m := req.Messages[1]; m.Content != "look here" || len(m.Parts) != 3 || m.Parts[1].Type != "image_url" {
		t.Errorf("user message = %+v", m)
	}
	if m := req.Messages[2]; m.Content != "" || m.ToolCalls[0] != (ToolCall{"c1", "ls", "{}"}) {
		t.Errorf("assistant message = %+v", m)
	}
	if m := req.Messages[3]; m.Role != "tool" || m.ToolCallID != "c1" || m.Content != "a.txt" {
		t.Errorf("tool message = %+v", m)
	}
	if f := req.Tools[0].Function; f.Name != "ls" || f.Description != "List files" || string(f.Parameters) != `{"type":"object"}` {
		t.Errorf("tool = %+v", f)
	}
}

func TestBadRequest(t *testing.T) {
	s := NewServer()
	defer s.Close()
	if res := post(t.Context(), t, s, `{"messages":[{"content":3}]}`); res.StatusCode != 400 {
		t.Errorf("status %d, want 400", res.StatusCode)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests recorded, want 0", n)
	}
}

func TestModels(t *testing.T) {
	s := NewServer()
	defer s.Close()
	res, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "scripted" {
		t.Errorf("models = %+v, %v", list, err)
	}
}

func TestConcurrentRequests(t *testing.T) {
	const n = 16
	s := NewServer()
	defer s.Close()
	s.SetDefault(func(req Request) Reply { return Reply{Text: "re: " + req.LastUserText(), Delay: time.Millisecond} })
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				s.Push(Reply{Text: "pushed"})
			}
			msg := fmt.Sprint("m", i)
			body := `{"stream":true,"messages":[{"role":"user","content":"` + msg + `"}]}`
			r, err := read(post(t.Context(), t, s, body).Body)
			if err != nil || (r.text != "pushed" && r.text != "re: "+msg) {
				t.Errorf("request %d: %q, %v", i, r.text, err)
			}
			_ = s.Requests()
		})
	}
	wg.Wait()
	if got := len(s.Requests()); got != n {
		t.Errorf("%d requests, want %d", got, n)
	}
}

func TestSplitKeepsText(t *testing.T) {
	tests := map[string][]string{
		"":                 {},
		"Hello, world!":    {"Hello", ",", " world", "!"},
		"  don't\n\nstop ": {"  don't", "\n\nstop", " "},
		"a→b":              {"a", "→", "b"},
	}
	for in, want := range tests {
		got := split(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("split(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Hello, world!\n\n```go\nx := 1\n```  ")
	f.Add("\xff\xfe bad utf-8")
	f.Fuzz(func(t *testing.T, text string) {
		toks := split(text)
		if strings.Join(toks, "") != text {
			t.Errorf("tokens %q do not join to %q", toks, text)
		}
		for _, tok := range toks {
			if tok == "" {
				t.Errorf("empty token in %q", toks)
			}
		}
	})
}
