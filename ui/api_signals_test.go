package ui_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

func (e *apiEnv) thread() string {
	e.t.Helper()
	v := e.call("POST", "/api/memory/threads", `{"resourceId":"me","title":"t"}`, 200)
	return get(v, "id").(string)
}

func TestAPISendMessageWakesAndQueues(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	e.model.Push(scripted.Reply{Text: "hello"})
	v := e.call("POST", "/api/agents/parley/send-message", `{"message":"hi from curl","resourceId":"me","threadId":"`+th+`"}`, 200)
	if get(v, "action") != "wake" || get(v, "runId") == nil || get(v, "signal", "tagName") != "user" {
		t.Fatalf("send-message %v", v)
	}
	waitThread(t, e, th)
	// Text parts and {contents, attributes} are messages too.
	e.model.Push(scripted.Reply{Text: "ok"})
	v = e.call("POST", "/api/agents/parley/send-message", `{"message":{"contents":[{"type":"text","text":"ping"}],"attributes":{"from":"phone"}},"resourceId":"me","threadId":"`+th+`"}`, 200)
	if get(v, "action") != "wake" {
		t.Fatalf("send-message with contents to an idle chat: %v", v)
	}
	waitThread(t, e, th)
	if got := e.model.Requests()[1].Messages; got[len(got)-1].Content != `<user from="phone">ping</user>` {
		t.Fatalf("model read %q", got[len(got)-1].Content)
	}
	msgs := e.call("GET", "/api/memory/threads/"+th+"/messages", "", 200)
	if get(msgs, "messages", 0, "role") != "signal" || get(msgs, "messages", 0, "type") != "user" || get(msgs, "messages", 1, "type") != "v2" {
		t.Fatalf("stored signal as the API lists it: %v", get(msgs, "messages", 0))
	}
	e.model.Push(scripted.Reply{Text: "queued answer"})
	v = e.call("POST", "/api/agents/parley/queue-message", `{"message":"later","resourceId":"me","threadId":"`+th+`"}`, 200)
	if get(v, "action") != "wake" {
		t.Fatalf("queue-message on an idle thread: %v", v)
	}
	waitThread(t, e, th)
}

func TestAPISignalErrors(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	cases := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/agents/parley/send-message", `{"message":"x"}`, 400, "resourceId and threadId are required when runId is not provided"},
		{"/api/agents/parley/send-message", `{"message":"x","threadId":"` + th + `"}`, 400, "resourceId and threadId are required when runId is not provided"},
		{"/api/agents/parley/send-message", `{"message":"x","resourceId":"someone-else","threadId":"` + th + `"}`, 403, "Access denied: thread belongs to a different resource"},
		{"/api/agents/parley/send-message", `{"resourceId":"me","threadId":"` + th + `"}`, 400, "message is required"},
		{"/api/agents/parley/send-message", `{"message":"x","resourceId":"me","threadId":"nope"}`, 404, "not found"},
		{"/api/agents/parley/send-message", `{"message":"x","runId":"nope"}`, 404, "No active agent run found for signal target"},
		{"/api/agents/nobody/send-message", `{"message":"x","resourceId":"me","threadId":"` + th + `"}`, 404, "Agent with id nobody not found"},
		{"/api/agents/parley/send-message", `{"message":"x","resourceId":"me","threadId":"` + th + `","ifIdle":{"behavior":"nap"}}`, 400, `invalid ifIdle behavior "nap"`},
		{"/api/agents/parley/signals", `{"signal":{"type":"shout","contents":"x"},"resourceId":"me","threadId":"` + th + `"}`, 400, "Invalid signal type: shout."},
		{"/api/agents/parley/signals", `{"signal":{"type":"user","tagName":"9x","contents":"x"},"resourceId":"me","threadId":"` + th + `"}`, 400, "Invalid signal XML tag name: 9x"},
		{"/api/agents/parley/signals", `{"signal":{"type":"user","attributes":{"a b":1},"contents":"x"},"resourceId":"me","threadId":"` + th + `"}`, 400, "Invalid signal XML attribute name: a b"},
		{"/api/agents/parley/signals", `{"signal":{"type":"state","transient":true,"contents":"x"},"resourceId":"me","threadId":"` + th + `"}`, 400, "state signals cannot be transient"},
		{"/api/agents/parley/signals", `{"signal":{"type":"user"`, 400, "Invalid request body"},
		{"/api/agents/parley/state-signals", `{"state":{"cacheKey":"k"},"resourceId":"me","threadId":"` + th + `"}`, 400, "state signal id is required"},
	}
	e.call("POST", "/api/agents/parley/signals", `{"signal":{"id":"s1","type":"reactive","contents":"x"},"resourceId":"me","threadId":"`+th+`","ifIdle":{"behavior":"persist"}}`, 200)
	cases = append(cases, struct {
		path, body string
		status     int
		want       string
	}{"/api/agents/parley/signals", `{"signal":{"id":"s1","type":"reactive","contents":"again"},"resourceId":"me","threadId":"` + th + `","ifIdle":{"behavior":"persist"}}`, 409, "signal s1: a signal with this id was already accepted"})
	for _, c := range cases {
		v := e.call("POST", c.path, c.body, c.status)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: error %q, want %q", c.path, c.body, msg, c.want)
		}
	}
	if len(e.model.Requests()) != 0 {
		t.Fatal("a refused signal reached the model")
	}
}

