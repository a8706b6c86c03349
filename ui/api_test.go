package ui_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
	"parley/ui"
)

const testModel = "openai-compatible/x"

// apiEnv is a real server over a real SQLite store, talking to the scripted
// model server.
type apiEnv struct {
	t     *testing.T
	url   string
	model *scripted.Server
	rt    *agentcore.Runtime
	db    agentcore.Store // the runtime's store, for tests that seed a thread
	srv   *ui.Server
}

// newAPIEnv starts the env; each configure adjusts the agent first.
func newAPIEnv(t *testing.T, configure ...func(*agentcore.Agent)) *apiEnv {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.NewServer()
	lm, err := llm.Open(testModel, llm.Config{
		BaseURLs:   map[string]string{"openai-compatible": model.URL()},
		APIKeys:    map[string]string{"openai-compatible": "k"},
		Getenv:     func(string) string { return "" },
		MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	open := func(spec string) (llm.Model, error) {
		if spec != testModel {
			return nil, fmt.Errorf("unknown model %s", spec)
		}
		return lm, nil
	}
	agent := &agentcore.Agent{
		ID: "parley", Name: "Parley", Description: "The test agent.",
		Instructions: agentcore.Text("Be brief."), Model: testModel, Models: open,
	}
	for _, c := range configure {
		c(agent)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	rt := agentcore.NewRuntime(db, log, agent)
	srv, err := ui.New(ui.Config{Runtime: rt, Log: log, CheckModel: func(spec string) error {
		_, err := open(spec)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Shutdown()
		hs.Close()
		rt.Close()
		model.Close()
		db.Close()
	})
	return &apiEnv{t: t, url: hs.URL, model: model, rt: rt, db: db, srv: srv}
}

func (e *apiEnv) send(method, path, body string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// call makes a request, checks its status and JSON content type, and
// decodes the answer.
func (e *apiEnv) call(method, path, body string, status int) map[string]any {
	e.t.Helper()
	resp := e.send(method, path, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, status, raw)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Fatalf("%s %s: Content-Type %q, want JSON", method, path, ct)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		e.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
	return v
}

// get walks a decoded JSON value: get(v, "threads", 0, "id").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestAPIAgents(t *testing.T) {
	e := newAPIEnv(t)
	list := e.call("GET", "/api/agents", "", http.StatusOK)
	if len(list) != 1 {
		t.Fatalf("agents: %v, want only parley", list)
	}
	one := e.call("GET", "/api/agents/parley", "", http.StatusOK)
	for name, want := range map[string]any{
		"name": "Parley", "description": "The test agent.", "instructions": "Be brief.",
		"provider": "openai-compatible", "modelId": "x", "source": "code", "supportsMemory": true,
		"tools": map[string]any{}, "workflows": map[string]any{}, "agents": map[string]any{},
	} {
		if got := get(list, "parley", name); !reflect.DeepEqual(got, want) {
			t.Errorf("list: parley.%s = %#v, want %#v", name, got, want)
		}
		if got := one[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("get: %s = %#v, want %#v", name, got, want)
		}
	}
	if get(list, "parley", "id") != "parley" {
		t.Errorf("list: parley.id = %v", get(list, "parley", "id"))
	}
	if _, ok := one["id"]; ok {
		t.Error("get: has an id; Mastra's formatAgent has none")
	}
	got := e.call("GET", "/api/agents/nope", "", http.StatusNotFound)
	if got["error"] != "Agent with id nope not found" {
		t.Errorf("unknown agent: %v", got)
	}
}

func TestAPIThreads(t *testing.T) {
	e := newAPIEnv(t)
	created := e.call("POST", "/api/memory/threads?agentId=parley",
		`{"resourceId":"u1","threadId":"t_1","title":"First","metadata":{"k":"v"}}`, http.StatusOK)
	want := map[string]any{"id": "t_1", "resourceId": "u1", "title": "First", "metadata": map[string]any{"k": "v"}}
	for k, v := range want {
		if !reflect.DeepEqual(created[k], v) {
			t.Errorf("create: %s = %#v, want %#v", k, created[k], v)
		}
	}
	if created["createdAt"] == nil || created["updatedAt"] == nil {
		t.Errorf("create: no timestamps: %v", created)
	}
	second := e.call("POST", "/api/memory/threads", `{"resourceId":"u1"}`, http.StatusOK)
	e.call("POST", "/api/memory/threads", `{"resourceId":"u2","title":"Other"}`, http.StatusOK)
	if id, _ := second["id"].(string); id == "" {
		t.Fatalf("create without threadId: no id: %v", second)
	}

	all := e.call("GET", "/api/memory/threads", "", http.StatusOK)
	if get(all, "total") != 3.0 || len(get(all, "threads").([]any)) != 3 || get(all, "hasMore") != false ||
		get(all, "page") != 0.0 || get(all, "perPage") != 100.0 {
		t.Errorf("list all: %v", all)
	}
	mine := e.call("GET", "/api/memory/threads?resourceId=u1&agentId=parley&page=1&perPage=1", "", http.StatusOK)
	if get(mine, "total") != 2.0 || len(get(mine, "threads").([]any)) != 1 || get(mine, "hasMore") != false ||
		get(mine, "threads", 0, "resourceId") != "u1" {
		t.Errorf("list u1 page 1: %v", mine)
	}
	first := e.call("GET", "/api/memory/threads?resourceId=u1&perPage=1", "", http.StatusOK)
	if get(first, "hasMore") != true {
		t.Errorf("list u1 page 0: %v", first)
	}
	if unpaged := e.call("GET", "/api/memory/threads?perPage=false", "", http.StatusOK); get(unpaged, "perPage") != false ||
		len(get(unpaged, "threads").([]any)) != 3 {
		t.Errorf("list perPage=false: %v", unpaged)
	}

	got := e.call("GET", "/api/memory/threads/t_1?resourceId=u1", "", http.StatusOK)
	if got["title"] != "First" {
		t.Errorf("get: %v", got)
	}
	patched := e.call("PATCH", "/api/memory/threads/t_1?agentId=parley", `{"title":"Renamed","metadata":{"a":1}}`, http.StatusOK)
	if patched["title"] != "Renamed" || !reflect.DeepEqual(patched["metadata"], map[string]any{"a": 1.0}) {
		t.Errorf("patch: %v", patched)
	}
	if got := e.call("GET", "/api/memory/threads/t_1", "", http.StatusOK); got["title"] != "Renamed" {
		t.Errorf("get after patch: %v", got)
	}
	msgs := e.call("GET", "/api/memory/threads/t_1/messages", "", http.StatusOK)
	if m, ok := msgs["messages"].([]any); !ok || len(m) != 0 || msgs["uiMessages"] != nil || get(msgs, "perPage") != 40.0 {
		t.Errorf("messages of an empty thread: %v", msgs)
	}
	deleted := e.call("DELETE", "/api/memory/threads/t_1?agentId=parley&resourceId=u1", "", http.StatusOK)
	if deleted["result"] != "Thread deleted" {
		t.Errorf("delete: %v", deleted)
	}
	e.call("GET", "/api/memory/threads/t_1", "", http.StatusNotFound)
}

func TestAPIErrors(t *testing.T) {
	e := newAPIEnv(t)
	e.call("POST", "/api/memory/threads", `{"resourceId":"u1","threadId":"mine"}`, http.StatusOK)
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		msg                      string // the error names this
	}{
		{"bad JSON", "POST", "/api/memory/threads", `{"resourceId":`, 400, "Invalid request body"},
		{"empty body", "POST", "/api/memory/threads", ``, 400, "empty"},
		{"not an object", "POST", "/api/memory/threads", `[1]`, 400, "want a JSON object"},
		{"wrong type", "POST", "/api/memory/threads", `{"resourceId":"u","title":5}`, 400, "title must be a string"},
		{"no resourceId", "POST", "/api/memory/threads", `{"title":"x"}`, 400, `"resourceId" is required`},
		{"bad threadId", "POST", "/api/memory/threads", `{"resourceId":"u","threadId":"a/b"}`, 400, "threadId"},
		{"taken threadId", "POST", "/api/memory/threads", `{"resourceId":"u","threadId":"mine"}`, 409, "already exists"},
		{"create for unknown agent", "POST", "/api/memory/threads?agentId=nope", `{"resourceId":"u"}`, 404, "Agent with id nope not found"},
		{"bad page", "GET", "/api/memory/threads?page=-1", ``, 400, "page"},
		{"bad perPage", "GET", "/api/memory/threads/mine/messages?perPage=x", ``, 400, "perPage"},
		{"unknown thread", "GET", "/api/memory/threads/nope", ``, 404, "Thread nope not found"},
		{"other resource", "GET", "/api/memory/threads/mine?resourceId=u2", ``, 403, "different resource"},
		{"patch unknown", "PATCH", "/api/memory/threads/nope", `{"title":"x"}`, 404, "not found"},
		{"patch bad JSON", "PATCH", "/api/memory/threads/mine", `nope`, 400, "Invalid request body"},
		{"delete unknown", "DELETE", "/api/memory/threads/nope", ``, 404, "not found"},
		{"messages of unknown", "GET", "/api/memory/threads/nope/messages", ``, 404, "not found"},
		{"no messages", "POST", "/api/agents/parley/generate", `{}`, 400, `"messages" is required`},
		{"blank message", "POST", "/api/agents/parley/generate", `{"messages":"  "}`, 400, `"messages" is required`},
		{"blank in a list", "POST", "/api/agents/parley/generate", `{"messages":["a"," "]}`, 400, "messages[1]: the message has no text"},
		{"empty list", "POST", "/api/agents/parley/generate", `{"messages":[]}`, 400, `"messages" is required`},
		{"number", "POST", "/api/agents/parley/generate", `{"messages":5}`, 400, "messages must be a string"},
		{"tool role", "POST", "/api/agents/parley/generate", `{"messages":[{"role":"tool","content":"x"}]}`, 400, `messages[0]: role "tool"`},
		{"image part", "POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":[{"type":"image"}]}]}`, 400, `content[0]: "image" is empty`},
		{"generate bad JSON", "POST", "/api/agents/parley/generate", `{"messages":"hi"`, 400, "Invalid request body"},
		{"generate unknown agent", "POST", "/api/agents/nope/generate", `{"messages":"hi"}`, 404, "Agent with id nope not found"},
		{"stream unknown agent", "POST", "/api/agents/nope/stream", `{"messages":"hi"}`, 404, "Agent with id nope not found"},
		{"unknown model", "POST", "/api/agents/parley/generate", `{"messages":"hi","model":"a/b"}`, 400, "model a/b"},
		{"memory without thread", "POST", "/api/agents/parley/generate", `{"messages":"hi","memory":{"resource":"u"}}`, 400, "memory.thread"},
		{"memory thread type", "POST", "/api/agents/parley/generate", `{"messages":"hi","memory":{"thread":5}}`, 400, "memory.thread"},
		{"new thread without resource", "POST", "/api/agents/parley/generate", `{"messages":"hi","memory":{"thread":"fresh"}}`, 400, "resource ID is required"},
		{"thread of another resource", "POST", "/api/agents/parley/stream", `{"messages":"hi","memory":{"thread":"mine","resource":"u2"}}`, 403, "different resource"},
		{"last message not the user's", "POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"threadId":"mine"}`, 400, "last message"},
		{"unknown route", "GET", "/api/nothing", ``, 404, "no API route"},
		{"unknown method", "PUT", "/api/agents", ``, 404, "no API route PUT /api/agents"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := e.call(c.method, c.path, c.body, c.status)
			if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("error %q, want it to name %q", msg, c.msg)
			}
		})
	}
	// Nothing above reached the model or stored a message.
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("%d model requests, want 0", n)
	}
	if got := e.call("GET", "/api/memory/threads/mine/messages", "", 200); len(got["messages"].([]any)) != 0 {
		t.Errorf("messages stored by failed requests: %v", got["messages"])
	}
}

