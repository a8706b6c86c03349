package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// withGate gives the test agent what a chat of Parley has: a tool that asks
// before it runs (touch), a question (ask), a plan (submit_plan), and a chat
// message that answers what waits.
func withGate(a *agentcore.Agent) {
	withAsk(a)
	a.AutoResumeSuspendedTools = true
	ask := a.Tools["ask"]
	ask.ResumeFromMessage = func(text string) json.RawMessage { b, _ := json.Marshal(text); return b }
	a.Tools["touch"] = &agentcore.Tool{ID: "touch", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		return "touched", nil
	}}
	a.Tools["submit_plan"] = &agentcore.Tool{
		ID:           "submit_plan",
		ResumeSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"feedback":{"type":"string"}},"required":["action"]}`),
		ResumeFromMessage: func(text string) json.RawMessage {
			b, _ := json.Marshal(map[string]string{"action": "rejected", "feedback": text})
			return b
		},
		Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			if tc.ResumeData != nil {
				return "Plan decided: " + string(tc.ResumeData), nil
			}
			return nil, tc.Suspend(map[string]string{"path": ".parley/plans/p.md", "title": "The plan", "plan": "1. Do it."})
		},
	}
	a.Hooks.BeforeToolCall = func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
		switch {
		case c.ToolName != "touch":
			return nil, nil
		case c.Approval == nil:
			return &agentcore.ToolDecision{RequireApproval: true, ApprovalPayload: map[string]string{"category": "edit"}}, nil
		case c.Approval.Decision == "deny":
			return &agentcore.ToolDecision{Error: "The user denied this tool call. Their reason: " + c.Approval.Reason}, nil
		}
		return nil, nil
	}
}

// post sends a command the way the page does and returns its status and
// body.
func (e *apiEnv) post(path, body string) (int, string) {
	e.t.Helper()
	resp := e.send("POST", path, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waiting starts a run on a new chat from the composer that suspends on
// calls, and checks the inbox lists them.
func (e *apiEnv) waiting(calls ...scripted.ToolCall) string {
	e.t.Helper()
	th := e.thread()
	e.model.Push(scripted.Reply{ToolCalls: calls})
	if code, body := e.post("/t/"+th+"/send", `{"draft":"go"}`); code != 200 || strings.Contains(body, "Not sent") {
		e.t.Fatalf("send: %d %s", code, body)
	}
	waitThread(e.t, e, th)
	e.inboxHolds(th, ids(calls)...)
	return th
}

func ids(calls []scripted.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.ID)
	}
	return out
}

var inboxCall = regexp.MustCompile(`data-key="call/([^/"]+)/([^"]+)"`)

// callIDOf is Parley's id for the call of the chat the provider named pid:
// tests script the provider's ids, Parley issues its own.
func (e *apiEnv) callIDOf(threadID, pid string) string {
	e.t.Helper()
	msgs, err := e.rt.ListMessages(e.t.Context(), threadID, agentcore.MessageQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range msgs {
		for _, p := range m.Content.Parts {
			if ti := p.ToolInvocation; ti != nil && ti.ProviderCallID == pid {
				return ti.ToolCallID
			}
		}
	}
	e.t.Fatalf("no call of chat %s the provider named %q", threadID, pid)
	return ""
}

// inboxHolds checks the inbox lists exactly the calls of the chat the
// provider named want.
func (e *apiEnv) inboxHolds(threadID string, want ...string) {
	e.t.Helper()
	page := e.inboxPage()
	var got, wantIDs []string
	for _, m := range inboxCall.FindAllStringSubmatch(page, -1) {
		if m[1] == threadID {
			got = append(got, m[2])
		}
	}
	for _, pid := range want {
		wantIDs = append(wantIDs, e.callIDOf(threadID, pid))
	}
	if strings.Join(got, ",") != strings.Join(wantIDs, ",") {
		e.t.Fatalf("the inbox lists %v for the chat, want %v (%v)", got, wantIDs, want)
	}
}

// oneReply checks the chat holds the user's message and one reply: no
// second run was started.
func (e *apiEnv) oneReply(threadID string) {
	e.t.Helper()
	v := e.call("GET", "/api/memory/threads/"+threadID+"/messages", "", 200)
	msgs, _ := get(v, "messages").([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, get(m, "role").(string))
	}
	if strings.Join(roles, " ") != "user assistant" {
		e.t.Fatalf("chat holds %v: a second run started", roles)
	}
}

// told is what the model was told of the calls in its request i.
func (e *apiEnv) told(i int) string {
	var out []string
	for _, m := range e.model.Requests()[i].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return strings.Join(out, "|")
}

// A message from the composer while an approval waits denies the call with
// the message as the reason, and the same run goes on: one reply, and the
// inbox lists the one approval that run asks next, not two.
func TestComposerMessageWhileApprovalWaits(t *testing.T) {
	e := newAPIEnv(t, withGate)
	th := e.waiting(scripted.ToolCall{ID: "a1", Name: "touch", Args: `{"path":"a.txt"}`})
	e.model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "a2", Name: "touch", Args: `{"path":"b.txt"}`}}})
	if code, body := e.post("/t/"+th+"/send", `{"draft":"use b.txt instead"}`); code != 200 || strings.Contains(body, "Not sent") {
		t.Fatalf("send: %d %s", code, body)
	}
	waitThread(t, e, th)
	e.oneReply(th)
	e.inboxHolds(th, "a2")
	if got := e.told(1); got != "The user denied this tool call. Their reason: use b.txt instead" {
		t.Fatalf("model told %q", got)
	}
	if n := e.openRuns(); n != 1 {
		t.Fatalf("%d runs wait or run, want 1", n)
	}
}

// An answer from the inbox goes on with the run that waited; a message sent
// at the same moment does not start another beside it: it reaches the run
// the answer resumed, or answers what that run asks next.
func TestInboxAnswerWhileApprovalWaits(t *testing.T) {
	e := newAPIEnv(t, withGate)
	th := e.waiting(scripted.ToolCall{ID: "a1", Name: "touch", Args: `{"path":"a.txt"}`})
	var next atomic.Int32
	e.model.SetDefault(func(scripted.Request) scripted.Reply {
		id := fmt.Sprintf("b%d", next.Add(1))
		return scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: id, Name: "touch", Args: `{"path":"b.txt"}`}}}
	})
	a1 := e.callIDOf(th, "a1")
	var wg sync.WaitGroup
	wg.Add(2)
	var answered int
	go func() {
		defer wg.Done()
		answered, _ = e.post("/t/"+th+"/answer/"+a1, `{"answer":{"decision":"deny","reason":"Denied from the inbox"}}`)
	}()
	go func() {
		defer wg.Done()
		e.post("/t/"+th+"/send", `{"draft":"use b.txt instead"}`)
	}()
	wg.Wait()
	waitThread(t, e, th)
	if answered != 200 {
		t.Fatalf("inbox answer: %d", answered)
	}
	// No model was called while a call waited, and one call waits now.
	for i := 1; i < len(e.model.Requests()); i++ {
		if got := e.told(i); strings.Contains(got, "has not answered yet") || !strings.HasPrefix(got, "The user denied this tool call. Their reason: ") {
			t.Fatalf("model call %d made while a call waited (told %q)", i, got)
		}
	}
	e.inboxHolds(th, fmt.Sprintf("b%d", next.Load()))
	if n := e.openRuns(); n != 1 {
		t.Fatalf("%d runs wait or run, want 1", n)
	}
	// Answered: the same answer again finds nothing waiting.
	calls := len(e.model.Requests())
	if code, body := e.post("/t/"+th+"/answer/"+a1, `{"answer":{"decision":"allow"}}`); !strings.Contains(body, "Not answered") {
		t.Fatalf("second answer: %d %s", code, body)
	}
	waitThread(t, e, th)
	if n := len(e.model.Requests()); n != calls || e.openRuns() != 1 {
		t.Fatalf("a second answer made %d model calls, %d open runs", n-calls, e.openRuns())
	}
}

// openRuns counts the runs that wait for the user or are in progress.
func (e *apiEnv) openRuns() int {
	e.t.Helper()
	runs, err := e.rt.ListRuns(e.t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunRunning}})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(runs)
}

// Mastra's API while an approval waits: generate answers the call with its
// message (the run that waited goes on and the answer is that run's);
// send-message does too; queue-message and a notification are kept in the
// chat; none starts a second run.
func TestAPIWhileApprovalWaits(t *testing.T) {
	e := newAPIEnv(t, withGate)
	th := e.waiting(scripted.ToolCall{ID: "a1", Name: "touch", Args: `{}`})
	e.model.Push(scripted.Reply{Text: "Fine, b.txt then. ", ToolCalls: []scripted.ToolCall{{ID: "a2", Name: "touch", Args: `{"path":"b.txt"}`}}})
	v := e.call("POST", "/api/agents/parley/generate", `{"messages":"use b.txt instead","memory":{"thread":"`+th+`","resource":"me"}}`, 200)
	if get(v, "text") != "Fine, b.txt then. " || get(v, "finishReason") != "suspended" {
		t.Fatalf("generate while an approval waits: %v", v)
	}
	waitThread(t, e, th)
	e.oneReply(th)
	e.inboxHolds(th, "a2")
	if got := e.told(1); got != "The user denied this tool call. Their reason: use b.txt instead" {
		t.Fatalf("model told %q", got)
	}

	requests := len(e.model.Requests())
	v = e.call("POST", "/api/agents/parley/queue-message", `{"message":"then deploy","resourceId":"me","threadId":"`+th+`"}`, 200)
	if get(v, "action") != "persist" {
		t.Fatalf("queue-message while an approval waits: %v", v)
	}
	e.call("POST", "/api/notifications", `{"source":"ci","kind":"build","summary":"build failed","priority":"urgent","threadId":"`+th+`","agentId":"parley","resourceId":"me"}`, 201)
	waitThread(t, e, th)
	if len(e.model.Requests()) != requests {
		t.Fatal("a queued turn or a notification started a run beside the waiting one")
	}
	e.inboxHolds(th, "a2")

	e.model.Push(scripted.Reply{Text: "Stopping there."})
	v = e.call("POST", "/api/agents/parley/send-message", `{"message":"no, leave it","resourceId":"me","threadId":"`+th+`"}`, 200)
	if get(v, "action") != "deliver" {
		t.Fatalf("send-message while an approval waits: %v", v)
	}
	waitThread(t, e, th)
	e.inboxHolds(th)
	if got := e.told(requests); !strings.Contains(got, "Their reason: no, leave it") {
		t.Fatalf("model told %q", got)
	}
	var read []string
	for _, m := range e.model.Requests()[requests].Messages {
		read = append(read, m.Content)
	}
	if all := strings.Join(read, "\n"); !strings.Contains(all, "then deploy") || !strings.Contains(all, "build failed") {
		t.Fatalf("the run that went on did not read what was kept:\n%s", all)
	}
}

// Stop while a question, a plan or an approval waits ends the run: the item
// leaves the inbox, the card offers its buttons no more, and the chat takes
// a new message.
func TestStopWhileWaitingClearsInbox(t *testing.T) {
	for _, tc := range []struct{ name, tool, args string }{
		{"question", "ask", `{"question":"Which port?"}`},
		{"plan", "submit_plan", `{"path":".parley/plans/p.md"}`},
		{"approval", "touch", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newAPIEnv(t, withGate)
			th := e.waiting(scripted.ToolCall{ID: "c1", Name: tc.tool, Args: tc.args})
			if code, _ := e.post("/t/"+th+"/stop", ""); code != 204 {
				t.Fatalf("stop: %d", code)
			}
			e.inboxHolds(th)
			if code, page := e.fetch("/t/" + th); code != 200 || strings.Contains(page, "data-question") || strings.Contains(page, "data-approval") || strings.Contains(page, "plan-pending") || !strings.Contains(page, "Stopped") {
				t.Fatalf("chat after Stop (%d) still offers the call's buttons or says nothing of the stop:\n%s", code, page)
			}
			e.model.Push(scripted.Reply{Text: "ok"})
			if code, body := e.post("/t/"+th+"/send", `{"draft":"something else"}`); code != 200 || strings.Contains(body, "Not sent") {
				t.Fatalf("send after stop: %d %s", code, body)
			}
			waitThread(t, e, th)
			if n := len(e.model.Requests()); n != 2 {
				t.Fatalf("%d model calls, want 2", n)
			}
		})
	}
}
