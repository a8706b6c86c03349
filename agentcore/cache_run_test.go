package agentcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/llm/llmtest"
	"parley/storage"
)

// cacheRunSteps is the run's model calls: five tool calls, then the answer.
const cacheRunSteps = 6

// scriptServer answers the i-th request with replies[i] as an SSE stream
// and keeps every request body.
type scriptServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []string
	replies []string
}

func newScriptServer(t *testing.T, replies []string) *scriptServer {
	s := &scriptServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		i := len(s.bodies)
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		if i >= len(s.replies) {
			http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, s.replies[i])
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// anthropicSSE is a Messages stream: a tool call to count when n > 0, else
// an answer; the usage reports cache reads and writes as Anthropic does
// (input_tokens without them).
func anthropicSSE(n int) string {
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	s := ev("message_start", `{"type":"message_start","message":{"id":"msg_`+fmt.Sprint(n)+`","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":1}}}`)
	stop := "end_turn"
	if n > 0 {
		stop = "tool_use"
		s += ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_%d","name":"count","input":{}}}`, n))
		s += ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"n\":%d}"}}`, n))
	} else {
		s += ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s += ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Counted to five."}}`)
	}
	s += ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s += ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":20}}`)
	return s + ev("message_stop", `{"type":"message_stop"}`)
}

// openAISSE is a Chat Completions stream, with usage that reports cached
// tokens as OpenAI does (prompt_tokens include them).
func openAISSE(n int) string {
	chunk := func(choices string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[` + choices + `]}` + "\n\n"
	}
	var s, finish string
	if n > 0 {
		finish = "tool_calls"
		s = chunk(fmt.Sprintf(`{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"count","arguments":""}}]}}`, n))
		s += chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"n\":%d}"}}]}}`, n))
	} else {
		finish = "stop"
		s = chunk(`{"index":0,"delta":{"role":"assistant","content":"Counted to five."}}`)
	}
	s += chunk(`{"index":0,"delta":{},"finish_reason":"` + finish + `"}`)
	s += `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":20,"total_tokens":1220,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":8}}}` + "\n\n"
	return s + "data: [DONE]\n\n"
}

type countIn struct {
	N int `json:"n"`
}

// runSixSteps drives one real run of a counting agent on model against
// the provider at baseURL, and returns the thread and the reply's usage.
func runSixSteps(t *testing.T, model, provider, baseURL string) (agentcore.Thread, agentcore.Usage) {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{
		APIKeys:  map[string]string{provider: "k"},
		BaseURLs: map[string]string{provider: baseURL},
		Getenv:   func(string) string { return "" }, MaxRetries: -1,
	}
	count := agentcore.NewTool("count", "Counts one further",
		func(ctx context.Context, in countIn, tc *agentcore.ToolContext) (string, error) {
			return fmt.Sprintf("counted %d", in.N), nil
		})
	agent := &agentcore.Agent{
		ID: "a", Name: "A", Model: model, Instructions: agentcore.Text("You count."), MaxSteps: 10,
		Tools:  map[string]*agentcore.Tool{"count": count},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
	}
	rt := agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(func() { rt.Close(); db.Close() })
	th := thread(t, rt)
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "Count to five, one call a number."}); err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
		t.Fatalf("run ended with %+v", last)
	}
	msgs, err := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("stored %d messages, %v", len(msgs), err)
	}
	u, ok := agentcore.MessageUsage(msgs[1].Content)
	if !ok {
		t.Fatalf("the reply recorded no usage: %+v", msgs[1].Content.Metadata)
	}
	// The chat's total (the store's usage columns) counts what the reply did.
	if tu, err := rt.ThreadUsage(t.Context(), th.ID); err != nil || tu.Total() != u {
		t.Errorf("chat usage %+v, %v; the reply's %+v", tu.Total(), err, u)
	}
	return th, u
}

// decode parses a request body.
func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("request is not JSON: %v\n%s", err, body)
	}
	return v
}

// stripCache removes every cache_control, leaving what the cache keys on.
func stripCache(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if k != "cache_control" {
				out[k] = stripCache(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = stripCache(e)
		}
		return out
	}
	return v
}

// lastBlockMarked reports whether a Messages message's last block carries
// a breakpoint.
func lastBlockMarked(msg any) bool {
	content, _ := msg.(map[string]any)["content"].([]any)
	if len(content) == 0 {
		return false
	}
	_, ok := content[len(content)-1].(map[string]any)["cache_control"]
	return ok
}

func countMarks(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["cache_control"]; ok {
			n++
		}
		for _, e := range v {
			n += countMarks(e)
		}
	case []any:
		for _, e := range v {
			n += countMarks(e)
		}
	}
	return n
}