func TestAPINotifications(t *testing.T) {
	e := newAPIEnv(t)
	e.rt.StartNotifications()
	th := e.thread()
	e.model.SetDefault(func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "seen it"} })
	v := e.call("POST", "/api/notifications", `{"threadId":"`+th+`","resourceId":"me","source":"ci","kind":"build","priority":"high","summary":"build 7 failed","payload":{"url":"http://ci/7"}}`, 201)
	id, _ := get(v, "record", "id").(string)
	if id == "" || get(v, "decision", "action") != "deliver" || get(v, "record", "status") != "delivered" {
		t.Fatalf("notify %v", v)
	}
	waitThread(t, e, th)
	if !strings.Contains(e.model.Requests()[0].Messages[len(e.model.Requests()[0].Messages)-1].Content, ">build 7 failed</notification>") {
		t.Fatal("the model never read the notification")
	}
	list := e.call("GET", "/api/notifications?threadId="+th+"&priority=high,urgent", "", 200)
	if n, _ := get(list, "notifications").([]any); len(n) != 1 || get(list, "notifications", 0, "payload", "url") != "http://ci/7" {
		t.Fatalf("list %v", list)
	}
	if l := e.call("GET", "/api/notifications?source=other", "", 200); len(get(l, "notifications").([]any)) != 0 {
		t.Fatalf("source filter %v", l)
	}
	v = e.call("PATCH", "/api/notifications/"+th+"/"+id, `{"status":"archived"}`, 200)
	if get(v, "notification", "status") != "archived" || get(v, "notification", "archivedAt") == nil {
		t.Fatalf("archive %v", v)
	}
	e.call("PATCH", "/api/notifications/"+th+"/nope", `{"status":"seen"}`, 404)
	e.call("PATCH", "/api/notifications/"+th+"/"+id, `{"status":"pending"}`, 400)
}

func TestAPINotificationBadInput(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	big := strings.Repeat("x", agentcore.MaxNotificationPayload)
	cases := []struct {
		body   string
		status int
		want   string
	}{
		{`{"threadId":"nope","source":"ci","kind":"k","summary":"s"}`, 404, "not found"},
		{`{"source":"ci","kind":"k","summary":"s"}`, 400, "threadId is required"},
		{`{"threadId":"` + th + `","source":"ci","kind":"k","summary":"s","priority":"critical"}`, 400, `invalid priority "critical"`},
		{`{"threadId":"` + th + `","kind":"k","summary":"s"}`, 400, "source is required"},
		{`{"threadId":"` + th + `","source":"ci","kind":"k","summary":"s","payload":"` + big + `"}`, 413, "256 KiB"},
		{`{"threadId":"` + th + `","source":"ci","kind":"k","summary":"s","payload":"` + big + big + `"}`, 413, "256 KiB"},
		{`{"threadId":"` + th + `","source":"ci"`, 400, "Invalid request body"},
		{`[1,2]`, 400, "want a JSON object"},
		{`{"threadId":"` + th + `","source":"ci","kind":"k","summary":"s","attributes":{"bad name":1}}`, 400, "Invalid signal XML attribute name: bad name"},
	}
	for _, c := range cases {
		v := e.call("POST", "/api/notifications", c.body, c.status)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, c.want) {
			t.Errorf("%.80s: error %q, want %q", c.body, msg, c.want)
		}
	}
	list := e.call("GET", "/api/notifications", "", 200)
	if n := get(list, "notifications").([]any); len(n) != 0 {
		t.Fatalf("bad input stored %d notifications", len(n))
	}
	e.call("GET", "/api/notifications?priority=critical", "", 400)
}

// A subscription streams every run of the thread, one after another, and
// leaving it stops nothing.
func TestAPISubscribeToThread(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := e.request(ctx, "GET", "/api/agents/parley/threads/"+th+"/subscribe")
	resp := e.do(req)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	e.model.Push(scripted.Reply{Text: "first"}, scripted.Reply{Text: "second"})
	for i, text := range []string{"one", "two"} {
		e.call("POST", "/api/agents/parley/send-message", fmt.Sprintf(`{"message":%q,"resourceId":"me","threadId":%q}`, text, th), 200)
		chunks, _ := readChunks(t, r, func(c map[string]any) bool { return c["type"] == "finish" })
		var types []string
		for _, c := range chunks {
			types = append(types, c["type"].(string))
		}
		got := strings.Join(types, ",")
		if !strings.HasPrefix(got, "start,data-user-message,step-start,text-start,text-delta") || !strings.HasSuffix(got, "step-finish,finish") {
			t.Fatalf("run %d chunks %s", i, got)
		}
		if get(chunks[1], "data", "contents") != text || get(chunks[1], "transient") != true {
			t.Fatalf("echo %v", chunks[1])
		}
		waitThread(t, e, th)
	}
}

