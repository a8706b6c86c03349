package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// Hostile requests to the thread-following routes and suspended-runs, each
// refused with Mastra's error shape, naming what is wrong.
func TestAPIIdleRoutesHostile(t *testing.T) {
	e := newAPIEnv(t, withGate)
	th := e.thread()
	huge := `"` + strings.Repeat("x", 5<<20) + `"`
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/api/agents/parley/threads/subscribe", ``, 400, "empty"},
		{"POST", "/api/agents/parley/threads/subscribe", `[1]`, 400, "want a JSON object"},
		{"POST", "/api/agents/parley/threads/subscribe", `{}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/threads/subscribe", `{"threadId":5}`, 400, "threadId must be a string"},
		{"POST", "/api/agents/parley/threads/subscribe", `{"threadId":""}`, 400, "threadId is required"},
		{"POST", "/api/agents/parley/threads/subscribe", `{"threadId":"</script>"}`, 400, "threadId"},
		{"POST", "/api/agents/parley/threads/subscribe", `{"threadId":` + huge + `}`, 413, "too large"},
		{"POST", "/api/agents/nobody/threads/subscribe", `{"threadId":"` + th + `"}`, 404, "Agent with id nobody not found"},
		{"POST", "/api/agents/parley/threads/subscribe", `{"threadId":"` + th + `","resourceId":"someone-else"}`, 403, "different resource"},

		{"POST", "/api/agents/parley/stream-until-idle", ``, 400, "empty"},
		{"POST", "/api/agents/parley/stream-until-idle", `{}`, 400, `"messages" is required`},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","maxIdleMs":0}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","maxIdleMs":1.5}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","untilIdle":"yes"}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","maxSteps":1000}`, 400, "maxSteps"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","memory":{"thread":"t_new"}}`, 400, "resource ID is required"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","memory":{"thread":"</x>","resource":"me"}}`, 400, "threadId"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","memory":{"thread":"` + th + `","resource":"someone-else"}}`, 403, "different resource"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":` + huge + `}`, 413, "too large"},
		{"POST", "/api/agents/nobody/stream-until-idle", `{"messages":"hi","memory":{"thread":"` + th + `","resource":"me"}}`, 404, "Agent with id nobody not found"},

		{"POST", "/api/agents/parley/resume-stream-until-idle", ``, 400, "empty"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"","resumeData":1}`, 400, "Run id is required"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":7,"resumeData":1}`, 400, "runId must be a string"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"nope","resumeData":1}`, 404, "not found"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"nope","resumeData":1,"maxIdleMs":-1}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"x","resumeData":1,"memory":{"thread":"</x>"}}`, 400, "threadId"},
		{"POST", "/api/agents/nobody/resume-stream-until-idle", `{"runId":"x","resumeData":1}`, 404, "Agent with id nobody not found"},

		{"POST", "/api/agents/parley/observe", ``, 400, "empty"},
		{"POST", "/api/agents/parley/observe", `{}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/observe", `{"runId":"x","offset":"a"}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/observe", `{"runId":"nope"}`, 404, "Run nope of agent parley not found"},
		{"POST", "/api/agents/nobody/observe", `{"runId":"nope"}`, 404, "Agent with id nobody not found"},

		{"GET", "/api/agents/nobody/suspended-runs", ``, 404, "Agent with id nobody not found"},
		{"GET", "/api/agents/parley/suspended-runs?perPage=0&page=0", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?perPage=abc", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?perPage=1000000", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?perPage=1.5", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?page=-1", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?fromDate=yesterday", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?fromDate=2026-02-01&toDate=2026-01-01", ``, 400, "Invalid query parameters"},
		{"GET", "/api/agents/parley/suspended-runs?threadId=nope", ``, 403, "Access denied: thread not found"},
		{"GET", "/api/agents/parley/suspended-runs?threadId=" + th + "&resourceId=someone-else", ``, 403, "different resource"},
	} {
		v := e.call(c.method, c.path, c.body, c.status)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s %s %.60s: error %q, want %q", c.method, c.path, c.body, msg, c.want)
		}
	}
	// Zod's issues name the field.
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/api/agents/parley/threads/subscribe", `{}`, "threadId"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"resumeData":1}`, "runId"},
		{"POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"r"}`, "resumeData"},
		{"POST", "/api/agents/parley/stream-until-idle", `{"messages":"hi","maxIdleMs":0}`, "maxIdleMs"},
		{"POST", "/api/agents/parley/observe", `{"runId":"x","offset":"a"}`, "offset"},
		{"GET", "/api/agents/parley/suspended-runs?perPage=0", ``, "perPage"},
		{"GET", "/api/agents/parley/suspended-runs?page=-1", ``, "page"},
		{"GET", "/api/agents/parley/suspended-runs?toDate=x", ``, "toDate"},
		{"GET", "/api/agents/parley/suspended-runs?fromDate=2026-02-01&toDate=2026-01-01", ``, "fromDate"},
	} {
		v := e.call(c.method, c.path, c.body, 400)
		if get(v, "issues", 0, "field") != c.field {
			t.Errorf("%s %s %s: issues %v, want one for %s", c.method, c.path, c.body, get(v, "issues"), c.field)
		}
	}
	if _, live := e.rt.Live(th); live {
		t.Error("a refused request started a run")
	}
}

