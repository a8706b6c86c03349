package ui_test

import (
	"bufio"
	"strings"
	"testing"

	"parley/agentcore/scripted"
)

// streamUntilWaiting starts a run on thread th that stops at the scripted
// calls, and returns the run's id and its chunks.
func (e *apiEnv) streamUntilWaiting(th string, calls ...scripted.ToolCall) (string, []map[string]any) {
	e.t.Helper()
	e.model.Push(scripted.Reply{ToolCalls: calls})
	resp := e.send("POST", "/api/agents/parley/stream", `{"messages":"go","memory":{"thread":"`+th+`","resource":"u1"}}`)
	chunks, done := readChunks(e.t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()
	if !done || len(chunks) == 0 {
		e.t.Fatalf("stream on %s: done %v, %d chunks", th, done, len(chunks))
	}
	return chunks[0]["runId"].(string), chunks
}

// Hostile requests first: each is refused with Mastra's error shape, and
// the approval still waits; then a decline (generate) and an approval
// (stream) go on with the run as the web UI's answers do.
func TestAPIApproveAndDeclineToolCall(t *testing.T) {
	e := newAPIEnv(t, withGate)
	runID, chunks := e.streamUntilWaiting("t_a", scripted.ToolCall{ID: "c1", Name: "touch", Args: `{}`})
	var approval map[string]any
	for _, c := range chunks {
		if c["type"] == "tool-call-approval" {
			approval = c
		}
	}
	c1 := e.callIDOf("t_a", "c1")
	if approval == nil || get(approval, "payload", "toolCallId") != c1 || get(approval, "payload", "toolName") != "touch" ||
		!strings.Contains(get(approval, "payload", "resumeSchema").(string), `"approved"`) {
		t.Fatalf("no tool-call-approval chunk for %s in %v", c1, chunks)
	}

	for _, route := range []string{"approve-tool-call", "decline-tool-call", "approve-tool-call-generate", "decline-tool-call-generate"} {
		path := "/api/agents/parley/" + route
		for _, tc := range []struct {
			body   string
			status int
			want   string
		}{
			{``, 400, "empty"},
			{`[1]`, 400, "want a JSON object"},
			{`{"runId":5,"toolCallId":"x"}`, 400, "runId must be a string"},
			{`{"runId":"` + runID + `","toolCallId":"` + c1 + `"`, 400, "Invalid request body"},
			{`{"runId":"","toolCallId":"x"}`, 400, "Run id is required"},
			{`{"runId":"` + runID + `","toolCallId":""}`, 400, "Tool call id is required"},
			{`{"runId":"nope","toolCallId":"` + c1 + `"}`, 404, "has no tool call waiting"},
			{`{"runId":"` + runID + `","toolCallId":"nope"}`, 404, "is not waiting for approval"},
			{`{"runId":"` + runID + `","toolCallId":"` + c1 + `","reason":"` + strings.Repeat("x", 5<<20) + `"}`, 413, "too large"},
		} {
			got := e.call("POST", path, tc.body, tc.status)
			if msg, _ := got["error"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("%s %.60s: error %q, want it to say %q", route, tc.body, msg, tc.want)
			}
		}
		got := e.call("POST", path, `{}`, 400)
		if got["error"] != "Invalid request body" || get(got, "issues", 0, "field") != "runId" || get(got, "issues", 1, "field") != "toolCallId" {
			t.Errorf("%s {}: %v, want Mastra's issues for runId and toolCallId", route, got)
		}
		e.call("POST", "/api/agents/nope/"+route, `{"runId":"`+runID+`","toolCallId":"`+c1+`"}`, 404)
	}

	// Declined, with a reason the model reads: the run goes on to its end.
	e.model.Push(scripted.Reply{Text: "Left it alone."})
	out := e.call("POST", "/api/agents/parley/decline-tool-call-generate", `{"runId":"`+runID+`","toolCallId":"`+c1+`","reason":"not now"}`, 200)
	if out["text"] != "Left it alone." || get(out, "toolResults", 0, "payload", "isError") != true ||
		!strings.Contains(get(out, "toolResults", 0, "payload", "result").(string), "not now") {
		t.Fatalf("declined: %v", out)
	}
	if reqs := e.model.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Body), "not now") {
		t.Fatalf("the model did not read the reason: %s", reqs[len(reqs)-1].Body)
	}
	// Answered: it waits no more.
	e.call("POST", "/api/agents/parley/approve-tool-call", `{"runId":"`+runID+`","toolCallId":"`+c1+`"}`, 404)

	// A question is not an approval.
	runID, _ = e.streamUntilWaiting("t_a", scripted.ToolCall{ID: "q1", Name: "ask", Args: `{"question":"Which port?"}`})
	got := e.call("POST", "/api/agents/parley/approve-tool-call", `{"runId":"`+runID+`","toolCallId":"`+e.callIDOf("t_a", "q1")+`"}`, 400)
	if msg := got["error"].(string); !strings.Contains(msg, "resume-stream") {
		t.Fatalf("approving a question: %q", msg)
	}
	e.model.Push(scripted.Reply{Text: "8080 it is."})
	resp := e.send("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"`+e.callIDOf("t_a", "q1")+`","resumeData":"8080"}`)
	readChunks(t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()

	// Approved: the tool runs, the stream follows the run to its end.
	runID, _ = e.streamUntilWaiting("t_a", scripted.ToolCall{ID: "c2", Name: "touch", Args: `{}`})
	e.model.Push(scripted.Reply{Text: "Touched."})
	resp = e.send("POST", "/api/agents/parley/approve-tool-call", `{"runId":"`+runID+`","toolCallId":"`+e.callIDOf("t_a", "c2")+`"}`)
	chunks, done := readChunks(t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()
	var result any
	var text strings.Builder
	for _, c := range chunks {
		switch c["type"] {
		case "tool-result":
			result = get(c, "payload", "result")
		case "text-delta":
			text.WriteString(get(c, "payload", "text").(string))
		}
	}
	if !done || result != "touched" || text.String() != "Touched." || chunks[len(chunks)-1]["type"] != "finish" {
		t.Fatalf("approved stream: done %v, result %v, text %q, chunks %v", done, result, text.String(), chunks)
	}
}

// send-tool-approval answers at once with the run that goes on.
func TestAPISendToolApproval(t *testing.T) {
	e := newAPIEnv(t, withGate)
	e.streamUntilWaiting("t_b", scripted.ToolCall{ID: "c1", Name: "touch", Args: `{}`})
	c1 := e.callIDOf("t_b", "c1")
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{}`, 400, "Invalid request body"},
		{`{"resourceId":"u1","threadId":"t_b","toolCallId":"` + c1 + `","approved":"yes"}`, 400, "approved must be a boolean"},
		{`{"resourceId":"u1","threadId":"nope","toolCallId":"` + c1 + `","approved":true}`, 404, "Thread not found"},
		{`{"resourceId":"u2","threadId":"t_b","toolCallId":"` + c1 + `","approved":true}`, 403, "different resource"},
		{`{"resourceId":"u1","threadId":"t_b","toolCallId":"nope","approved":true}`, 404, "not waiting for approval"},
	} {
		got := e.call("POST", "/api/agents/parley/send-tool-approval", tc.body, tc.status)
		if msg, _ := got["error"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %q, want it to say %q", tc.body, msg, tc.want)
		}
	}
	e.model.Push(scripted.Reply{Text: "Done."})
	got := e.call("POST", "/api/agents/parley/send-tool-approval", `{"resourceId":"u1","threadId":"t_b","toolCallId":"`+c1+`","approved":true}`, 200)
	if got["accepted"] != true || got["toolCallId"] != c1 || got["runId"] == "" {
		t.Fatalf("send-tool-approval: %v", got)
	}
	waitThread(t, e, "t_b")
}
