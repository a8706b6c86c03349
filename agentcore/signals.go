package agentcore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"
)

// Behaviours of a signal sent to an active thread (ifActive) and to an
// idle one (ifIdle), spec §4.2.
const (
	Deliver = "deliver" // active: into the running loop's next model input
	Persist = "persist" // store it; no model reads it now
	Discard = "discard" // drop it
	Wake    = "wake"    // idle: start a run that reads it
	// Queue is what QueueMessage answers while a run is going: the message
	// starts the next run, after this one.
	Queue = "queue"
)

// IfActive says what a signal does when the thread has a run in progress.
type IfActive struct {
	Behavior   string `json:"behavior,omitempty"` // deliver (default) | persist | discard
	Attributes Attrs  `json:"attributes,omitempty"`
}

// IfIdle says what a signal does when the thread has no run in progress.
type IfIdle struct {
	Behavior   string `json:"behavior,omitempty"` // wake (default) | persist | discard
	Attributes Attrs  `json:"attributes,omitempty"`
	Model      string `json:"model,omitempty"` // the woken run's model; "" = the thread's
	// Options adjust the woken run (Mastra's ifIdle.streamOptions).
	Options RunOptions `json:"-"`
}

// SignalTarget is where a signal goes: a run, or a thread.
type SignalTarget struct {
	RunID      string
	ResourceID string
	ThreadID   string
	AgentID    string // "" = the default agent
	IfActive   IfActive
	IfIdle     IfIdle
}

// Accepted is what became of a signal (Mastra's SendAgentSignalAccepted).
type Accepted struct {
	Action string `json:"action"` // wake | deliver | persist | discard | queue
	RunID  string `json:"runId,omitempty"`
}

// ErrDuplicateSignal: a signal with the caller's id was accepted before.
var ErrDuplicateSignal = errors.New("a signal with this id was already accepted")

// ErrNoActiveRun: a signal aimed at a run that is not going, with no thread
// to fall back on.
var ErrNoActiveRun = errors.New("No active agent run found for signal target")

// lane is the lock that orders, for one thread, the routing of signals and
// the hand-over from one run to the next: a signal is either in the running
// loop's pending list before that run lets go of the thread, or it finds
// the thread idle. A thread never runs two loops at once, however many
// senders race.
func (rt *Runtime) lane(threadID string) *sync.Mutex {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	m := rt.lanes[threadID]
	if m == nil {
		m = &sync.Mutex{}
		rt.lanes[threadID] = m
	}
	return m
}

func (rt *Runtime) liveRun(threadID string) *liveRun {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.live[threadID]
}

// queuedTurn is a message waiting for the run in progress to end.
type queuedTurn struct {
	sig     Signal
	agent   *Agent
	model   string
	options RunOptions
}

// SendMessage sends a user message to a thread: delivered into the running
// loop's next model input when the thread is busy, else it wakes a run
// (both as to says). The message is a user signal; attributes make it
// <user …>text</user> for the model.
func (rt *Runtime) SendMessage(ctx context.Context, text string, attrs Attrs, to SignalTarget, files ...Part) (Accepted, Signal, error) {
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		return Accepted{}, Signal{}, errors.New("the message is empty")
	}
	return rt.SendSignal(ctx, Signal{Type: SignalUser, Contents: text, Attributes: attrs, Files: files}, to)
}

