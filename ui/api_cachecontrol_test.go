package ui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
)

// anthropicServer answers every Messages request with a short answer and
// keeps the bodies of all but title requests.
type anthropicServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newAnthropicServer(t *testing.T) *anthropicServer {
	s := &anthropicServer{}
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	reply := ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Cached."}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(b), scripted.TitleMarker) {
			s.mu.Lock()
			s.bodies = append(s.bodies, string(b))
			s.mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, reply)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *anthropicServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// anthropicBody is the part of a Messages request the tests read.
type anthropicBody struct {
	System []struct {
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"content"`
	} `json:"messages"`
}

func parseAnthropic(t *testing.T, body string) anthropicBody {
	t.Helper()
	var b anthropicBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("request is not JSON: %v\n%s", err, body)
	}
	return b
}

// breakpoints counts a request's cache_control marks.
func breakpoints(body string) int { return strings.Count(body, `"cache_control"`) }

// marked lists the texts of the blocks carrying cache_control, system
// blocks first.
func (b anthropicBody) marked() []string {
	var out []string
	for _, s := range b.System {
		if len(s.CacheControl) > 0 {
			out = append(out, s.Text)
		}
	}
	for _, m := range b.Messages {
		for _, c := range m.Content {
			if len(c.CacheControl) > 0 {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

func anthropicEnv(t *testing.T) (*apiEnv, *anthropicServer) {
	srv := newAnthropicServer(t)
	e := newAPIEnv(t, func(a *agentcore.Agent) {
		a.Model = "anthropic/claude-sonnet-4-5"
		a.Models = func(spec string) (llm.Model, error) {
			return llm.Open(spec, llm.Config{APIKeys: map[string]string{"anthropic": "k"}, BaseURLs: map[string]string{"anthropic": srv.URL},
				Getenv: func(string) string { return "" }, MaxRetries: -1})
		}
	})
	return e, srv
}

// A generate whose instructions are a system message with
// providerOptions.anthropic.cacheControl reaches Anthropic with
// cache_control on that system block; unknown providers and keys, however
// long or nested, are ignored; Parley's own breakpoints fill what is left,
// four at most.
func TestAPIInstructionsCacheControl(t *testing.T) {
	e, srv := anthropicEnv(t)
	long := strings.Repeat("k", 5000)
	got := e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":"hi",`+
		`"providerOptions":{"`+long+`":{"x":[{"y":null}]},"openai":{"reasoningEffort":"nonsense"},"anthropic":{"`+long+`":1,"junk":{"a":[[{}]]}}}}],`+
		`"instructions":{"role":"system","content":"Stable rules.","providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral"},"extra":true},"mistral":{"x":1}}}}`, http.StatusOK)
	if got["text"] != "Cached." {
		t.Fatalf("text %q", got["text"])
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	b := parseAnthropic(t, reqs[0])
	if len(b.System) != 1 || b.System[0].Text != "Stable rules." || string(b.System[0].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("system %+v, want the call's instruction with cache_control", b.System)
	}
	if n := breakpoints(reqs[0]); n > 4 {
		t.Errorf("%d breakpoints", n)
	}
	if strings.Contains(reqs[0], long[:100]) || strings.Contains(reqs[0], "nonsense") || strings.Contains(reqs[0], "junk") {
		t.Errorf("unknown options went out: %s", reqs[0])
	}

	// The caller's mark on the first of two instructions stays there;
	// Parley's goes on the last.
	e.call("POST", "/api/agents/parley/generate", `{"messages":"hi","instructions":[`+
		`{"role":"system","content":"Stable rules.","providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral"}}}},"Today is Tuesday."]}`, http.StatusOK)
	reqs = srv.requests()
	if m := parseAnthropic(t, reqs[1]).marked(); len(m) < 2 || m[0] != "Stable rules." || m[1] != "Today is Tuesday." {
		t.Errorf("marked blocks %q, want both instructions (the caller's, then Parley's)", m)
	}
}

// messages[i].providerOptions.anthropic.cacheControl is kept with the stored
// message, as Mastra keeps content.providerMetadata: a later request of the
// thread still has the breakpoint there. Without a thread it is the call's.
func TestAPIMessageCacheControl(t *testing.T) {
	e, srv := anthropicEnv(t)
	mark := `"providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral"}}}`
	off := `"providerOptions":{"anthropic":{"cacheControl":false}}` // Parley's own off: only the caller's remain
	e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":"Background.",`+mark+`},`+
		`{"role":"user","content":"First question.",`+mark+`}],"memory":{"thread":"t-cc","resource":"u"},`+off+`}`, http.StatusOK)
	e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":"Second question."}],"memory":{"thread":"t-cc","resource":"u"},`+off+`}`, http.StatusOK)
	e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":"No thread.",`+mark+`}],`+off+`}`, http.StatusOK)
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range [][]string{
		{"Background.", "First question."},
		{"Background.", "First question."},
		{"No thread."},
	} {
		got := parseAnthropic(t, reqs[i]).marked()
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("request %d: marked blocks %q, want %q\n%s", i+1, got, want, reqs[i])
		}
	}
	// The stored message shows its options as Mastra's does.
	list := e.call("GET", "/api/memory/threads/t-cc/messages?agentId=parley", "", http.StatusOK)
	if b, _ := json.Marshal(list); !strings.Contains(string(b), `"providerMetadata":{"anthropic":{"cacheControl":{"type":"ephemeral"}}}`) {
		t.Errorf("stored messages %s", b)
	}
}

// ifIdle.streamOptions take instructions with providerOptions as generate
// does, and refuse a bad one naming it.
func TestAPIIfIdleInstructionsCacheControl(t *testing.T) {
	e, srv := anthropicEnv(t)
	e.call("POST", "/api/memory/threads", `{"threadId":"t-idle-cc","resourceId":"u"}`, http.StatusOK)
	got := e.call("POST", "/api/agents/parley/send-message", `{"message":"hi","resourceId":"u","threadId":"t-idle-cc","ifIdle":{"streamOptions":`+
		`{"instructions":{"role":"system","content":"x","providerOptions":{"anthropic":{"cacheControl":1}}}}}}`, http.StatusBadRequest)
	if msg, _ := got["error"].(string); !strings.Contains(msg, `ifIdle.streamOptions: instructions.providerOptions.anthropic.cacheControl must be {"type": "ephemeral"} or false`) {
		t.Errorf("error %q", msg)
	}
	e.call("POST", "/api/agents/parley/send-message", `{"message":"wake up","resourceId":"u","threadId":"t-idle-cc","ifIdle":{"behavior":"wake","streamOptions":`+
		`{"instructions":[{"role":"system","content":"Woken rules.","providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral"}}}},"Later."],"providerOptions":{"anthropic":{"cacheControl":false}}}}}`, http.StatusOK)
	if err := e.rt.Wait(t.Context(), "t-idle-cc"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if m := parseAnthropic(t, reqs[0]).marked(); strings.Join(m, "|") != "Woken rules." {
		t.Errorf("marked blocks %q, want the woken run's instruction", m)
	}
}
