package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
)

// gated is a runtime whose agent asks the user before every call of touch,
// answers a chat message sent while a call waits (autoResumeSuspendedTools),
// and has the ask tool too.
type gated struct {
	rt  *agentcore.Runtime
	srv *scripted.Server
	ran atomic.Int32 // touch calls that ran
	// block, when set, holds touch until its run is stopped.
	block atomic.Bool
}

func newGated(t *testing.T) *gated {
	t.Helper()
	g := &gated{srv: scripted.NewServer()}
	t.Cleanup(g.srv.Close)
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": g.srv.URL()}, APIKeys: map[string]string{"openai-compatible": "k"}, Getenv: func(string) string { return "" }, MaxRetries: -1}
	touch := &agentcore.Tool{ID: "touch", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		g.ran.Add(1)
		if g.block.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return "touched", nil
	}}
	ask := askTool()
	ask.ResumeFromMessage = func(text string) json.RawMessage { b, _ := json.Marshal(text); return b }
	agent := &agentcore.Agent{ID: "a", Model: "openai-compatible/t", AutoResumeSuspendedTools: true,
		Tools:  map[string]*agentcore.Tool{"touch": touch, "ask": ask, "wait": askTool()},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
		Hooks: agentcore.ToolHooks{BeforeToolCall: func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
			switch {
			case c.ToolName != "touch":
				return nil, nil
			case c.Approval == nil:
				return &agentcore.ToolDecision{RequireApproval: true, ApprovalPayload: map[string]string{"category": "edit"}}, nil
			case c.Approval.Decision == "deny":
				return &agentcore.ToolDecision{Error: "The user denied this tool call. Their reason: " + c.Approval.Reason}, nil
			}
			return nil, nil
		}}}
	g.rt = agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(func() { g.rt.Close(); db.Close() })
	return g
}

// waitFor sends "go" on a new thread and waits until the run suspends on
// the calls the model makes.
func (g *gated) waitFor(t *testing.T, calls ...scripted.ToolCall) agentcore.Thread {
	t.Helper()
	th := thread(t, g.rt)
	g.srv.Push(scripted.Reply{ToolCalls: calls})
	if _, err := g.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, g.rt, th.ID)
	if p, _ := g.rt.Pending(t.Context(), th.ID); len(p) != len(calls) {
		t.Fatalf("%d calls wait, want %d", len(p), len(calls))
	}
	return th
}

// oneRun checks the thread has run one conversation: the user's message,
// one reply, every run but the last closed, and what waits is the calls
// the provider named want.
func (g *gated) oneRun(t *testing.T, threadID string, want ...string) {
	t.Helper()
	waitIdle(t, g.rt, threadID)
	msgs := messages(t, g.rt, threadID)
	if got := shape(msgs); got != "user(complete) assistant(complete)" {
		t.Fatalf("thread %s: a second run started", got)
	}
	var ids, wantIDs []string
	pending, _ := g.rt.Pending(t.Context(), threadID)
	for _, p := range pending {
		ids = append(ids, p.ToolCallID)
	}
	for _, pid := range want {
		wantIDs = append(wantIDs, callIDOf(t, msgs, pid))
	}
	if strings.Join(ids, ",") != strings.Join(wantIDs, ",") {
		t.Fatalf("waiting calls %v, want %v (%v)", ids, wantIDs, want)
	}
	runs, _ := g.rt.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunRunning}})
	if len(runs) != min(len(want), 1) {
		t.Fatalf("%d runs suspended or running, want %d", len(runs), min(len(want), 1))
	}
}

// toolResults is what the model was told of the calls in request i.
func (g *gated) toolResults(i int) string {
	var out []string
	for _, m := range g.srv.Requests()[i].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return strings.Join(out, "|")
}