func waitThread(t *testing.T, e *apiEnv, threadID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := e.rt.Wait(ctx, threadID); err != nil {
		t.Fatal(err)
	}
}

func (e *apiEnv) request(ctx context.Context, method, path string) *http.Request {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return req
}

func (e *apiEnv) do(req *http.Request) *http.Response {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// The signal routes answer Mastra's {accepted: true, runId, signal}: the
// run that took the signal, or the signal's own id when none did.
func TestAPISignalAnswersLikeMastra(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	e.model.Push(scripted.Reply{Text: "hello"})
	v := e.call("POST", "/api/agents/parley/send-message", `{"message":"hi","resourceId":"me","threadId":"`+th+`"}`, 200)
	runID, _ := v["runId"].(string)
	if v["accepted"] != true || runID == "" || get(v, "signal", "id") == runID || v["action"] != "wake" {
		t.Fatalf("send-message to an idle thread: %v", v)
	}
	if run, err := e.rt.GetRun(t.Context(), runID); err != nil || run.ThreadID != th {
		t.Fatalf("runId %s is not the thread's run: %v %v", runID, run, err)
	}
	waitThread(t, e, th)
	v = e.call("POST", "/api/agents/parley/signals", `{"signal":{"id":"s9","type":"reactive","contents":"fyi"},"resourceId":"me","threadId":"`+th+`","ifIdle":{"behavior":"persist"}}`, 200)
	if v["accepted"] != true || v["runId"] != "s9" || get(v, "signal", "id") != "s9" || v["action"] != "persist" {
		t.Fatalf("persisted signal: %v", v)
	}
}

// threads/abort stops the thread's run in progress, as Mastra's
// abortThreadStream: hostile or mismatched requests are refused or abort
// nothing.
func TestAPIAbortThread(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/agents/parley/threads/abort", ``, 400, "empty"},
		{"/api/agents/parley/threads/abort", `{}`, 400, "Invalid request body"},
		{"/api/agents/parley/threads/abort", `{"threadId":5}`, 400, "threadId must be a string"},
		{"/api/agents/parley/threads/abort", `{"threadId":""}`, 400, "threadId is required"},
		{"/api/agents/parley/threads/abort", `{"threadId":"` + strings.Repeat("x", 5<<20) + `"}`, 413, "too large"},
		{"/api/agents/nobody/threads/abort", `{"threadId":"` + th + `"}`, 404, "Agent with id nobody not found"},
		{"/api/agents/parley/threads/abort", `{"threadId":"` + th + `","resourceId":"someone-else"}`, 403, "different resource"},
	} {
		v := e.call("POST", c.path, c.body, c.status)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s %.40s: error %q, want %q", c.path, c.body, msg, c.want)
		}
	}
	for _, body := range []string{`{"threadId":"nope"}`, `{"threadId":"` + th + `"}`, `{"threadId":"</script>"}`} {
		if v := e.call("POST", "/api/agents/parley/threads/abort", body, 200); v["aborted"] != false {
			t.Errorf("%s with no run: %v", body, v)
		}
	}

	e.model.Push(scripted.Reply{Tokens: []string{"Partial ", "answer"}, StallAfter: 1})
	resp := e.send("POST", "/api/agents/parley/stream", `{"messages":"Long task","memory":{"thread":"`+th+`","resource":"me"}}`)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	chunks, _ := readChunks(t, body, func(c map[string]any) bool { return c["type"] == "text-delta" })
	runID := chunks[0]["runId"].(string)
	if v := e.call("POST", "/api/agents/parley/threads/abort", `{"threadId":"`+th+`","expectedRunId":"another"}`, 200); v["aborted"] != false {
		t.Errorf("another run expected: %v", v)
	}
	if v := e.call("POST", "/api/agents/parley/threads/abort", `{"threadId":"`+th+`","resourceId":"me","expectedRunId":"`+runID+`"}`, 200); v["aborted"] != true {
		t.Errorf("abort: %v", v)
	}
	chunks, done := readChunks(t, body, nil)
	if !done || len(chunks) != 1 || chunks[0]["type"] != "abort" {
		t.Errorf("after abort: %v (done %v), want one abort chunk and [DONE]", chunks, done)
	}
	if _, live := e.rt.Live(th); live {
		t.Error("the run still goes after abort")
	}
}