// chunkTypes lists the chunks' types, and the distinct run ids in order.
func chunkTypes(chunks []map[string]any) (types string, runs []string) {
	var ts []string
	for _, c := range chunks {
		ts = append(ts, c["type"].(string))
		if id, _ := c["runId"].(string); id != "" && (len(runs) == 0 || runs[len(runs)-1] != id) {
			runs = append(runs, id)
		}
	}
	return strings.Join(ts, ","), runs
}

// stall makes the next reply hold after its first chunk until release is
// closed, so the test can act while a run is in progress.
func stall(release <-chan struct{}) func(int, string, time.Time) {
	return func(i int, _ string, _ time.Time) {
		if i == 0 {
			<-release
		}
	}
}

// stream-until-idle streams the run, then the run a message queued meanwhile
// starts, and ends once the thread is idle; a POST threads/subscribe opened
// before the thread existed sees both runs too.
func TestAPIStreamUntilIdle(t *testing.T) {
	e := newAPIEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	subReq, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/api/agents/parley/threads/subscribe", strings.NewReader(`{"threadId":"t_idle","resourceId":"u1"}`))
	subResp := e.do(subReq)
	defer subResp.Body.Close()
	if subResp.StatusCode != 200 || subResp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("subscribe: %d %s", subResp.StatusCode, subResp.Header.Get("Content-Type"))
	}

	release := make(chan struct{})
	e.model.Push(scripted.Reply{Tokens: []string{"First ", "answer."}, OnChunk: stall(release)}, scripted.Reply{Text: "Second answer."})
	resp := e.send("POST", "/api/agents/parley/stream-until-idle", `{"messages":"one","memory":{"thread":"t_idle","resource":"u1"},"maxIdleMs":1000}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream-until-idle: %d %s", resp.StatusCode, raw)
	}
	body := bufio.NewReader(resp.Body)
	first, _ := readChunks(t, body, func(c map[string]any) bool { return c["type"] == "text-delta" })
	if v := e.call("POST", "/api/agents/parley/queue-message", `{"message":"two","resourceId":"u1","threadId":"t_idle"}`, 200); v["action"] != "queue" {
		t.Fatalf("queue-message while the run goes: %v", v)
	}
	close(release)
	rest, done := readChunks(t, body, nil)
	if !done {
		t.Fatal("stream-until-idle did not end with [DONE]")
	}
	types, runs := chunkTypes(append(first, rest...))
	if len(runs) != 2 || strings.Count(types, "start,") < 2 || !strings.HasPrefix(types, "start,step-start,text-start,text-delta") ||
		!strings.HasSuffix(types, "text-end,step-finish,finish") || strings.Count(types, ",finish") != 2 {
		t.Fatalf("runs %v, chunks %s: want both runs, each to its finish", runs, types)
	}
	var text strings.Builder
	for _, c := range rest {
		if c["type"] == "text-delta" && c["runId"] == runs[1] {
			text.WriteString(get(c, "payload", "text").(string))
		}
	}
	if text.String() != "Second answer." {
		t.Errorf("the queued turn's reply %q", text.String())
	}
	if _, live := e.rt.Live("t_idle"); live {
		t.Error("the stream ended before the thread was idle")
	}

	// The subscription saw the same two runs.
	sub := bufio.NewReader(subResp.Body)
	var seen []map[string]any
	for range 2 {
		chunks, _ := readChunks(t, sub, func(c map[string]any) bool { return c["type"] == "finish" })
		seen = append(seen, chunks...)
	}
	if _, subRuns := chunkTypes(seen); strings.Join(subRuns, " ") != strings.Join(runs, " ") {
		t.Errorf("subscription runs %v, stream-until-idle's %v", subRuns, runs)
	}

	// Without a thread it is stream: one run, then [DONE].
	e.model.Push(scripted.Reply{Text: "Alone."})
	resp2 := e.send("POST", "/api/agents/parley/stream-until-idle", `{"messages":"solo"}`)
	chunks, done := readChunks(t, bufio.NewReader(resp2.Body), nil)
	resp2.Body.Close()
	if types, runs := chunkTypes(chunks); !done || len(runs) != 1 || !strings.HasSuffix(types, "finish") {
		t.Errorf("without a thread: %s (done %v)", types, done)
	}
}

// suspended-runs lists the runs waiting on an approval or an answer, as
// Mastra's schema says, filtered and paged; resume-stream-until-idle
// answers one and streams to the end; observe follows a run in progress.
func TestAPISuspendedRunsAndObserve(t *testing.T) {
	e := newAPIEnv(t, withGate)
	schemas := manifestSchemas(t, e)
	approvalRun, _ := e.streamUntilWaiting("t_a", scripted.ToolCall{ID: "c1", Name: "touch", Args: `{"path":"a.txt"}`})
	askRun, _ := e.streamUntilWaiting("t_b", scripted.ToolCall{ID: "c2", Name: "ask", Args: `{"question":"Which port?"}`})

	list := func(query string) map[string]any {
		t.Helper()
		v := e.call("GET", "/api/agents/parley/suspended-runs"+query, "", 200)
		if err := schemas["GET /agents/:agentId/suspended-runs"].Validate(anyOf(v)); err != nil {
			t.Errorf("suspended-runs%s does not fit Mastra's schema: %v\n%v", query, err, v)
		}
		return v
	}
	v := list("")
	if v["total"] != 2.0 || get(v, "runs", 0, "runId") != askRun || get(v, "runs", 1, "runId") != approvalRun {
		t.Fatalf("suspended runs %v, want %s then %s", v, askRun, approvalRun)
	}
	if get(v, "runs", 1, "toolCalls", 0, "requiresApproval") != true || get(v, "runs", 1, "toolCalls", 0, "args", "path") != "a.txt" ||
		get(v, "runs", 1, "toolCalls", 0, "toolName") != "touch" || get(v, "runs", 1, "resourceId") != "u1" {
		t.Errorf("approval run %v", get(v, "runs", 1))
	}
	if get(v, "runs", 0, "toolCalls", 0, "requiresApproval") != false || get(v, "runs", 0, "toolCalls", 0, "suspendPayload", "question") != "Which port?" ||
		get(v, "runs", 0, "status") != "suspended" || get(v, "runs", 0, "threadId") != "t_b" {
		t.Errorf("asking run %v", get(v, "runs", 0))
	}
	if v := list("?threadId=t_a&resourceId=u1"); v["total"] != 1.0 || get(v, "runs", 0, "runId") != approvalRun {
		t.Errorf("by thread: %v", v)
	}
	if v := list("?resourceId=other"); v["total"] != 0.0 || len(get(v, "runs").([]any)) != 0 {
		t.Errorf("another resource: %v", v)
	}
	if v := list("?perPage=1&page=1"); v["total"] != 2.0 || len(get(v, "runs").([]any)) != 1 || get(v, "runs", 0, "runId") != approvalRun {
		t.Errorf("page 1 of 1: %v", v)
	}
	if v := list("?perPage=1&page=99"); v["total"] != 2.0 || len(get(v, "runs").([]any)) != 0 {
		t.Errorf("past the end: %v", v)
	}
	if v := list("?toDate=2000-01-01T00:00:00Z"); v["total"] != 0.0 {
		t.Errorf("before any run: %v", v)
	}

	// Observing a run that waits ends at once.
	resp := e.send("POST", "/api/agents/parley/observe", `{"runId":"`+askRun+`","offset":0}`)
	chunks, done := readChunks(t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()
	if resp.StatusCode != 200 || !done || len(chunks) != 0 {
		t.Errorf("observe a waiting run: %d, %v (done %v)", resp.StatusCode, chunks, done)
	}

	// The answer goes on with the run, followed by observe and streamed
	// by resume-stream-until-idle to its end.
	c2 := e.callIDOf("t_b", "c2")
	release := make(chan struct{})
	e.model.Push(scripted.Reply{Tokens: []string{"Port ", "8080."}, OnChunk: stall(release)})
	resp = e.send("POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"`+askRun+`","toolCallId":"`+c2+`","resumeData":"8080"}`)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	first, _ := readChunks(t, body, func(c map[string]any) bool { return c["type"] == "text-delta" })
	resumed, _ := first[0]["runId"].(string)
	obs := e.send("POST", "/api/agents/parley/observe", `{"runId":"`+resumed+`"}`)
	defer obs.Body.Close()
	if obs.StatusCode != 200 || obs.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("observe: %d %s", obs.StatusCode, obs.Header.Get("Content-Type"))
	}
	close(release)
	rest, done := readChunks(t, body, nil)
	types, runs := chunkTypes(append(first, rest...))
	if !done || len(runs) != 1 || !strings.Contains(types, "tool-result") || !strings.HasSuffix(types, "finish") {
		t.Errorf("resume-stream-until-idle: %s (runs %v, done %v)", types, runs, done)
	}
	observed, done := readChunks(t, bufio.NewReader(obs.Body), nil)
	if types, _ := chunkTypes(observed); !done || !strings.HasSuffix(types, "step-finish,finish") {
		t.Errorf("observe: %s (done %v)", types, done)
	}
	if v := list(""); v["total"] != 1.0 || get(v, "runs", 0, "runId") != approvalRun {
		t.Errorf("after the answer: %v", v)
	}
	// Answered twice: nothing waits.
	e.call("POST", "/api/agents/parley/resume-stream-until-idle", `{"runId":"`+askRun+`","toolCallId":"`+c2+`","resumeData":"9"}`, 404)
}

// anyOf turns a decoded answer into the plain JSON values the schema
// validator reads.
func anyOf(v map[string]any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}