// A chat message sent while an approval waits denies the call, with the
// message as the reason, and the same run goes on (here to ask again).
func TestMessageWhileApprovalWaitsDeniesIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(rt *agentcore.Runtime, threadID string) error
	}{
		{"Send", func(rt *agentcore.Runtime, id string) error {
			_, err := rt.Send(context.Background(), agentcore.SendRequest{ThreadID: id, Text: "use b.txt instead"})
			return err
		}},
		{"Say", func(rt *agentcore.Runtime, id string) error {
			said, err := rt.Say(context.Background(), agentcore.SendRequest{ThreadID: id, Text: "use b.txt instead"})
			if err == nil && (said.Action != agentcore.Deliver || said.MessageID == "") {
				return errors.New("Say answered " + said.Action + ", want deliver to the run that waited")
			}
			return err
		}},
		{"SendMessage", func(rt *agentcore.Runtime, id string) error {
			acc, _, err := rt.SendMessage(context.Background(), "use b.txt instead", nil, agentcore.SignalTarget{ThreadID: id})
			if err == nil && (acc.Action != agentcore.Deliver || acc.RunID == "") {
				return errors.New("send-message answered " + acc.Action + ", want deliver to the run that waited")
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGated(t)
			th := g.waitFor(t, scripted.ToolCall{ID: "a1", Name: "touch", Args: `{"path":"a.txt"}`})
			g.srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "a2", Name: "touch", Args: `{"path":"b.txt"}`}}})
			if err := tc.send(g.rt, th.ID); err != nil {
				t.Fatal(err)
			}
			g.oneRun(t, th.ID, "a2")
			if g.ran.Load() != 0 {
				t.Fatal("the denied call ran")
			}
			if got := g.toolResults(1); got != "The user denied this tool call. Their reason: use b.txt instead" {
				t.Fatalf("model told %q", got)
			}
		})
	}
}

// A message answers an open question; one for a call that takes no message
// (no ResumeFromMessage) is refused by Send, naming why.
func TestMessageWhileCallWaits(t *testing.T) {
	g := newGated(t)
	th := g.waitFor(t, scripted.ToolCall{ID: "q1", Name: "ask", Args: `{"question":"Which port?"}`})
	g.srv.Push(scripted.Reply{Text: "Using 8080."})
	if _, err := g.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "8080"}); err != nil {
		t.Fatal(err)
	}
	g.oneRun(t, th.ID)
	if got := g.toolResults(1); got != "User answered: 8080" {
		t.Fatalf("model told %q", got)
	}

	th = g.waitFor(t, scripted.ToolCall{ID: "w1", Name: "wait", Args: `{"question":"Ready?"}`})
	_, err := g.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hello?"})
	if !errors.Is(err, agentcore.ErrWaiting) || !strings.Contains(err.Error(), "wait") {
		t.Fatalf("message for a call that takes none: %v", err)
	}
	g.oneRun(t, th.ID, "w1")
}

// Nothing else starts a run on a chat whose run waits: a queued turn and a
// signal are kept in the thread for the run to read when it goes on, a
// notification is delivered into the thread without waking it, Retry is
// refused.
func TestNothingWakesAWaitingRun(t *testing.T) {
	g := newGated(t)
	th := g.waitFor(t, scripted.ToolCall{ID: "a1", Name: "touch", Args: `{}`})
	requests := len(g.srv.Requests())

	acc, _, err := g.rt.QueueMessage(t.Context(), "and then deploy", agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil || acc.Action != agentcore.Persist || acc.RunID != "" {
		t.Fatalf("queued turn: %+v %v", acc, err)
	}
	acc, _, err = g.rt.SendSignal(t.Context(), agentcore.Signal{Type: agentcore.SignalReactive, Contents: "CI is green"}, agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil || acc.Action != agentcore.Persist {
		t.Fatalf("system signal: %+v %v", acc, err)
	}
	res, err := g.rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "build failed", Priority: agentcore.PriorityUrgent}, agentcore.NotifyTarget{ThreadID: th.ID})
	if err != nil || res.Accepted == nil || res.Accepted.Action != agentcore.Persist {
		t.Fatalf("urgent notification: %+v %v", res.Accepted, err)
	}
	if _, err := g.rt.Retry(t.Context(), th.ID); err == nil {
		t.Fatal("retry started a run beside the waiting one")
	}
	waitIdle(t, g.rt, th.ID)
	if _, live := g.rt.Live(th.ID); live || len(g.srv.Requests()) != requests {
		t.Fatal("a run started on a chat whose run waits")
	}
	if p, _ := g.rt.Pending(t.Context(), th.ID); len(p) != 1 {
		t.Fatalf("%d calls wait", len(p))
	}

	// Answered, the run goes on and reads what was kept meanwhile.
	g.srv.Push(scripted.Reply{Text: "Done."})
	a1 := callIDOf(t, messages(t, g.rt, th.ID), "a1")
	if _, err := g.rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a1, Data: json.RawMessage(`{"decision":"allow"}`)}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, g.rt, th.ID)
	if len(g.srv.Requests()) != requests+1 {
		t.Fatalf("%d model calls after the answer, want 1", len(g.srv.Requests())-requests)
	}
	req := g.srv.Requests()[requests]
	var told []string
	for _, m := range req.Messages {
		told = append(told, m.Content)
	}
	all := strings.Join(told, "\n")
	for _, want := range []string{"and then deploy", "CI is green", "build failed"} {
		if !strings.Contains(all, want) {
			t.Errorf("the run that went on did not read %q:\n%s", want, all)
		}
	}
}