// QueueMessage sends a user message that starts a run of its own: now when
// the thread is idle, else after the run in progress (and any turns queued
// before it) ends. It is never folded into a running loop.
func (rt *Runtime) QueueMessage(ctx context.Context, text string, to SignalTarget, files ...Part) (Accepted, Signal, error) {
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		return Accepted{}, Signal{}, errors.New("the message is empty")
	}
	for _, f := range files {
		if _, ok := f.FileRef(); !ok {
			return Accepted{}, Signal{}, fmt.Errorf("the file %q is not a stored file", f.Filename)
		}
	}
	// Marked, so a screen can tell a turn waiting for its run from a
	// message the running agent reads at its next step.
	sig, err := NewSignal(Signal{Type: SignalUser, Contents: text, Metadata: map[string]any{"queuedTurn": true}, Files: files})
	if err != nil {
		return Accepted{}, Signal{}, err
	}
	thread, agent, err := rt.target(ctx, &to)
	if err != nil {
		return Accepted{}, Signal{}, err
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	sig.AcceptedAt = time.Now().UTC()
	if rt.liveRun(thread.ID) == nil && len(rt.queued[thread.ID]) == 0 {
		run, err := rt.wake(ctx, thread, agent, to.IfIdle.Model, to.IfIdle.Options, []Signal{sig})
		if errors.Is(err, ErrWaiting) {
			// The thread's run waits for the user: it reads the turn
			// when it goes on, as it would a turn queued behind it.
			return rt.persist(ctx, thread, sig)
		}
		if err != nil {
			return Accepted{}, Signal{}, err
		}
		return Accepted{Action: Wake, RunID: run.ID}, sig, nil
	}
	if err := rt.storeSignal(ctx, thread, sig, StatusQueued); err != nil {
		return Accepted{}, Signal{}, err
	}
	rt.queued[thread.ID] = append(rt.queued[thread.ID], queuedTurn{sig: sig, agent: agent, model: to.IfIdle.Model, options: to.IfIdle.Options})
	return Accepted{Action: Queue}, sig, nil
}

