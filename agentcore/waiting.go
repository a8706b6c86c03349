package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"parley/agentcore/llm"
)

// One run per thread, whatever waits. A run that suspends on a call (a
// question, a plan, an approval) still holds its thread: until the call is
// answered or the run is stopped, nothing starts a run beside it. Every
// entry point decides under the thread's lane:
//
//   - a user message (Send, Say, a user signal that would wake the thread)
//     answers the oldest waiting call that takes one: a question's answer,
//     a plan's requested changes, an approval denied with the message as
//     the reason; the same run goes on (Resume);
//   - a queued turn, a signal or a notification that would wake the thread
//     is kept in it instead (persist): the run reads it when it goes on;
//   - Retry and any other new run are refused with ErrWaiting;
//   - Stop ends the waiting run: its calls close as stopped.

// ErrWaiting: the thread's run waits for the user, and what was asked would
// start a second run beside it.
var ErrWaiting = errors.New("this chat's run waits for your answer to a question, a plan or an approval: answer it, or stop the run")

// waitingCalls lists the thread's calls that wait for the user, oldest
// first. The caller holds the thread's lane.
func (rt *Runtime) waitingCalls(ctx context.Context, threadID string) ([]ToolInvocation, error) {
	calls, err := rt.Pending(ctx, threadID)
	if err != nil {
		return nil, fmt.Errorf("read what waits on thread %s: %w", threadID, err)
	}
	return calls, nil
}

// Waiting reports whether a run of the thread waits for the user (and no
// run is in progress): the chat offers Stop, and a message answers.
func (rt *Runtime) Waiting(ctx context.Context, threadID string) bool {
	if rt.liveRun(threadID) != nil {
		return false
	}
	calls, err := rt.Pending(ctx, threadID)
	return err == nil && len(calls) > 0
}

// messageAnswer is the resume data a user message gives the call ti, if it
// takes one: an approval is denied with the message as the reason; a tool
// turns it into its answer (ResumeFromMessage).
func messageAnswer(tools map[string]*Tool, ti ToolInvocation, text string) (json.RawMessage, bool) {
	if ti.Approval {
		b, _ := json.Marshal(ApprovalDecision{Decision: "deny", Reason: text})
		return b, true
	}
	if t := tools[ti.ToolName]; t != nil && t.ResumeFromMessage != nil {
		return t.ResumeFromMessage(text), true
	}
	return nil, false
}

// answerLocked answers the oldest of calls that takes a message with text,
// for an agent that lets a message answer (AutoResumeSuspendedTools); the
// run that waited goes on. ErrWaiting names the call when none does. The
// caller holds the thread's lane.
func (rt *Runtime) answerLocked(ctx context.Context, thread Thread, agent *Agent, calls []ToolInvocation, text string) (Run, string, error) {
	if agent.AutoResumeSuspendedTools {
		tools := agent.toolset()
		for _, ti := range calls {
			data, ok := messageAnswer(tools, ti, text)
			if !ok {
				continue
			}
			run, err := rt.resumeLocked(ctx, thread, ResumeRequest{ThreadID: thread.ID, ToolCallID: ti.ToolCallID, Data: data})
			if err != nil {
				return Run{}, "", err
			}
			return run, rt.liveRun(thread.ID).messageID(), nil
		}
	}
	return Run{}, "", fmt.Errorf("%w (%s %s takes no message)", ErrWaiting, calls[0].ToolName, calls[0].ToolCallID)
}

// Said tells what became of a message written in a chat (Say).
type Said struct {
	// Action is Deliver (read by the run in progress at its next step, or
	// the answer to the call that waited: that run goes on) or Wake (a new
	// run answers it).
	Action    string
	Run       Run
	MessageID string // the reply the run writes; "" when delivered to a running loop
}

