package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/fantasy"
)

// Fault cases against a local server speaking OpenAI's chat-completions
// SSE, through the real openai adapter and real HTTP.

func textChunk(s string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}},
	})
	return "data: " + string(b) + "\n\n"
}

const finishChunks = `data: {"id":"chatcmpl-test","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"id":"chatcmpl-test","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n\n" +
	"data: [DONE]\n\n"

// send writes one piece of the response and pushes it to the client.
func send(w http.ResponseWriter, s string) {
	w.Write([]byte(s))
	w.(http.Flusher).Flush()
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// answer streams a complete, well-formed reply.
func answer(w http.ResponseWriter, deltas ...string) {
	startSSE(w)
	for _, d := range deltas {
		send(w, textChunk(d))
	}
	send(w, finishChunks)
}

func apiError(w http.ResponseWriter, code int, header http.Header, message, typ string) {
	for k, vs := range header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}})
}

// scripted starts a server whose handler is told which request (from 1)
// it is serving. release is closed before the server shuts down, so
// handlers that hang can wait on it.
func scripted(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{})) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // as a real server would; it also lets net/http notice a dropped client
		handle(w, r, int(requests.Add(1)), release)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return srv, &requests
}

func openAt(t *testing.T, srv *httptest.Server, cfg Config) Model {
	t.Helper()
	cfg.APIKeys = map[string]string{"openai": "sk-test"}
	cfg.BaseURLs = map[string]string{"openai": srv.URL + "/v1"}
	cfg.Getenv = func(string) string { return "" }
	if cfg.RetryBaseDelay == 0 {
		cfg.RetryBaseDelay = time.Millisecond
	}
	m, err := Open("openai/gpt-4o", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var hello = Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}}

func TestRetryHonoursRetryAfter(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		wait   time.Duration
	}{
		{"Retry-After", http.Header{"Retry-After": {"1"}}, time.Second},
		{"retry-after-ms", http.Header{"Retry-After-Ms": {"50"}}, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
				if n == 1 {
					apiError(w, http.StatusTooManyRequests, tc.header, "Rate limit reached for gpt-4o", "requests")
					return
				}
				answer(w, "Hello", " world")
			})
			// A backoff of a minute would time the test out: finishing
			// quickly shows the header decided the wait.
			m := openAt(t, srv, Config{RetryBaseDelay: time.Minute})
			start := time.Now()
			parts, err := collect(t, m, hello)
			if err != nil {
				t.Fatal(err)
			}
			if got := joined(ofType(parts, PartTextDelta)); got != "Hello world" {
				t.Errorf("text %q", got)
			}
			if n := requests.Load(); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			if d := time.Since(start); d < tc.wait || d > 20*time.Second {
				t.Errorf("retried after %v, want about %v", d, tc.wait)
			}
			checkFinish(t, parts, "stop")
		})
	}
}

func TestServerErrorGivesUpAfterRetries(t *testing.T) {
	srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		apiError(w, http.StatusInternalServerError, nil, "The server had an error while processing your request.", "server_error")
	})
	m := openAt(t, srv, Config{MaxRetries: 2})
	parts, err := collect(t, m, hello)
	if len(parts) != 0 {
		t.Errorf("parts before the error: %+v", parts)
	}
	const want = "openai: 500 Internal Server Error: The server had an error while processing your request. (gave up after 3 attempts)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestBadKeyIsNotRetried(t *testing.T) {
	srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization %q", got)
		}
		apiError(w, http.StatusUnauthorized, nil, "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error")
	})
	_, err := collect(t, openAt(t, srv, Config{}), hello)
	const want = "openai: 401 Unauthorized: Incorrect API key provided: sk-test."
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v\nwant prefix %s", err, want)
	}
	var pe *fantasy.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusUnauthorized {
		t.Errorf("error does not unwrap to the provider's 401: %#v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestConnectionCutMidStream(t *testing.T) {
	srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		startSSE(w)
		send(w, textChunk("Hel"))
		send(w, textChunk("lo"))
		panic(http.ErrAbortHandler) // drops the connection mid-body
	})
	parts, err := collect(t, openAt(t, srv, Config{}), hello)
	if got := joined(ofType(parts, PartTextDelta)); got != "Hello" {
		t.Errorf("partial text %q, want it yielded before the error", got)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
		t.Errorf("error %v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests: nothing may be retried once text was yielded", n)
	}
}

func TestMalformedSSE(t *testing.T) {
	for _, before := range [][]string{nil, {"Hi"}} {
		srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
			startSSE(w)
			for _, d := range before {
				send(w, textChunk(d))
			}
			send(w, "data: {\"id\":\"chatcmpl-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n")
			send(w, finishChunks)
		})
		parts, err := collect(t, openAt(t, srv, Config{}), hello)
		if got := joined(ofType(parts, PartTextDelta)); got != strings.Join(before, "") {
			t.Errorf("text %q before the bad line", got)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "openai: malformed data in the response stream") {
			t.Errorf("error %v", err)
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("%d requests: a malformed stream is not retried", n)
		}
	}
}

func TestStallEndsStream(t *testing.T) {
	cases := []struct {
		name    string
		headers bool // the stall comes after the headers and one delta
	}{
		{"before headers", false},
		{"mid-stream", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
				if tc.headers {
					startSSE(w)
					send(w, textChunk("Hel"))
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			})
			m := openAt(t, srv, Config{IdleTimeout: 200 * time.Millisecond, FirstTokenTimeout: 300 * time.Millisecond})
			start := time.Now()
			parts, err := collect(t, m, hello)
			want := "openai: stream stalled: no data from the provider for 200ms (the silence limit: Settings, --idle-timeout or PARLEY_IDLE_TIMEOUT)"
			if !tc.headers {
				want = "openai: stream stalled: no answer from the provider in 300ms (the wait for the first token: Settings, --first-token-timeout or PARLEY_FIRST_TOKEN_TIMEOUT)"
			}
			if !errors.Is(err, ErrStalled) || err.Error() != want {
				t.Errorf("error %v\nwant  %s", err, want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("stall noticed after %v", d)
			}
			if tc.headers && joined(ofType(parts, PartTextDelta)) != "Hel" {
				t.Errorf("parts %+v", parts)
			}
		})
	}
	for d, want := range map[time.Duration]string{DefaultIdleTimeout: "90s", DefaultFirstTokenTimeout: "10m",
		90 * time.Minute: "90m", 2 * time.Hour: "2h", 200 * time.Millisecond: "200ms", 30*time.Minute + 5*time.Second: "30m5s"} {
		if got := FormatTimeout(d); got != want {
			t.Errorf("FormatTimeout(%v) = %q, want %q", d, got, want)
		}
		if back, err := ParseTimeout(want); err != nil || back != d {
			t.Errorf("ParseTimeout(%q) = %v, %v", want, back, err)
		}
	}
}

// A model that thinks longer than the limit between parts before it says
// anything is waited for, up to the first-token limit.
func TestFirstTokenMayTakeLongerThanASilence(t *testing.T) {
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		time.Sleep(400 * time.Millisecond) // thinking, headers not sent yet
		startSSE(w)
		send(w, textChunk("Hi"))
		send(w, finishChunks)
	})
	parts, err := collect(t, openAt(t, srv, Config{IdleTimeout: 100 * time.Millisecond, FirstTokenTimeout: 5 * time.Second, MaxRetries: -1}), hello)
	if err != nil || joined(ofType(parts, PartTextDelta)) != "Hi" {
		t.Fatalf("parts %+v, error %v", parts, err)
	}
}

// The limits come from the environment when the config leaves them unset,
// and a value that is no duration is refused by name.
func TestTimeoutsFromTheEnvironment(t *testing.T) {
	env := map[string]string{"PARLEY_FIRST_TOKEN_TIMEOUT": "20m", "PARLEY_IDLE_TIMEOUT": "3m", "OPENAI_API_KEY": "k"}
	m, err := Open("openai/gpt-4o", Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if mm := m.(*model); mm.first != 20*time.Minute || mm.idle != 3*time.Minute {
		t.Fatalf("first %v, idle %v", mm.first, mm.idle)
	}
	env["PARLEY_IDLE_TIMEOUT"] = "soon"
	if _, err := Open("openai/gpt-4o", Config{Getenv: func(k string) string { return env[k] }}); err == nil || !strings.Contains(err.Error(), `PARLEY_IDLE_TIMEOUT="soon"`) {
		t.Fatalf("error %v", err)
	}
	delete(env, "PARLEY_FIRST_TOKEN_TIMEOUT")
	delete(env, "PARLEY_IDLE_TIMEOUT")
	m, _ = Open("openai/gpt-4o", Config{Getenv: func(k string) string { return env[k] }})
	if mm := m.(*model); mm.first != DefaultFirstTokenTimeout || mm.idle != DefaultIdleTimeout {
		t.Fatalf("defaults: first %v, idle %v", mm.first, mm.idle)
	}
}

// A provider's own limits (Settings) win over the global ones and the
// environment; other providers keep the global ones.
func TestTimeoutsPerProvider(t *testing.T) {
	env := map[string]string{"PARLEY_FIRST_TOKEN_TIMEOUT": "20m", "PARLEY_IDLE_TIMEOUT": "3m", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
	cfg := Config{Getenv: func(k string) string { return env[k] }, IdleTimeout: 2 * time.Minute,
		FirstTokenTimeouts: map[string]time.Duration{"openai": 15 * time.Minute},
		IdleTimeouts:       map[string]time.Duration{"openai": 5 * time.Minute}}
	for spec, want := range map[string][2]time.Duration{
		"openai/gpt-4o":             {15 * time.Minute, 5 * time.Minute},
		"anthropic/claude-sonnet-4": {20 * time.Minute, 2 * time.Minute},
	} {
		m, err := Open(spec, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if mm := m.(*model); mm.first != want[0] || mm.idle != want[1] {
			t.Errorf("%s: first %v, idle %v; want %v", spec, mm.first, mm.idle, want)
		}
	}
	if first, idle, err := Timeouts(cfg, ""); err != nil || first != 20*time.Minute || idle != 2*time.Minute {
		t.Errorf("global limits %v, %v, %v", first, idle, err)
	}
}

// A provider's first-token limit ends a wait past it, by its own value.
func TestProviderFirstTokenLimitEndsTheWait(t *testing.T) {
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	_, err := collect(t, openAt(t, srv, Config{FirstTokenTimeout: time.Hour, IdleTimeout: time.Hour,
		FirstTokenTimeouts: map[string]time.Duration{"openai": 250 * time.Millisecond}, MaxRetries: -1}), hello)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "no answer from the provider in 250ms") {
		t.Fatalf("error %v", err)
	}
}

func TestCancelEndsPromptly(t *testing.T) {
	cases := []struct {
		name   string
		before bool // cancel before any part arrived
	}{
		{"waiting for the first part", true},
		{"mid-stream", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aborted := make(chan struct{})
			srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
				startSSE(w)
				if !tc.before {
					send(w, textChunk("Hel"))
				}
				select {
				case <-r.Context().Done():
					close(aborted) // the client really dropped the request
				case <-release:
				}
			})
			m := openAt(t, srv, Config{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.before {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			var err error
			start := time.Now()
			for p, e := range m.Stream(ctx, hello) {
				if e != nil {
					err = e
					break
				}
				if p.Type == PartTextDelta {
					start = time.Now()
					cancel()
				}
			}
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Errorf("error %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("stream ended %v after cancel", d)
			}
			select {
			case <-aborted:
			case <-time.After(5 * time.Second):
				t.Error("the HTTP request outlived the stream")
			}
		})
	}
}

func TestBreakingOutAbortsRequest(t *testing.T) {
	aborted := make(chan struct{})
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		startSSE(w)
		send(w, textChunk("Hel"))
		select {
		case <-r.Context().Done():
			close(aborted)
		case <-release:
		}
	})
	for range openAt(t, srv, Config{}).Stream(t.Context(), hello) {
		break
	}
	select {
	case <-aborted:
	case <-time.After(5 * time.Second):
		t.Error("the HTTP request outlived the consumer")
	}
}

// TestStreamsIncrementally holds the response open after the first delta
// until the consumer has seen it: a Stream that buffered the response
// would only deliver after the timeout.
func TestStreamsIncrementally(t *testing.T) {
	seen := make(chan struct{})
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		startSSE(w)
		send(w, textChunk("Hel"))
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
			t.Error("first delta not delivered while the response was still open")
		}
		send(w, textChunk("lo"))
		send(w, finishChunks)
	})
	var text []string
	for p, err := range openAt(t, srv, Config{}).Stream(t.Context(), hello) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Type == PartTextDelta {
			text = append(text, p.Text)
			if len(text) == 1 {
				close(seen)
			}
		}
	}
	if strings.Join(text, "|") != "Hel|lo" {
		t.Errorf("deltas %q", text)
	}
}

func TestBadRequestFailsBeforeSending(t *testing.T) {
	srv, requests := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		answer(w, "unused")
	})
	m := openAt(t, srv, Config{})
	for _, req := range []Request{
		{Messages: []Message{{Role: "robot", Text: "hi"}}},
		{Messages: hello.Messages, Tools: []ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{`)}}},
	} {
		if _, err := collect(t, m, req); err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("error %v", err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