// SendSignal routes a signal to its thread (spec §4.2): to the running
// loop (deliver), to the store (persist), nowhere (discard), or into a new
// run (wake).
func (rt *Runtime) SendSignal(ctx context.Context, in Signal, to SignalTarget) (Accepted, Signal, error) {
	sig, err := NewSignal(in)
	if err != nil {
		return Accepted{}, Signal{}, err
	}
	if in.ID != "" {
		if _, err := rt.store.GetMessage(ctx, in.ID); err == nil {
			return Accepted{}, Signal{}, fmt.Errorf("signal %s: %w", in.ID, ErrDuplicateSignal)
		}
	}
	if to.RunID != "" && to.ThreadID == "" {
		rt.mu.Lock()
		for id, l := range rt.live {
			if l.run.ID == to.RunID {
				to.ThreadID = id
			}
		}
		rt.mu.Unlock()
		if to.ThreadID == "" {
			return Accepted{}, Signal{}, ErrNoActiveRun
		}
	}
	thread, agent, err := rt.target(ctx, &to)
	if err != nil {
		return Accepted{}, Signal{}, err
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	sig.AcceptedAt = time.Now().UTC()

	if l := rt.liveRun(thread.ID); l != nil && (to.RunID == "" || to.RunID == l.run.ID) {
		sig.Attributes = sig.Attributes.Merge(to.IfActive.Attributes)
		switch cmpStr(to.IfActive.Behavior, Deliver) {
		case Discard:
			return Accepted{Action: Discard}, sig, nil
		case Persist:
			return rt.persist(ctx, thread, sig)
		case Deliver:
			if err := rt.deliverLocked(ctx, thread, l, sig); err != nil {
				return Accepted{}, Signal{}, err
			}
			return Accepted{Action: Deliver, RunID: l.run.ID}, sig, nil
		default:
			return Accepted{}, Signal{}, fmt.Errorf("invalid ifActive behavior %q: use deliver, persist or discard", to.IfActive.Behavior)
		}
	}
	if to.RunID != "" {
		return Accepted{}, Signal{}, ErrNoActiveRun
	}
	sig.Attributes = sig.Attributes.Merge(to.IfIdle.Attributes)
	switch cmpStr(to.IfIdle.Behavior, Wake) {
	case Discard:
		return Accepted{Action: Discard}, sig, nil
	case Persist:
		return rt.persist(ctx, thread, sig)
	case Wake:
		run, err := rt.wake(ctx, thread, agent, to.IfIdle.Model, to.IfIdle.Options, []Signal{sig})
		if errors.Is(err, ErrWaiting) {
			return rt.toWaiting(ctx, thread, agent, sig)
		}
		if err != nil {
			return Accepted{}, Signal{}, err
		}
		return Accepted{Action: Wake, RunID: run.ID}, sig, nil
	default:
		return Accepted{}, Signal{}, fmt.Errorf("invalid ifIdle behavior %q: use wake, persist or discard", to.IfIdle.Behavior)
	}
}

// persist keeps a signal in the thread for a later run; a transient one
// has nowhere to go.
func (rt *Runtime) persist(ctx context.Context, thread Thread, sig Signal) (Accepted, Signal, error) {
	if sig.Transient {
		return Accepted{Action: Discard}, sig, nil
	}
	if err := rt.storeSignal(ctx, thread, sig, StatusComplete); err != nil {
		return Accepted{}, Signal{}, err
	}
	return Accepted{Action: Persist}, sig, nil
}

func cmpStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// target resolves the thread and the agent of a signal.
func (rt *Runtime) target(ctx context.Context, to *SignalTarget) (Thread, *Agent, error) {
	if to.ThreadID == "" {
		return Thread{}, nil, fmt.Errorf("%w: give a runId, or a resourceId and threadId", ErrNoActiveRun)
	}
	thread, err := rt.store.GetThread(ctx, to.ThreadID)
	if err != nil {
		return Thread{}, nil, fmt.Errorf("signal thread %s: %w", to.ThreadID, err)
	}
	if to.ResourceID != "" && to.ResourceID != thread.ResourceID {
		return Thread{}, nil, fmt.Errorf("signal thread %s: it belongs to another resource than %s: %w", to.ThreadID, to.ResourceID, ErrNotFound)
	}
	agent, err := rt.Agent(to.AgentID)
	if err != nil {
		return Thread{}, nil, err
	}
	return thread, agent, nil
}

// storeSignal writes a signal as a message of thread and tells the thread.
func (rt *Runtime) storeSignal(ctx context.Context, thread Thread, sig Signal, status MessageStatus) error {
	m := sig.Message(thread.ID, thread.ResourceID)
	m.Status = status
	if _, err := rt.store.AppendMessage(ctx, m); err != nil {
		return fmt.Errorf("store signal: %w", err)
	}
	rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: m.ID})
	return nil
}

// toWaiting routes a signal that would wake a thread whose run waits for
// the user: a user message answers the waiting call (the run goes on: the
// signal is delivered to it); anything else, or a message no call takes, is
// kept in the thread for that run to read when it goes on. The caller holds
// the thread's lane.
func (rt *Runtime) toWaiting(ctx context.Context, thread Thread, agent *Agent, sig Signal) (Accepted, Signal, error) {
	// A message with files is kept for the run: an answer takes text only.
	if sig.Type == SignalUser && strings.TrimSpace(sig.Contents) != "" && len(sig.Files) == 0 {
		calls, err := rt.waitingCalls(ctx, thread.ID)
		if err != nil {
			return Accepted{}, Signal{}, err
		}
		if len(calls) > 0 {
			run, _, err := rt.answerLocked(ctx, thread, agent, calls, sig.Contents)
			if err == nil {
				return Accepted{Action: Deliver, RunID: run.ID}, sig, nil
			}
			if !errors.Is(err, ErrWaiting) {
				return Accepted{}, Signal{}, err
			}
		}
	}
	return rt.persist(ctx, thread, sig)
}