// Say is a message the user writes in a chat, whatever the chat is doing,
// decided under the thread's lane: read by the run in progress at its next
// step; the answer to the call its run waits on (see Send); else the start
// of a new run.
func (rt *Runtime) Say(ctx context.Context, req SendRequest) (Said, error) {
	in, agent, thread, model, err := rt.sendTarget(ctx, req)
	if err != nil {
		return Said{}, err
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	if l := rt.liveRun(thread.ID); l != nil {
		sig, err := NewSignal(Signal{Type: SignalUser, Contents: in.text, Files: in.files})
		if err != nil {
			return Said{}, err
		}
		sig.AcceptedAt = time.Now().UTC()
		if err := rt.deliverLocked(ctx, thread, l, sig); err != nil {
			return Said{}, err
		}
		return Said{Action: Deliver, Run: l.run}, nil
	}
	sent, err := rt.sendLocked(ctx, thread, agent, model, in, RunOptions{})
	if err != nil {
		return Said{}, err
	}
	action := Wake
	if sent.User.ID == "" {
		action = Deliver // the answer to the call that waited
	}
	return Said{Action: action, Run: sent.Run, MessageID: sent.MessageID}, nil
}

// deliverLocked puts sig in the running loop's next model input. The
// caller holds the thread's lane.
func (rt *Runtime) deliverLocked(ctx context.Context, thread Thread, l *liveRun, sig Signal) error {
	if !sig.Transient {
		if err := rt.storeSignal(ctx, thread, sig, StatusQueued); err != nil {
			return err
		}
	}
	l.pending = append(l.pending, sig)
	return nil
}

// Texts for a call closed by Stop: the card shows "Stopped: …", the model
// reads the longer one on the next turn.
const (
	stoppedAnswer   = "not answered"
	stoppedApproval = "not run"
)

func stoppedModelText(ti ToolInvocation) string {
	if ti.Approval {
		return "The user stopped the run instead of deciding; " + ti.ToolName + " was not run."
	}
	return "The user stopped the run without answering."
}

// stopWaitingLocked ends the thread's waiting run: every call that waits
// closes as stopped, the replies holding them and the suspended runs are
// marked stopped, and screens get the run's abort. It reports whether
// anything waited. The caller holds the thread's lane, and no run is in
// progress.
func (rt *Runtime) stopWaitingLocked(ctx context.Context, threadID string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	history, err := rt.store.ListMessages(ctx, threadID, MessageQuery{Limit: historyLimit, Last: true})
	if err != nil {
		rt.Log.Error("stop a waiting run", "thread", threadID, "err", err)
		return false
	}
	closed := rt.closeWaiting(ctx, history)
	runs, err := rt.store.ListRuns(ctx, RunQuery{Statuses: []RunStatus{RunSuspended}})
	if err != nil {
		rt.Log.Error("stop a waiting run", "thread", threadID, "err", err)
	}
	var last Run
	for _, r := range runs {
		if r.ThreadID != threadID {
			continue
		}
		r.Status, r.FinishedAt = RunStopped, time.Now().UTC()
		if err := rt.store.FinishRun(ctx, r); err != nil {
			rt.Log.Error("mark a waiting run stopped", "run", r.ID, "err", err)
		}
		if last.ID == "" || r.StartedAt.After(last.StartedAt) {
			last = r
		}
	}
	if len(closed) == 0 && last.ID == "" {
		return false
	}
	// Turns queued behind the run are kept as sent: the next run reads them.
	for _, q := range rt.queued[threadID] {
		rt.keep(threadID, []Signal{q.sig})
	}
	delete(rt.queued, threadID)
	for _, id := range closed[:max(len(closed)-1, 0)] {
		rt.bus.Publish(Event{Type: EventMessageUpdated, ThreadID: threadID, MessageID: id})
	}
	e := Event{Type: EventAbort, ThreadID: threadID, RunID: last.ID}
	if len(closed) > 0 {
		e.MessageID = closed[len(closed)-1]
	}
	rt.bus.Publish(e)
	rt.kickNotes() // the thread is free: what waited for it may go now
	return true
}

// closeWaiting closes, in the stored messages, every call that waits as
// stopped, and marks their replies stopped. It returns the ids of the
// messages changed.
func (rt *Runtime) closeWaiting(ctx context.Context, history []Message) []string {
	var changed []string
	for _, m := range history {
		c, ok := stopCalls(m.Content)
		if !ok {
			continue
		}
		c.Metadata = maps.Clone(c.Metadata)
		if c.Metadata == nil {
			c.Metadata = map[string]any{}
		}
		c.Metadata["stopped"] = "user"
		if err := rt.store.UpdateMessage(ctx, m.ID, c, StatusInterrupted); err != nil {
			rt.Log.Error("close a waiting call", "message", m.ID, "err", err)
			continue
		}
		changed = append(changed, m.ID)
	}
	return changed
}

// stopCalls returns c with every waiting call closed as stopped; false when
// none waited.
func stopCalls(c Content) (Content, bool) {
	if !slices.ContainsFunc(c.Parts, func(p Part) bool { return p.ToolInvocation != nil && p.ToolInvocation.State == "suspended" }) {
		return c, false
	}
	parts := slices.Clone(c.Parts)
	for i, p := range parts {
		if p.ToolInvocation == nil || p.ToolInvocation.State != "suspended" {
			continue
		}
		ti := *p.ToolInvocation
		result := stoppedAnswer
		if ti.Approval {
			result = stoppedApproval
		}
		ti.Result, _ = json.Marshal(result)
		ti.State, ti.IsError, ti.Cancelled, ti.ModelOutput = "result", true, true, stoppedModelText(ti)
		parts[i].ToolInvocation = &ti
	}
	c.Parts = parts
	return c, true
}

// userTurn is what the user sends: text and files (file parts of stored
// files).
type userTurn struct {
	text  string
	files []Part
}

// fileNames is the names of the turn's files, for a chat's title when it
// has no text.
func (in userTurn) fileNames() string {
	names := make([]string, 0, len(in.files))
	for _, f := range in.files {
		names = append(names, f.Filename)
	}
	return strings.Join(names, ", ")
}

// sendTarget resolves what a message is for. A message with files needs
// no text; its files must be file parts of stored files, and each must be
// one the model can read (llm.CheckFile: no image for a model known to read
// none, no PDF for Ollama), refused before anything is stored or sent.
func (rt *Runtime) sendTarget(ctx context.Context, req SendRequest) (in userTurn, agent *Agent, thread Thread, model string, err error) {
	in = userTurn{text: strings.TrimSpace(req.Text), files: req.Files}
	if in.text == "" && len(in.files) == 0 {
		return userTurn{}, nil, Thread{}, "", errors.New("the message is empty")
	}
	for _, f := range in.files {
		if _, ok := f.FileRef(); !ok {
			return userTurn{}, nil, Thread{}, "", fmt.Errorf("the file %q is not a stored file", f.Filename)
		}
	}
	if agent, err = rt.Agent(req.AgentID); err != nil {
		return userTurn{}, nil, Thread{}, "", err
	}
	if thread, err = rt.store.GetThread(ctx, req.ThreadID); err != nil {
		return userTurn{}, nil, Thread{}, "", fmt.Errorf("send to thread %s: %w", req.ThreadID, err)
	}
	model = req.Model
	if model == "" {
		model, _ = thread.Metadata[ThreadModelKey].(string)
	}
	if model == "" {
		model = agent.CurrentModel()
	}
	for _, f := range in.files {
		if err := llm.CheckFile(model, f.Filename, f.MimeType); err != nil {
			return userTurn{}, nil, Thread{}, "", err
		}
	}
	return in, agent, thread, model, nil
}

// sendLocked answers the waiting call with text, or starts a run that
// answers it. The caller holds the thread's lane.
func (rt *Runtime) sendLocked(ctx context.Context, thread Thread, agent *Agent, model string, in userTurn, options RunOptions) (Sent, error) {
	if rt.liveRun(thread.ID) != nil {
		return Sent{}, ErrBusy
	}
	calls, err := rt.waitingCalls(ctx, thread.ID)
	if err != nil {
		return Sent{}, err
	}
	if len(calls) > 0 {
		if len(in.files) > 0 {
			return Sent{}, fmt.Errorf("%w: answer it first, then send the files", ErrWaiting)
		}
		run, msgID, err := rt.answerLocked(ctx, thread, agent, calls, in.text)
		if err != nil {
			return Sent{}, err
		}
		return Sent{Run: run, MessageID: msgID}, nil
	}
	l, runCtx, err := rt.reserve(ctx, thread, agent, model)
	if err != nil {
		return Sent{}, err
	}
	l.options = options
	sent, err := rt.begin(ctx, thread, agent, l, in)
	if err != nil {
		rt.releaseLocked(l)
		return Sent{}, err
	}
	go rt.run(runCtx, l, func(history []Message, opts StreamOptions) iter.Seq[Event] {
		// The reply being written is the last message; the model must not
		// see it.
		return agent.Stream(runCtx, trimReply(history, l.messageID()), opts)
	})
	return sent, nil
}