// A 6-step Anthropic run: every request carries at most four breakpoints —
// the tools, the system prompt, the end of the previous request and the
// newest message — and the prompt only grows, so the prefix each request
// writes to the cache is read back by the next one byte for byte.
func TestAnthropicCacheStableAcrossSixSteps(t *testing.T) {
	var replies []string
	for i := 1; i < cacheRunSteps; i++ {
		replies = append(replies, anthropicSSE(i))
	}
	srv := newScriptServer(t, append(replies, anthropicSSE(0)))
	_, u := runSixSteps(t, "anthropic/claude-sonnet-4-5", "anthropic", srv.URL)

	reqs := srv.requests()
	if len(reqs) != cacheRunSteps {
		t.Fatalf("%d requests, want %d", len(reqs), cacheRunSteps)
	}
	var prev []any
	for i, body := range reqs {
		req := decode(t, body)
		tools, _ := req["tools"].([]any)
		system, _ := req["system"].([]any)
		msgs, _ := req["messages"].([]any)
		if len(tools) != 1 || tools[0].(map[string]any)["cache_control"] == nil {
			t.Errorf("step %d: the tools carry no breakpoint: %v", i+1, tools)
		}
		if len(system) == 0 || system[len(system)-1].(map[string]any)["cache_control"] == nil {
			t.Errorf("step %d: the system prompt carries no breakpoint: %v", i+1, system)
		}
		if !lastBlockMarked(msgs[len(msgs)-1]) {
			t.Errorf("step %d: the newest message carries no breakpoint", i+1)
		}
		want := 3
		if i > 0 {
			want = 4
			// Append-only, and the previous request's end is marked.
			if got := stripCache(msgs[:len(prev)]); !reflect.DeepEqual(got, stripCache(prev)) {
				t.Errorf("step %d: the conversation's prefix changed:\n got %v\nwant %v", i+1, got, stripCache(prev))
			}
			if !lastBlockMarked(msgs[len(prev)-1]) {
				t.Errorf("step %d: the previous request's end (message %d) carries no breakpoint", i+1, len(prev)-1)
			}
		}
		if n := countMarks(req); n != want {
			t.Errorf("step %d: %d breakpoints, want %d:\n%s", i+1, n, want, body)
		}
		if i > 0 && !reflect.DeepEqual(stripCache(tools), stripCache(decode(t, reqs[i-1])["tools"])) {
			t.Errorf("step %d: the tool definitions changed", i+1)
		}
		prev = msgs
	}
	// Per reply: six calls' reads and writes, apart from the full-price
	// input.
	want := agentcore.Usage{InputTokens: 60, OutputTokens: 120, TotalTokens: 6 * 30, CachedTokens: 6000, CacheWriteTokens: 1200}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

// A 6-step OpenAI run: every request names the chat's cache with the same
// prompt_cache_key (a hash of the thread id), and the prompt only grows.
func TestOpenAIPromptCacheKeyStableAcrossSixSteps(t *testing.T) {
	var replies []string
	for i := 1; i < cacheRunSteps; i++ {
		replies = append(replies, openAISSE(i))
	}
	srv := newScriptServer(t, append(replies, openAISSE(0)))
	th, u := runSixSteps(t, "openai/gpt-5", "openai", srv.URL)

	reqs := srv.requests()
	if len(reqs) != cacheRunSteps {
		t.Fatalf("%d requests, want %d", len(reqs), cacheRunSteps)
	}
	key := llm.CacheKey(th.ID)
	if !strings.HasPrefix(key, "parley-") || strings.Contains(key, th.ID) {
		t.Fatalf("cache key %q gives the thread id away or is no key", key)
	}
	var prev []any
	for i, body := range reqs {
		req := decode(t, body)
		if req["prompt_cache_key"] != key {
			t.Errorf("step %d: prompt_cache_key %v, want %q", i+1, req["prompt_cache_key"], key)
		}
		if _, ok := req["reasoning_effort"]; ok {
			t.Errorf("step %d: reasoning_effort sent with no thinking level set", i+1)
		}
		msgs, _ := req["messages"].([]any)
		if i > 0 && !reflect.DeepEqual(msgs[:len(prev)], prev) {
			t.Errorf("step %d: the prompt's prefix changed", i+1)
		}
		prev = msgs
	}
	// prompt_tokens include the cached ones; OpenAI reports no writes.
	want := agentcore.Usage{InputTokens: 6 * 176, OutputTokens: 120, TotalTokens: 6 * 1220, ReasoningTokens: 48, CachedTokens: 6 * 1024}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

// A 6-step Gemini run: Gemini caches implicitly, by prefix; what Parley can
// do is keep the system instruction and tools fixed and the contents
// append-only, which this pins, and count the cached tokens it reports.
func TestGeminiPrefixStableAcrossSixSteps(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	for i := 1; i < cacheRunSteps; i++ {
		srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{{
			Parts:  []map[string]any{llmtest.GeminiFunctionCall(fmt.Sprint("fc", i), "count", map[string]any{"n": i}, "")},
			Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 1200, Candidates: 20},
		}}})
	}
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{{
		Parts: []map[string]any{llmtest.GeminiText("Counted to five.")}, Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 1200, Candidates: 20},
	}}})
	runSixSteps(t, "google/gemini-2.5-flash", "google", srv.URL)

	reqs := srv.Requests()
	if len(reqs) != cacheRunSteps {
		t.Fatalf("%d requests, want %d", len(reqs), cacheRunSteps)
	}
	var prev map[string]any
	for i, r := range reqs {
		var req map[string]any
		r.Decode(t, &req)
		if _, ok := req["generationConfig"].(map[string]any)["thinkingConfig"]; ok {
			t.Errorf("step %d: thinkingConfig sent with no thinking level set", i+1)
		}
		if i > 0 {
			for _, k := range []string{"systemInstruction", "tools", "toolConfig"} {
				if !reflect.DeepEqual(req[k], prev[k]) {
					t.Errorf("step %d: %s changed", i+1, k)
				}
			}
			got, was := req["contents"].([]any), prev["contents"].([]any)
			if !reflect.DeepEqual(got[:len(was)], was) {
				t.Errorf("step %d: the contents' prefix changed", i+1)
			}
		}
		prev = req
	}
}