// wake starts a run on an idle thread that reads sigs first; ErrWaiting
// when the thread's run waits for the user. The caller holds the thread's
// lane.
func (rt *Runtime) wake(ctx context.Context, thread Thread, agent *Agent, model string, options RunOptions, sigs []Signal) (Run, error) {
	if calls, err := rt.waitingCalls(ctx, thread.ID); err != nil {
		return Run{}, err
	} else if len(calls) > 0 {
		return Run{}, fmt.Errorf("%w (%s %s)", ErrWaiting, calls[0].ToolName, calls[0].ToolCallID)
	}
	if model == "" {
		model, _ = thread.Metadata[ThreadModelKey].(string)
	}
	if model == "" {
		model = agent.CurrentModel()
	}
	l, runCtx, err := rt.reserve(ctx, thread, agent, model)
	if err != nil {
		return Run{}, err
	}
	l.options = options
	fail := func(err error) (Run, error) {
		rt.releaseLocked(l)
		return Run{}, err
	}
	for _, s := range sigs {
		if s.Transient {
			continue
		}
		if _, err := rt.store.GetMessage(ctx, s.ID); IsNotFound(err) {
			if err := rt.storeSignal(ctx, thread, s, StatusQueued); err != nil {
				return fail(err)
			}
		}
	}
	if thread.Title == "" {
		for _, s := range sigs {
			if s.Type == SignalUser && strings.TrimSpace(s.Contents) != "" {
				title := titleFrom(s.Contents)
				if _, err := rt.store.UpdateThread(ctx, thread.ID, ThreadPatch{Title: &title}); err != nil {
					rt.Log.Warn("set thread title", "thread", thread.ID, "err", err)
				}
				rt.bus.Publish(Event{Type: EventThread, ThreadID: thread.ID})
				break
			}
		}
	}
	if err := rt.store.CreateRun(ctx, l.run); err != nil {
		return fail(fmt.Errorf("store run: %w", err))
	}
	reply, err := rt.store.AppendMessage(ctx, Message{
		ThreadID: thread.ID, ResourceID: thread.ResourceID, Role: RoleAssistant,
		Content: Content{Format: 2, Parts: []Part{}}, Status: StatusStreaming, RunID: l.run.ID,
	})
	if err != nil {
		return fail(fmt.Errorf("store reply: %w", err))
	}
	l.mu.Lock() // reserved: Live reads it from now on
	l.msgID = reply.ID
	l.mu.Unlock()
	l.pending = sigs
	rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: reply.ID, RunID: l.run.ID})
	started := l.run
	go rt.run(runCtx, l, func(history []Message, opts StreamOptions) iter.Seq[Event] {
		history = trimReply(history, l.messageID())
		return agent.Stream(runCtx, history, opts)
	})
	return started, nil
}

// trimReply drops the reply being written from the end of history: the
// model must not see it.
func trimReply(history []Message, replyID string) []Message {
	for len(history) > 0 && history[len(history)-1].ID == replyID {
		history = history[:len(history)-1]
	}
	return history
}