func TestAPIGenerate(t *testing.T) {
	e := newAPIEnv(t)

	// Without a thread: the answer, and nothing stored.
	e.model.Push(scripted.Reply{Text: "Hello there.", Usage: scripted.Usage{PromptTokens: 7, CompletionTokens: 3}})
	got := e.call("POST", "/api/agents/parley/generate", `{"messages":["Hi","Who are you?"],"runId":"run-1"}`, http.StatusOK)
	if got["text"] != "Hello there." || got["finishReason"] != "stop" || got["runId"] != "run-1" ||
		get(got, "usage", "inputTokens") != 7.0 || get(got, "usage", "outputTokens") != 3.0 ||
		get(got, "usage", "totalTokens") != 10.0 || get(got, "response", "modelId") != "x" {
		t.Errorf("generate: %v", got)
	}
	req := e.model.Requests()[0]
	if roles := promptRoles(req); roles != "system:Be brief.|user:Hi|user:Who are you?" {
		t.Errorf("prompt %s", roles)
	}
	if threads := e.call("GET", "/api/memory/threads", "", 200); get(threads, "total") != 0.0 {
		t.Errorf("generate without a thread stored threads: %v", threads)
	}

	// With memory: the thread is created on first use, the input and the
	// reply are stored, and the run is over when the answer comes.
	e.model.Push(scripted.Reply{Text: "Stored answer."})
	got = e.call("POST", "/api/agents/parley/generate",
		`{"messages":[{"role":"user","content":[{"type":"text","text":"Remember "},{"type":"text","text":"this."}]}],"memory":{"thread":"t_9","resource":"u1"}}`,
		http.StatusOK)
	if got["text"] != "Stored answer." || got["finishReason"] != "stop" {
		t.Errorf("generate on a thread: %v", got)
	}
	if _, live := e.rt.Live("t_9"); live {
		t.Error("the run is still live after generate answered")
	}
	msgs := e.call("GET", "/api/memory/threads/t_9/messages?resourceId=u1", "", http.StatusOK)
	want := []struct{ role, text string }{{"user", "Remember this."}, {"assistant", "Stored answer."}}
	checkMessages(t, msgs, "t_9", "u1", want...)
	if id := get(msgs, "messages", 1, "id"); id != get(got, "response", "id") {
		t.Errorf("response.id %v, want the stored reply's id %v", get(got, "response", "id"), id)
	}
	if thread := e.call("GET", "/api/memory/threads/t_9", "", 200); thread["title"] != "Remember this." {
		t.Errorf("thread title %v, want it taken from the first message", thread["title"])
	}

	// Legacy threadId on an existing thread; earlier input messages are kept.
	e.model.Push(scripted.Reply{Text: "Third."})
	e.call("POST", "/api/agents/parley/generate",
		`{"messages":[{"role":"assistant","content":"Noted."},{"role":"user","content":"And again."}],"threadId":"t_9"}`, http.StatusOK)
	msgs = e.call("GET", "/api/memory/threads/t_9/messages", "", http.StatusOK)
	want = append(want, struct{ role, text string }{"assistant", "Noted."}, struct{ role, text string }{"user", "And again."},
		struct{ role, text string }{"assistant", "Third."})
	checkMessages(t, msgs, "t_9", "u1", want...)
	if roles := promptRoles(e.model.Requests()[2]); roles != "system:Be brief.|user:Remember this.|assistant:Stored answer.|assistant:Noted.|user:And again." {
		t.Errorf("prompt on the thread: %s", roles)
	}
	page := e.call("GET", "/api/memory/threads/t_9/messages?page=1&perPage=2", "", http.StatusOK)
	if get(page, "total") != 5.0 || get(page, "hasMore") != true || get(page, "messages", 0, "role") != "assistant" ||
		get(page, "messages", 1, "content", "parts", 0, "text") != "And again." {
		t.Errorf("messages page 1: %v", page)
	}

	// A model failure is the model's: 502 with its reason; the reply is kept
	// as failed.
	e.model.Push(scripted.Reply{Status: http.StatusBadRequest, ErrorBody: `{"error":{"message":"model says no"}}`})
	got = e.call("POST", "/api/agents/parley/generate", `{"messages":"fail","memory":{"thread":"t_9","resource":"u1"}}`, http.StatusBadGateway)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "model says no") {
		t.Errorf("model failure: %v", got)
	}
}