// Stop while a question, a plan or an approval waits ends the run: the call
// closes as stopped (the model is told so on the next turn), the run and
// the reply are marked stopped, and nothing waits any more.
func TestStopWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name, tool, told string
	}{
		{"question", "ask", "The user stopped the run without answering."},
		{"plan", "wait", "The user stopped the run without answering."},
		{"approval", "touch", "The user stopped the run instead of deciding; touch was not run."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGated(t)
			th := g.waitFor(t, scripted.ToolCall{ID: "c1", Name: tc.tool, Args: `{"question":"?"}`})
			waiting, _ := g.rt.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended}})
			sub := g.rt.Subscribe(th.ID, agentcore.EventAbort)
			defer sub.Close()
			if !g.rt.Waiting(t.Context(), th.ID) {
				t.Fatal("Waiting is false while a call waits")
			}
			if !g.rt.Stop(t.Context(), th.ID) {
				t.Fatal("Stop found nothing to stop")
			}
			select {
			case <-sub.Ready():
			case <-time.After(5 * time.Second):
				t.Fatal("no abort event: screens do not learn the run ended")
			}
			if e := sub.Drain(); len(e) != 1 || e[0].RunID != waiting[0].ID {
				t.Fatalf("abort events %+v", e)
			}
			if p, _ := g.rt.Pending(t.Context(), th.ID); len(p) != 0 {
				t.Fatalf("%d calls still wait", len(p))
			}
			run, _ := g.rt.GetRun(t.Context(), waiting[0].ID)
			if run.Status != agentcore.RunStopped || run.FinishedAt.IsZero() {
				t.Fatalf("run %s", run.Status)
			}
			msgs := messages(t, g.rt, th.ID)
			reply := msgs[len(msgs)-1]
			ti := reply.Content.Parts[len(reply.Content.Parts)-1].ToolInvocation
			if reply.Status != agentcore.StatusInterrupted || reply.Content.Metadata["stopped"] != "user" || ti.State != "result" || !ti.Cancelled || !ti.IsError {
				t.Fatalf("reply %s %v, call %+v", reply.Status, reply.Content.Metadata, ti)
			}
			if g.rt.Stop(t.Context(), th.ID) || g.rt.Waiting(t.Context(), th.ID) {
				t.Fatal("the run still waits after Stop")
			}
			// The chat is free: a message starts a new run, and the model
			// reads what became of the call.
			g.srv.Push(scripted.Reply{Text: "ok"})
			if _, err := g.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "never mind"}); err != nil {
				t.Fatal(err)
			}
			waitIdle(t, g.rt, th.ID)
			if got := g.toolResults(1); got != tc.told {
				t.Fatalf("model told %q, want %q", got, tc.told)
			}
		})
	}
}