// turnover runs when a run has let go of its thread (under the thread's
// lane): signals delivered too late for its model start the next run, then
// queued turns, one run each. A run that was stopped, failed or waits for
// the user starts nothing: what waited is kept in the thread as sent.
func (rt *Runtime) turnover(l *liveRun, e Event, leftover []Signal) {
	threadID := l.run.ThreadID
	ended := e.Type == EventFinish && e.FinishReason != FinishSuspended
	if !ended {
		rt.keep(threadID, leftover)
		for _, q := range rt.queued[threadID] {
			rt.keep(threadID, []Signal{q.sig})
		}
		delete(rt.queued, threadID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	thread, err := rt.store.GetThread(ctx, threadID)
	if err != nil {
		rt.Log.Error("start the next turn", "thread", threadID, "err", err)
		rt.keep(threadID, leftover)
		return
	}
	if len(leftover) > 0 {
		if _, err := rt.wake(ctx, thread, l.agent, "", RunOptions{}, leftover); err != nil {
			rt.Log.Error("wake for late signals", "thread", threadID, "err", err)
			rt.keep(threadID, leftover)
		}
		return
	}
	queue := rt.queued[threadID]
	if len(queue) == 0 {
		return
	}
	next := queue[0]
	if len(queue) == 1 {
		delete(rt.queued, threadID)
	} else {
		rt.queued[threadID] = queue[1:]
	}
	if _, err := rt.wake(ctx, thread, next.agent, next.model, next.options, []Signal{next.sig}); err != nil {
		// Nothing runs the rest of the queue either (Parley may be
		// quitting): all of it is kept as sent, for the next run to read.
		rt.Log.Error("start a queued turn", "thread", threadID, "err", err)
		rt.keep(threadID, []Signal{next.sig})
		for _, q := range rt.queued[threadID] {
			rt.keep(threadID, []Signal{q.sig})
		}
		delete(rt.queued, threadID)
	}
}

// keep marks signals that no model read as sent: the thread keeps them and
// the next run reads them from its history.
func (rt *Runtime) keep(threadID string, sigs []Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	for _, s := range sigs {
		if s.Transient {
			continue
		}
		m := s.Message(threadID, "")
		if err := rt.store.UpdateMessage(ctx, s.ID, m.Content, StatusComplete); err != nil {
			rt.Log.Error("keep signal", "signal", s.ID, "err", err)
			continue
		}
		rt.bus.Publish(Event{Type: EventMessageUpdated, ThreadID: threadID, MessageID: s.ID})
	}
}

// SignalSource gives a running loop the signals delivered to its run.
type SignalSource interface {
	// Pending reports whether signals wait to be read.
	Pending() bool
	// Drain takes them, in the order they were sent.
	Drain(ctx context.Context) []Signal
}

// runSignals is the signal source of a run of the Runtime.
type runSignals struct {
	rt *Runtime
	l  *liveRun
}

func (s *runSignals) Pending() bool {
	lane := s.rt.lane(s.l.run.ThreadID)
	lane.Lock()
	defer lane.Unlock()
	return len(s.l.pending) > 0
}

// Drain takes the pending signals and files them where the model reads
// them: after what the reply has written so far. The reply is closed there
// and goes on in a new message, so the thread reads in order.
func (s *runSignals) Drain(ctx context.Context) []Signal {
	rt, l := s.rt, s.l
	lane := rt.lane(l.run.ThreadID)
	lane.Lock()
	sigs := l.pending
	l.pending = nil
	lane.Unlock()
	if len(sigs) == 0 {
		return nil
	}
	var ids []string
	for _, sig := range sigs {
		if !sig.Transient {
			ids = append(ids, sig.ID)
		}
	}
	if len(ids) > 0 {
		rt.split(ctx, l, sigs, ids)
	}
	return sigs
}

// split files the signals ids after the reply written so far.
func (rt *Runtime) split(ctx context.Context, l *liveRun, sigs []Signal, ids []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	threadID := l.run.ThreadID
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	empty, old := len(l.builder.parts) == 0, l.msgID
	l.mu.Unlock()

	var moved []string
	if empty {
		// Nothing written yet: the reply simply follows the signals.
		moved = append(append(moved, ids...), old)
		if err := rt.store.MoveMessages(ctx, threadID, moved...); err != nil {
			rt.Log.Error("file delivered signals", "thread", threadID, "err", err)
		}
	} else {
		if err := rt.writeLocked(l, StatusComplete, map[string]any{"model": l.run.Model, "continued": true}); saveFailed(err) {
			l.failSave(err) // the run ends with it
		}
		// The screens hear that the old reply is done only once the run
		// writes a new one: until then it is the live reply, and a screen
		// that re-rendered it now would show it streaming for good.
		defer rt.bus.Publish(Event{Type: EventMessageUpdated, ThreadID: threadID, MessageID: old})
		moved = ids
		if err := rt.store.MoveMessages(ctx, threadID, ids...); err != nil {
			rt.Log.Error("file delivered signals", "thread", threadID, "err", err)
		}
		reply, err := rt.store.AppendMessage(ctx, Message{
			ThreadID: threadID, ResourceID: l.thread.ResourceID, Role: RoleAssistant,
			Content: Content{Format: 2, Parts: []Part{}}, Status: StatusStreaming, RunID: l.run.ID,
		})
		if err != nil {
			rt.Log.Error("continue reply after signals", "thread", threadID, "err", err)
		} else {
			l.mu.Lock()
			l.msgID, l.builder = reply.ID, contentBuilder{}
			l.mu.Unlock()
			moved = append(moved, reply.ID)
		}
	}
	for _, sig := range sigs {
		if sig.Transient {
			continue
		}
		if err := rt.store.UpdateMessage(ctx, sig.ID, sig.Message(threadID, "").Content, StatusComplete); err != nil {
			rt.Log.Error("mark signal delivered", "signal", sig.ID, "err", err)
		}
	}
	// Moved messages go to the end of the list on every screen.
	for _, id := range moved {
		rt.bus.Publish(Event{Type: EventMessage, ThreadID: threadID, MessageID: id, RunID: l.run.ID})
	}
}

// ErrAlreadyRead: a message cannot be taken back, the agent has read it.
var ErrAlreadyRead = errors.New("the agent has already read it")

// Unsend takes back a message sent while the agent worked, before any model
// read it: a queued turn, or a message waiting for the running loop's next
// step. It returns the message, so its text can go back to the composer.
func (rt *Runtime) Unsend(ctx context.Context, threadID, id string) (Signal, error) {
	lane := rt.lane(threadID)
	lane.Lock()
	defer lane.Unlock()
	var sig Signal
	found := false
	if q := rt.queued[threadID]; len(q) > 0 {
		for i, t := range q {
			if t.sig.ID == id {
				sig, found = t.sig, true
				rt.queued[threadID] = append(q[:i:i], q[i+1:]...)
				break
			}
		}
	}
	if l := rt.liveRun(threadID); !found && l != nil {
		for i, s := range l.pending {
			if s.ID == id {
				sig, found = s, true
				l.pending = append(l.pending[:i:i], l.pending[i+1:]...)
				break
			}
		}
	}
	if !found {
		if m, err := rt.store.GetMessage(ctx, id); err != nil || m.ThreadID != threadID {
			return Signal{}, fmt.Errorf("message %s of thread %s: %w", id, threadID, ErrNotFound)
		}
		return Signal{}, fmt.Errorf("message %s: %w", id, ErrAlreadyRead)
	}
	if !sig.Transient {
		// Its files go with it unless another message uses them: kept
		// again, as files just added, they go back to the composer.
		var files []StoredFile
		for _, p := range sig.Files {
			ref, _ := p.FileRef()
			f, err := rt.store.GetFile(ctx, ref)
			if err != nil {
				return Signal{}, fmt.Errorf("message %s: its file %q: %w", id, p.Filename, err)
			}
			files = append(files, f)
		}
		if err := rt.store.DeleteMessage(ctx, id); err != nil && !IsNotFound(err) {
			return Signal{}, err
		}
		for _, f := range files {
			if _, err := rt.store.PutFile(ctx, f.MediaType, f.Data); err != nil {
				return Signal{}, fmt.Errorf("message %s: keep its files: %w", id, err)
			}
		}
		rt.bus.Publish(Event{Type: EventMessageUpdated, ThreadID: threadID, MessageID: id})
	}
	return sig, nil
}

// Queued lists the turns waiting for the thread's run in progress.
func (rt *Runtime) Queued(threadID string) []Signal {
	lane := rt.lane(threadID)
	lane.Lock()
	defer lane.Unlock()
	var out []Signal
	for _, q := range rt.queued[threadID] {
		out = append(out, q.sig)
	}
	return out
}