func promptRoles(r scripted.Request) string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Role+":"+m.Content)
	}
	return strings.Join(parts, "|")
}

func checkMessages(t *testing.T, got map[string]any, threadID, resourceID string, want ...struct{ role, text string }) {
	t.Helper()
	msgs, _ := got["messages"].([]any)
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d: %v", len(msgs), len(want), msgs)
	}
	for i, w := range want {
		m := msgs[i]
		if get(m, "role") != w.role || get(m, "content", "format") != 2.0 || get(m, "content", "parts", 0, "type") != "text" ||
			get(m, "content", "parts", 0, "text") != w.text || get(m, "type") != "v2" ||
			get(m, "threadId") != threadID || get(m, "resourceId") != resourceID || get(m, "id") == nil || get(m, "createdAt") == nil {
			t.Errorf("message %d: %v, want %s %q", i, m, w.role, w.text)
		}
	}
}

// readChunks reads Mastra's SSE stream: "data: <json>" lines up to "data: [DONE]".
func readChunks(t *testing.T, r *bufio.Reader, stop func(chunk map[string]any) bool) (chunks []map[string]any, done bool) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return chunks, false
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			return chunks, true
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, c)
		if stop != nil && stop(c) {
			return chunks, false
		}
	}
}

func TestAPIStream(t *testing.T) {
	tokens := []string{"Streams ", "arrive ", "in ", "order", "."}
	for _, c := range []struct {
		name, body string
		thread     bool
	}{
		{"no thread", `{"messages":"Go"}`, false},
		{"thread", `{"messages":"Go","memory":{"thread":"s_1","resource":"u1"}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newAPIEnv(t)
			e.model.Push(scripted.Reply{Tokens: tokens})
			resp := e.send("POST", "/api/agents/parley/stream", c.body)
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			chunks, done := readChunks(t, bufio.NewReader(resp.Body), nil)
			if !done {
				t.Error("no data: [DONE]")
			}
			var types, deltas []string
			for _, ch := range chunks {
				types = append(types, ch["type"].(string))
				if ch["from"] != "AGENT" || ch["runId"] != chunks[0]["runId"] || ch["runId"] == "" {
					t.Errorf("chunk %v: want from AGENT and the run's id", ch)
				}
				if ch["type"] == "text-delta" {
					deltas = append(deltas, get(ch, "payload", "text").(string))
				}
			}
			if want := "start step-start text-start text-delta text-delta text-delta text-delta text-delta text-end step-finish finish"; strings.Join(types, " ") != want {
				t.Errorf("chunk types %v, want %s", types, want)
			}
			if !reflect.DeepEqual(deltas, tokens) {
				t.Errorf("deltas %q, want %q", deltas, tokens)
			}
			last := chunks[len(chunks)-1]
			if get(last, "payload", "stepResult", "reason") != "stop" || get(last, "payload", "output", "usage", "totalTokens") == 0.0 {
				t.Errorf("finish chunk %v", last)
			}
			if !c.thread {
				return
			}
			msgs := e.call("GET", "/api/memory/threads/s_1/messages", "", 200)
			checkMessages(t, msgs, "s_1", "u1", []struct{ role, text string }{{"user", "Go"}, {"assistant", "Streams arrive in order."}}...)
			if id := get(msgs, "messages", 1, "id"); get(chunks[0], "payload", "messageId") != id || get(chunks[2], "payload", "id") != id {
				t.Errorf("start/delta chunks %v %v do not name the reply %v", chunks[0], chunks[1], id)
			}
		})
	}
}

// A run on a thread is the thread's: a second one is refused while it goes
// on, and stopping it ends the stream with an abort chunk.
func TestAPIStreamBusyAndStopped(t *testing.T) {
	e := newAPIEnv(t)
	e.model.Push(scripted.Reply{Tokens: []string{"Partial ", "answer"}, StallAfter: 1})
	resp := e.send("POST", "/api/agents/parley/stream", `{"messages":"Long task","memory":{"thread":"b_1","resource":"u1"}}`)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	readChunks(t, body, func(c map[string]any) bool { return c["type"] == "text-delta" })

	got := e.call("POST", "/api/agents/parley/generate", `{"messages":"Me too","threadId":"b_1"}`, http.StatusConflict)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "still being written") {
		t.Errorf("busy thread: %v", got)
	}
	// The live reply is visible with what has arrived so far.
	msgs := e.call("GET", "/api/memory/threads/b_1/messages", "", 200)
	if get(msgs, "messages", 1, "content", "parts", 0, "text") != "Partial " {
		t.Errorf("live reply: %v", get(msgs, "messages", 1))
	}

	e.rt.Stop(t.Context(), "b_1")
	chunks, done := readChunks(t, body, nil)
	if !done || len(chunks) != 1 || chunks[0]["type"] != "abort" {
		t.Errorf("after stop: %v (done %v), want one abort chunk and [DONE]", chunks, done)
	}
}

func TestAPIStreamModelError(t *testing.T) {
	e := newAPIEnv(t)
	e.model.Push(scripted.Reply{Status: http.StatusBadRequest, ErrorBody: `{"error":{"message":"bad request to model"}}`})
	resp := e.send("POST", "/api/agents/parley/stream", `{"messages":"Go"}`)
	defer resp.Body.Close()
	chunks, done := readChunks(t, bufio.NewReader(resp.Body), nil)
	if !done || len(chunks) != 3 || chunks[0]["type"] != "start" || chunks[1]["type"] != "step-start" || chunks[2]["type"] != "error" {
		t.Fatalf("chunks %v (done %v), want start, step-start, error, [DONE]", chunks, done)
	}
	if msg, _ := get(chunks[2], "payload", "error", "message").(string); !strings.Contains(msg, "bad request to model") {
		t.Errorf("error chunk %v", chunks[2])
	}
}