// Stop while a resumed run works on one call and another still waits ends
// both: nothing is left waiting.
func TestStopEndsEveryWaitingCall(t *testing.T) {
	g := newGated(t)
	th := g.waitFor(t, scripted.ToolCall{ID: "a1", Name: "touch", Args: `{}`}, scripted.ToolCall{ID: "a2", Name: "touch", Args: `{}`})
	g.block.Store(true)
	a1 := callIDOf(t, messages(t, g.rt, th.ID), "a1")
	if _, err := g.rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a1, Data: json.RawMessage(`{"decision":"allow"}`)}); err != nil {
		t.Fatal(err)
	}
	for g.ran.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if !g.rt.Stop(t.Context(), th.ID) {
		t.Fatal("nothing stopped")
	}
	waitIdle(t, g.rt, th.ID)
	if p, _ := g.rt.Pending(t.Context(), th.ID); len(p) != 0 {
		t.Fatalf("%d calls still wait after Stop", len(p))
	}
	if runs, _ := g.rt.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunRunning}}); len(runs) != 0 {
		t.Fatalf("%d runs still open", len(runs))
	}
}

// However many answers, messages and signals race while an approval waits,
// one run goes on.
func TestRacingAnswersStartOneRun(t *testing.T) {
	g := newGated(t)
	th := g.waitFor(t, scripted.ToolCall{ID: "a1", Name: "touch", Args: `{}`})
	a1 := callIDOf(t, messages(t, g.rt, th.ID), "a1")
	g.srv.SetDefault(func(scripted.Request) scripted.Reply {
		return scripted.Reply{Text: "ok then", Delay: time.Millisecond}
	})
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			switch i % 4 {
			case 0:
				_, _ = g.rt.Resume(ctx, agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a1, Data: json.RawMessage(`{"decision":"deny","reason":"inbox"}`)})
			case 1:
				_, _ = g.rt.Say(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "composer"})
			case 2:
				_, _, _ = g.rt.SendMessage(ctx, "api", nil, agentcore.SignalTarget{ThreadID: th.ID})
			case 3:
				_, _ = g.rt.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "generate"})
			}
		}()
	}
	wg.Wait()
	waitIdle(t, g.rt, th.ID)
	// No model was called while the approval waited: every call after the
	// first knows how it was answered.
	for i := 1; i < len(g.srv.Requests()); i++ {
		if got := g.toolResults(i); !strings.HasPrefix(got, "The user denied this tool call. Their reason: ") {
			t.Fatalf("model call %d was made while the approval waited (told %q)", i, got)
		}
	}
	if p, _ := g.rt.Pending(t.Context(), th.ID); len(p) != 0 || g.ran.Load() != 0 {
		t.Fatalf("%d calls wait, ran %d", len(p), g.ran.Load())
	}
	if runs, _ := g.rt.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunRunning}}); len(runs) != 0 {
		t.Fatalf("%d runs left open", len(runs))
	}
}

// A turn queued while the run works does not start when that run suspends:
// it is kept in the chat for the run to read when it goes on.
func TestQueuedTurnBehindASuspendingRun(t *testing.T) {
	g := newGated(t)
	th := thread(t, g.rt)
	ready, gate := make(chan struct{}), make(chan struct{})
	g.srv.Push(scripted.Reply{Text: "Let me touch it.", ToolCalls: []scripted.ToolCall{{ID: "a1", Name: "touch", Args: `{}`}},
		OnChunk: func(i int, _ string, _ time.Time) {
			if i == 1 {
				close(ready)
				<-gate
			}
		}})
	if _, err := g.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	<-ready
	acc, _, err := g.rt.QueueMessage(t.Context(), "then deploy", agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil || acc.Action != agentcore.Queue {
		t.Fatalf("queue while the run works: %+v %v", acc, err)
	}
	close(gate)
	waitIdle(t, g.rt, th.ID)
	if n := len(g.srv.Requests()); n != 1 || len(g.rt.Queued(th.ID)) != 0 {
		t.Fatalf("%d model calls, %d turns still queued: the queued turn started beside the waiting run", n, len(g.rt.Queued(th.ID)))
	}
	if got := shape(messages(t, g.rt, th.ID)); got != "user(complete) assistant(complete) signal:user(complete)" {
		t.Fatalf("thread %s", got)
	}
	if !g.rt.Waiting(t.Context(), th.ID) {
		t.Fatal("the run does not wait")
	}
}
