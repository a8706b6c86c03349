package agentcore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"parley/agentcore/llm"
)

const (
	// flushInterval bounds how often a streaming reply is written: one write
	// per ~3 frames keeps the WAL small while a crash loses at most 50 ms.
	flushInterval = 50 * time.Millisecond
	// historyLimit is how many earlier messages a run sends to the model.
	historyLimit = 500
	// titleRunes is the length of a title taken from the first message.
	titleRunes = 60
	// storeTimeout bounds one store write made on behalf of a run, which
	// outlives the request that started it.
	storeTimeout = 10 * time.Second
)

// ErrBusy is returned when a thread already has a run in progress.
var ErrBusy = errors.New("a reply is still being written on this thread: stop it or wait for it to finish")

// ErrClosed is returned for a run asked for once the runtime is closing.
var ErrClosed = errors.New("Parley is shutting down: no new reply is started")

// DefaultCloseGrace bounds how long Close waits for stopped runs to write
// their final state: a tool that ignores its cancellation must not keep
// Parley from quitting.
const DefaultCloseGrace = 10 * time.Second

// Runtime runs agents on threads. A run belongs to its thread, not to the
// request or browser tab that started it: it goes on until it finishes, fails
// or is stopped, publishing every event on the Bus and writing its reply to
// the Store as it streams.
type Runtime struct {
	// store and bus are the runtime's own: every message, run and event is
	// written and published by it, so its invariants (one run per thread,
	// decisions under the thread's lane) cannot be broken from outside.
	// Others read through its methods (reads.go).
	store Store
	bus   *Bus
	Log   *slog.Logger
	// Prepare, when set, adjusts the options of every run from its thread
	// (the app's modes: which tools, which extra instructions).
	Prepare func(t Thread, opts *StreamOptions)
	// OnBranch, when set, brings what a chat keeps beside its messages
	// (the app's task list and approved plans) to its active branch: it is
	// called with the branch's messages whenever Edit, Regenerate,
	// SwitchBranch or Fork changes which branch is active, before a run
	// starts on it. An error is logged; the branch stands.
	OnBranch func(ctx context.Context, threadID string, branch []Message) error
	// CloseGrace overrides DefaultCloseGrace when positive.
	CloseGrace time.Duration
	// AutoTitle: after a thread's first completed reply, its model writes
	// the thread's title (title.go). Off, the first message titles it.
	AutoTitle bool
	agents    []*Agent
	// titles is cancelled by Close: it ends title calls in progress.
	titles      context.Context
	closeTitles context.CancelFunc

	mu     sync.Mutex
	live   map[string]*liveRun     // thread id → the run in progress
	lanes  map[string]*sync.Mutex  // thread id → its routing lock (see lane)
	queued map[string][]queuedTurn // thread id → turns waiting for the run in progress
	wg     sync.WaitGroup          // the runs reserved and not yet ended
	closed bool                    // Close has begun: no run is reserved
	owed   []owedWrite             // final writes that failed, tried again (owe)
	// failedReplies: reply id → its error, for the replies owed marks
	// that have not landed yet (owedMarks).
	failedReplies map[string]string

	// The notification dispatcher (StartNotifications).
	kick      chan struct{}
	stopNotes chan struct{}
	notesDone chan struct{}
}

// NewRuntime returns a runtime over store with the given agents; the first
// agent is the default.
func NewRuntime(store Store, log *slog.Logger, agents ...*Agent) *Runtime {
	return NewRuntimeOn(store, NewBus(), log, agents...)
}

// NewRuntimeOn is NewRuntime publishing on bus. Whoever holds bus can
// publish beside the runtime: it is for tests that play events to a
// subscriber; the app uses NewRuntime.
func NewRuntimeOn(store Store, bus *Bus, log *slog.Logger, agents ...*Agent) *Runtime {
	if log == nil {
		log = slog.Default()
	}
	titles, closeTitles := context.WithCancel(context.Background())
	return &Runtime{store: store, bus: bus, Log: log, agents: agents, titles: titles, closeTitles: closeTitles,
		live: map[string]*liveRun{}, lanes: map[string]*sync.Mutex{}, queued: map[string][]queuedTurn{}}
}

// Agents lists the registered agents, default first.
func (rt *Runtime) Agents() []*Agent { return rt.agents }

// Agent returns the agent with id; "" is the default agent.
func (rt *Runtime) Agent(id string) (*Agent, error) {
	if id == "" && len(rt.agents) > 0 {
		return rt.agents[0], nil
	}
	for _, a := range rt.agents {
		if a.ID == id {
			return a, nil
		}
	}
	return nil, fmt.Errorf("agent %q: %w", id, ErrNotFound)
}

// liveRun is the in-memory state of a run in progress.
type liveRun struct {
	run    Run
	thread Thread
	agent  *Agent
	cancel context.CancelFunc
	done   chan struct{}
	// stopped: the user stopped the run (Stop), not a shutdown; what
	// still waits in its thread closes with it.
	stopped atomic.Bool

	// pending are signals delivered to the run and not yet read by its
	// model; guarded by the thread's lane.
	pending []Signal

	// wmu serialises the run's store writes of its reply, so a split
	// (a signal delivered mid-reply) never races a streaming flush.
	wmu sync.Mutex

	mu      sync.Mutex
	msgID   string // the reply being written; a delivered signal starts a new one
	builder contentBuilder
	// saveErr: a write of the reply failed for good (failSave); the run
	// ends with it.
	saveErr error

	// options are the caller's adjustments of the run (SendRequest.Options).
	options RunOptions
}

func (l *liveRun) messageID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgID
}

func (l *liveRun) apply(e Event) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.builder.apply(e)
}

// Live is a snapshot of a thread's run in progress.
type Live struct {
	Run       Run
	MessageID string
	Content   Content
}

// Live returns the thread's run in progress, if any. Its content is newer
// than the store's, which is written at most every flushInterval.
func (rt *Runtime) Live(threadID string) (Live, bool) {
	rt.mu.Lock()
	l := rt.live[threadID]
	rt.mu.Unlock()
	if l == nil {
		return Live{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return Live{Run: l.run, MessageID: l.msgID, Content: l.builder.content()}, true
}

// SendRequest is a user message for a thread.
type SendRequest struct {
	ThreadID string
	AgentID  string // "" = default agent
	Text     string
	// Files are file parts of files already stored (FileStore), sent
	// after Text in the same message; Text may then be empty.
	Files []Part
	Model string // "" = the thread's model, else the agent's
	// Earlier are input messages that come before Text (Mastra's generate
	// and stream keep every input message): Send stores them, in order,
	// once it is sure no run is in progress, then decides on Text.
	Earlier []Message
	// Options adjust the run Send starts (not a waiting call it answers).
	Options RunOptions
	// ProviderOptions of the user's message, stored with it
	// (Content.ProviderMetadata) when it starts a run.
	ProviderOptions *MessageOptions
}

// RunOptions are a caller's adjustments of one run, as Mastra's generate
// and stream take them over HTTP. Zero values leave the agent's and the
// chat's settings.
type RunOptions struct {
	MaxSteps   int        // model calls at most; 0: the agent's
	ToolChoice ToolChoice // "": the agent's (auto)
	// ActiveTools, when non-nil, limits the tools to these; a chat's mode
	// still hides what it hides (the two are intersected).
	ActiveTools []string
	// Instructions, when set, replace the agent's own (a mode's rules
	// still follow them).
	Instructions Instructions
	// Temperature, MaxOutputTokens and TopP go to the model when set.
	Temperature     *float64
	MaxOutputTokens int64
	TopP            *float64
	// ProviderOptions (Mastra's) win over the chat's thinking level.
	ProviderOptions llm.ProviderOptions

	// userOptions are SendRequest.ProviderOptions, on their way to begin.
	userOptions *MessageOptions
}

// apply adjusts opts, which the chat's settings have already shaped.
func (o RunOptions) apply(opts *StreamOptions) {
	if o.MaxSteps > 0 {
		opts.MaxSteps = o.MaxSteps
	}
	if o.Instructions != nil {
		opts.AgentInstructions = o.Instructions
	}
	if o.Temperature != nil {
		opts.Temperature = o.Temperature
	}
	if o.MaxOutputTokens > 0 {
		opts.MaxOutputTokens = o.MaxOutputTokens
	}
	if o.TopP != nil {
		opts.TopP = o.TopP
	}
	if o.ProviderOptions != (llm.ProviderOptions{}) {
		opts.ProviderOptions = o.ProviderOptions
	}
	if o.ToolChoice != "" {
		opts.ToolChoice = o.ToolChoice
	}
	if o.ActiveTools != nil {
		if opts.ActiveTools == nil {
			opts.ActiveTools = slices.Clone(o.ActiveTools)
		} else {
			opts.ActiveTools = slices.DeleteFunc(slices.Clone(opts.ActiveTools), func(n string) bool { return !slices.Contains(o.ActiveTools, n) })
		}
	}
}

// Sent tells what Send started.
type Sent struct {
	User      Message // the stored user message
	MessageID string  // the assistant message the run writes
	Run       Run
}

// Send stores the user's message and starts a run that answers it. It
// returns once the run has started; the run's events arrive on the Bus.
// While a run is in progress it is ErrBusy. While the thread's run waits
// for the user (a question, a plan, an approval), the message answers the
// oldest call that takes one (for agents with AutoResumeSuspendedTools):
// that run goes on, nothing new starts, and Sent.User is empty.
func (rt *Runtime) Send(ctx context.Context, req SendRequest) (Sent, error) {
	in, agent, thread, model, err := rt.sendTarget(ctx, req)
	if err != nil {
		return Sent{}, err
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	if len(req.Earlier) > 0 {
		if rt.liveRun(thread.ID) != nil {
			return Sent{}, ErrBusy
		}
		if err := rt.storeEarlier(ctx, thread, req.Earlier); err != nil {
			return Sent{}, err
		}
	}
	req.Options.userOptions = req.ProviderOptions
	return rt.sendLocked(ctx, thread, agent, model, in, req.Options)
}

// storeEarlier stores the input messages that come before a user's message,
// complete and in order, and tells the views. The caller holds the
// thread's lane.
func (rt *Runtime) storeEarlier(ctx context.Context, thread Thread, msgs []Message) error {
	for _, m := range msgs {
		m.ThreadID, m.ResourceID, m.Status = thread.ID, thread.ResourceID, StatusComplete
		stored, err := rt.store.AppendMessage(ctx, m)
		if err != nil {
			return fmt.Errorf("store message: %w", err)
		}
		rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: stored.ID})
	}
	return nil
}

// reserve claims the thread for a new run; ErrBusy when one is in progress.
func (rt *Runtime) reserve(ctx context.Context, thread Thread, agent *Agent, model string) (*liveRun, context.Context, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return nil, nil, ErrClosed
	}
	if rt.live[thread.ID] != nil {
		return nil, nil, ErrBusy
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &liveRun{
		run:    Run{ID: NewID(), ThreadID: thread.ID, AgentID: agent.ID, Model: model, Status: RunRunning, StartedAt: time.Now().UTC()},
		thread: thread,
		agent:  agent,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	rt.live[thread.ID] = l
	rt.wg.Add(1) // done by run, or by releaseLocked if it never starts
	return l, runCtx, nil
}

// release frees a thread whose run never started.
// The caller holds the thread's lane, so no signal reached it.
func (rt *Runtime) releaseLocked(l *liveRun) {
	l.cancel()
	rt.mu.Lock()
	delete(rt.live, l.run.ThreadID)
	rt.mu.Unlock()
	close(l.done)
	rt.wg.Done()
}

// ResumeRequest answers a suspended tool call on a thread.
type ResumeRequest struct {
	ThreadID   string
	ToolCallID string
	Data       json.RawMessage
}

// Resume answers a suspended call (a question, a plan) and goes on with the
// run: the tool runs again with the answer, and the reply that holds the
// call is written on. Bad answers change nothing: an unknown or already
// answered call, or data that does not fit the tool's resume schema, is an
// error.
func (rt *Runtime) Resume(ctx context.Context, req ResumeRequest) (Run, error) {
	thread, err := rt.store.GetThread(ctx, req.ThreadID)
	if err != nil {
		return Run{}, fmt.Errorf("resume on thread %s: %w", req.ThreadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	return rt.resumeLocked(ctx, thread, req)
}

// resumeLocked is Resume with the thread's lane held: the call is found,
// checked and answered, and the run reserved, in one decision.
func (rt *Runtime) resumeLocked(ctx context.Context, thread Thread, req ResumeRequest) (Run, error) {
	msg, ti, err := rt.suspended(ctx, thread.ID, req.ToolCallID)
	if err != nil {
		return Run{}, err
	}
	agentID := ""
	if run, err := rt.store.GetRun(ctx, msg.RunID); err == nil {
		agentID = run.AgentID
	}
	agent, err := rt.Agent(agentID)
	if err != nil {
		return Run{}, err
	}
	tool := agent.toolset()[ti.ToolName]
	if tool == nil {
		return Run{}, fmt.Errorf("resume %s: the tool %q is no longer available", req.ToolCallID, ti.ToolName)
	}
	if ti.Approval {
		if err := validateApproval(req.Data); err != nil {
			return Run{}, fmt.Errorf("%w: an approval of %s must be {decision: allow|always|deny, reason?}: %v", ErrBadResume, ti.ToolName, err)
		}
	} else if err := tool.ValidateResume(req.Data); err != nil {
		return Run{}, fmt.Errorf("%w: the answer does not fit %s: %v", ErrBadResume, ti.ToolName, err)
	}
	model, _ := msg.Content.Metadata["model"].(string)
	if model == "" {
		model = agent.CurrentModel()
	}
	l, runCtx, err := rt.reserve(ctx, thread, agent, model)
	if err != nil {
		return Run{}, err
	}
	l.mu.Lock() // reserved: Live reads it from now on
	l.msgID = msg.ID
	l.builder.load(msg.Content)
	l.mu.Unlock()
	if err := rt.store.CreateRun(ctx, l.run); err != nil {
		rt.releaseLocked(l)
		return Run{}, fmt.Errorf("store run: %w", err)
	}
	// The runs that suspended on this thread wait no more: this one goes
	// on with their work (and is the one that waits if a call still does).
	if waiting, err := rt.store.ListRuns(ctx, RunQuery{Statuses: []RunStatus{RunSuspended}}); err == nil {
		for _, prev := range waiting {
			if prev.ThreadID != thread.ID {
				continue
			}
			prev.Status = RunDone
			if err := rt.store.FinishRun(ctx, prev); err != nil {
				rt.Log.Warn("close a resumed run", "run", prev.ID, "err", err)
			}
		}
	}
	if err := rt.store.UpdateMessage(ctx, msg.ID, msg.Content, StatusStreaming); err != nil {
		rt.releaseLocked(l)
		return Run{}, fmt.Errorf("reopen reply: %w", err)
	}
	started := l.run // the run goroutine owns l from here
	in := ResumeInput{ToolCallID: req.ToolCallID, Data: req.Data}
	go rt.run(runCtx, l, func(history []Message, opts StreamOptions) iter.Seq[Event] {
		return agent.Resume(runCtx, history, in, opts)
	})
	return started, nil
}

// ErrBadResume: the answer does not fit what the tool asked for.
var ErrBadResume = errors.New("bad answer")

// suspended finds the open suspended call id on a thread.
func (rt *Runtime) suspended(ctx context.Context, threadID, id string) (Message, *ToolInvocation, error) {
	history, err := rt.store.ListMessages(ctx, threadID, MessageQuery{Limit: historyLimit, Last: true})
	if err != nil {
		return Message{}, nil, fmt.Errorf("load thread %s: %w", threadID, err)
	}
	msg, ti := findSuspended(history, id)
	if ti == nil {
		return Message{}, nil, fmt.Errorf("%w: %s", ErrNotSuspended, id)
	}
	return msg, ti, nil
}

// Pending lists the thread's suspended calls, oldest first: the questions
// and plans waiting for the user.
func (rt *Runtime) Pending(ctx context.Context, threadID string) ([]ToolInvocation, error) {
	history, err := rt.store.ListMessages(ctx, threadID, MessageQuery{Limit: historyLimit, Last: true})
	if err != nil {
		return nil, err
	}
	var out []ToolInvocation
	for _, m := range history {
		for _, p := range m.Content.Parts {
			if ti := p.ToolInvocation; ti != nil && ti.State == "suspended" {
				out = append(out, *ti)
			}
		}
	}
	return out, nil
}

// begin writes the user message, the run and the empty assistant message.
func (rt *Runtime) begin(ctx context.Context, thread Thread, agent *Agent, l *liveRun, in userTurn) (Sent, error) {
	content := TextContent(in.text)
	content.Parts = append(content.Parts, in.files...)
	content.ProviderMetadata = l.options.userOptions
	user, err := rt.store.AppendMessage(ctx, Message{
		ThreadID: thread.ID, ResourceID: thread.ResourceID, Role: RoleUser,
		Content: content, Status: StatusComplete,
	})
	if err != nil {
		return Sent{}, fmt.Errorf("store user message: %w", err)
	}
	rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: user.ID})
	if thread.Title == "" {
		title := titleFrom(cmp.Or(in.text, in.fileNames()))
		if _, err := rt.store.UpdateThread(ctx, thread.ID, ThreadPatch{Title: &title}); err != nil {
			rt.Log.Warn("set thread title", "thread", thread.ID, "err", err)
		}
		rt.markAutoTitle(ctx, thread.ID)
		rt.bus.Publish(Event{Type: EventThread, ThreadID: thread.ID})
	}
	if err := rt.store.CreateRun(ctx, l.run); err != nil {
		return Sent{}, fmt.Errorf("store run: %w", err)
	}
	reply, err := rt.store.AppendMessage(ctx, Message{
		ThreadID: thread.ID, ResourceID: thread.ResourceID, Role: RoleAssistant,
		Content: Content{Format: 2, Parts: []Part{}}, Status: StatusStreaming, RunID: l.run.ID,
	})
	if err != nil {
		return Sent{}, fmt.Errorf("store reply: %w", err)
	}
	l.mu.Lock() // reserved: Live reads it from now on
	l.msgID = reply.ID
	l.mu.Unlock()
	rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: reply.ID, RunID: l.run.ID})
	return Sent{User: user, MessageID: reply.ID, Run: l.run}, nil
}

// run streams the agent's answer into l, the bus and the store. start
// makes the event stream from the thread's history.
func (rt *Runtime) run(ctx context.Context, l *liveRun, start func(history []Message, opts StreamOptions) iter.Seq[Event]) {
	defer rt.wg.Done()
	defer close(l.done)
	defer l.cancel()
	threadID := l.run.ThreadID

	history, err := rt.ListMessages(ctx, threadID, MessageQuery{Limit: historyLimit, Last: true})
	if err != nil {
		if ctx.Err() != nil { // stopped before it began: a stop, not a failure
			rt.finish(l, Event{Type: EventAbort})
			return
		}
		rt.finish(l, Event{Type: EventError, Error: fmt.Sprintf("load thread history: %v", err)})
		return
	}
	// Queued messages reach the model through the run's signals, in the
	// order they were sent, not from the history.
	history = slices.DeleteFunc(history, func(m Message) bool { return m.Status == StatusQueued })
	history = modelHistory(history)
	// The store is written from a goroutine of its own: a slow disk must
	// never delay a token on its way to the screen.
	dirty, stop, flushed := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go rt.flusher(l, dirty, stop, flushed)

	last := Event{Type: EventError, Error: "the run ended without a finish"}
	opts := StreamOptions{Model: l.run.Model, RunID: l.run.ID, ThreadID: threadID, ResourceID: l.thread.ResourceID,
		Signals: &runSignals{rt: rt, l: l}, Files: rt.store}
	if rt.Prepare != nil {
		if t, err := rt.store.GetThread(ctx, threadID); err == nil {
			rt.Prepare(t, &opts) // fresh: a mode may have changed since the run was reserved
		}
	}
	l.options.apply(&opts)
	opts.shareBuffers = true // l's builder keeps views of the run's text and arguments
	streamed, loosen := 0, func() {}
	defer func() { loosen() }() // after finish: the final write is done with the collector still tight
	for e := range start(history, opts) {
		e.MessageID = l.messageID()
		if e.Terminal() {
			last = e
			break
		}
		if streamed < tightFrom {
			if streamed += len(e.Text); streamed >= tightFrom {
				loosen = tightenGC()
			}
		}
		changed := l.apply(e)
		e.soFar = "" // the bus holds events: none holds the run's buffer
		rt.bus.Publish(e)
		if changed {
			select {
			case dirty <- struct{}{}:
			default:
			}
		}
	}
	close(stop)
	<-flushed // no streaming write may land after the final one
	if err := l.saveError(); err != nil {
		last = Event{Type: EventError, Error: NotSaved(err), StoreFailed: true, Usage: last.Usage}
	}
	rt.finish(l, last)
}

// flushWait is the pause after a streaming write that took took: at least
// flushInterval, and long enough that writing a long reply whole again
// and again (each write stores all of it) takes at most a twentieth of
// the time: a 1 MiB reply was 16% of the server's CPU when written every
// 50 ms. A crash then loses a little more of a very long reply.
func flushWait(took time.Duration) time.Duration {
	return max(flushInterval, 20*took)
}

// flusher writes the streaming reply when dirty is signalled, at most every
// flushWait, until stop is closed; then it closes flushed.
func (rt *Runtime) flusher(l *liveRun, dirty, stop <-chan struct{}, flushed chan<- struct{}) {
	defer close(flushed)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-dirty:
		}
		start := time.Now()
		if err := rt.write(l, StatusStreaming, nil); saveFailed(err) {
			l.failSave(err) // the run ends; finish writes what it can
			return
		}
		t.Reset(flushWait(time.Since(start)))
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// finish writes the final state of the reply and the run, then publishes the
// terminal event and frees the thread.
func (rt *Runtime) finish(l *liveRun, e Event) {
	e.RunID, e.ThreadID, e.MessageID = l.run.ID, l.run.ThreadID, l.messageID()
	status, runStatus := StatusComplete, RunDone
	switch e.Type {
	case EventFinish:
		if e.FinishReason == FinishSuspended {
			runStatus = RunSuspended
		}
	case EventAbort:
		status, runStatus = StatusInterrupted, RunStopped
	case EventError:
		status, runStatus = StatusError, RunFailed
	}
	meta := map[string]any{"model": l.run.Model}
	switch {
	case e.Error != "":
		meta["error"] = e.Error
		if e.StoreFailed {
			meta["failure"] = FailureStore
		}
	case e.Type == EventAbort:
		meta["stopped"] = "user" // a crash leaves no such mark
	}
	if err := rt.write(l, status, meta); saveFailed(err) {
		// The whole reply could not be written: the run fails, whatever
		// the model said, and the part of the reply that was stored is
		// marked failed, now with a write of a few bytes or as soon as
		// there is room.
		if !e.StoreFailed {
			e.Type, e.Error, e.StoreFailed, e.FinishReason = EventError, NotSaved(err), true, ""
		}
		status, runStatus = StatusError, RunFailed
		id, text := l.messageID(), e.Error
		mark := func(ctx context.Context) error {
			return rt.store.MarkMessage(ctx, id, StatusError, map[string]string{"error": text, "failure": FailureStore})
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := mark(ctx); saveFailed(err) {
			rt.Log.Error("mark reply failed", "message", id, "err", err)
			rt.owe(owedWrite{what: "the failed reply " + id, write: mark, failed: id, errText: text})
		}
		cancel()
	}

	// l.run is read by Live under rt.mu: the final state is a copy.
	final := l.run
	final.Status, final.Error, final.Usage = runStatus, e.Error, e.Usage
	final.FinishedAt = time.Now().UTC()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := rt.store.FinishRun(ctx, final); err != nil {
		rt.Log.Error("store finished run", "run", l.run.ID, "err", err)
		if saveFailed(err) {
			rt.owe(owedWrite{what: "the run " + final.ID, write: func(ctx context.Context) error { return rt.store.FinishRun(ctx, final) }})
		}
	}

	// The thread changes hands under its lane: a signal sent now either
	// made it into l.pending or finds the thread idle.
	lane := rt.lane(l.run.ThreadID)
	lane.Lock()
	defer lane.Unlock()
	leftover := l.pending
	l.pending = nil
	if e.Type == EventAbort && l.stopped.Load() {
		// Stopped by the user: calls left waiting (the other questions
		// of a resumed step) end with the run.
		if history, err := rt.store.ListMessages(ctx, l.run.ThreadID, MessageQuery{Limit: historyLimit, Last: true}); err == nil {
			for _, id := range rt.closeWaiting(ctx, history) {
				rt.bus.Publish(Event{Type: EventMessageUpdated, ThreadID: l.run.ThreadID, MessageID: id})
			}
		}
	}
	rt.mu.Lock()
	delete(rt.live, l.run.ThreadID)
	titled := rt.AutoTitle && !rt.closed && e.Type == EventFinish && e.FinishReason != FinishSuspended && e.Error == ""
	if titled {
		rt.wg.Add(1) // done by retitle; this run's own count is still held
	}
	rt.mu.Unlock()
	rt.bus.Publish(e)
	if titled {
		go rt.retitle(l.run.ThreadID, l.agent, l.run.Model)
	}
	rt.turnover(l, e, leftover)
	rt.kickNotes() // what waited for the thread to fall idle may go now
}

// write stores the reply as it stands (writeLocked).
func (rt *Runtime) write(l *liveRun, status MessageStatus, meta map[string]any) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return rt.writeLocked(l, status, meta)
}

// releaseBefore is the size of a reply from which its final write is
// preceded by a collection that hands Go's free memory back to the system
// (releaseMemory): the store's final write of a reply needs several times
// its size outside Go's heap (SQLite binds, records and indexes it), and a
// 10 MiB reply left that heap holding about three times its size of
// garbage and free pages beside it. A collection of a heap of a few dozen
// MiB costs milliseconds, once per big reply.
const releaseBefore = 4 << 20

// releaseMemory collects Go's heap and returns its free pages to the
// system; a test counts its calls.
var releaseMemory = debug.FreeOSMemory

// saveRetries are the pauses before a failed write of a reply is tried
// again: a moment's contention passes within them, a full disk does not.
var saveRetries = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 750 * time.Millisecond}

// writeLocked is write with l.wmu held: the whole reply is written, tried
// again after each of saveRetries, and the last error returned (a reply
// gone from the store, ErrNotFound, is not tried again).
func (rt *Runtime) writeLocked(l *liveRun, status MessageStatus, meta map[string]any) error {
	l.mu.Lock()
	c, id, size := l.builder.content(), l.msgID, l.builder.size()
	l.mu.Unlock()
	if status != StatusStreaming && size >= releaseBefore {
		// The heap's garbage goes back to the system before the store
		// needs memory of its own to write and index the reply.
		releaseMemory()
	}
	if len(meta) > 0 && c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	for k, v := range meta {
		c.Metadata[k] = v
	}
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := rt.store.UpdateMessage(ctx, id, c, status)
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrNotFound) || try == len(saveRetries) {
			rt.Log.Error("store reply", "message", id, "status", status, "err", err)
			return err
		}
		rt.Log.Warn("store reply: trying again", "message", id, "err", err)
		time.Sleep(saveRetries[try])
	}
}

// FailureStore is content.metadata.failure of a reply that failed because
// it could not be written, not because of the model.
const FailureStore = "store"

// NotSaved is the error a run ends with when its reply could not be
// written: what the chat, the API stream and generate show.
func NotSaved(err error) string {
	if errors.Is(err, ErrDiskFull) {
		return "the disk is full: the reply could not be saved"
	}
	return "the reply could not be saved: " + err.Error()
}

// saveFailed reports whether err is a failed write of a reply that must end
// its run; a reply gone from the store (its chat deleted) is not one.
func saveFailed(err error) bool { return err != nil && !errors.Is(err, ErrNotFound) }

// failSave ends the run because its reply could not be written: the first
// cause is kept for the run's error.
func (l *liveRun) failSave(err error) {
	l.mu.Lock()
	if l.saveErr == nil {
		l.saveErr = err
	}
	l.mu.Unlock()
	l.cancel()
}

func (l *liveRun) saveError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.saveErr
}

// owe keeps a store write that failed at the end of a run and tries it
// again every oweRetry until it lands or the runtime closes: a reply must
// not stay "streaming" in the store while this process lives, and the
// disk may have room again in a minute. (What a closed runtime still owes,
// the next start marks: streaming replies interrupted, running runs failed.)
func (rt *Runtime) owe(o owedWrite) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return
	}
	if o.failed != "" {
		if rt.failedReplies == nil {
			rt.failedReplies = map[string]string{}
		}
		rt.failedReplies[o.failed] = o.errText
	}
	rt.owed = append(rt.owed, o)
	if len(rt.owed) == 1 {
		rt.wg.Add(1)
		go rt.payOwed()
	}
}

// owedWrite is a store write owe tries again.
type owedWrite struct {
	what  string
	write func(ctx context.Context) error
	// failed, errText: the write marks this reply failed with this
	// error; until it lands, reads show it so (owedMarks).
	failed, errText string
}

// oweRetry is how often owed writes are tried again.
const oweRetry = 2 * time.Second

// payOwed tries the owed writes every oweRetry until none is left or the
// runtime closes.
func (rt *Runtime) payOwed() {
	defer rt.wg.Done()
	for {
		select {
		case <-rt.titles.Done(): // closing
			return
		case <-time.After(oweRetry):
		}
		rt.mu.Lock()
		owed := rt.owed
		rt.mu.Unlock()
		var left []owedWrite
		for _, o := range owed {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			err := o.write(ctx)
			cancel()
			if saveFailed(err) {
				left = append(left, o)
				continue
			}
			rt.Log.Info("stored what a failed write left", "what", o.what)
			if o.failed != "" {
				rt.mu.Lock()
				delete(rt.failedReplies, o.failed)
				rt.mu.Unlock()
			}
		}
		rt.mu.Lock()
		rt.owed = append(left, rt.owed[len(owed):]...)
		done := len(rt.owed) == 0
		rt.mu.Unlock()
		if done {
			return
		}
	}
}

// Stop ends the thread's run: the run in progress is cancelled, its
// partial reply kept and marked interrupted; a run that waits for the user
// (a question, a plan, an approval) ends too, its calls closed as stopped.
// Either way nothing of the run is left waiting. It reports whether a run
// was stopped, and returns once the run's final state is written or ctx ends
// (then ctx.Err() says so; the run still winds down).
func (rt *Runtime) Stop(ctx context.Context, threadID string) bool {
	lane := rt.lane(threadID)
	lane.Lock()
	l := rt.liveRun(threadID)
	if l == nil {
		defer lane.Unlock()
		return rt.stopWaitingLocked(ctx, threadID)
	}
	l.stopped.Store(true)
	lane.Unlock() // the run needs the lane to let go of the thread
	l.cancel()
	select {
	case <-l.done:
	case <-ctx.Done():
		return true
	}
	// The run may have suspended just as it was stopped: what it left
	// waiting ends too.
	lane.Lock()
	defer lane.Unlock()
	if rt.liveRun(threadID) == nil {
		rt.stopWaitingLocked(ctx, threadID)
	}
	return true
}

// Wait blocks until the thread has no run in progress (queued turns
// included) or ctx ends.
func (rt *Runtime) Wait(ctx context.Context, threadID string) error {
	for {
		rt.mu.Lock()
		l := rt.live[threadID]
		rt.mu.Unlock()
		if l == nil {
			return nil
		}
		select {
		case <-l.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops every run, refuses new ones (ErrClosed), and waits until the
// runs' final state is written, or closeGrace has passed.
func (rt *Runtime) Close() {
	rt.mu.Lock()
	rt.closed = true
	rt.closeTitles()
	stop, done := rt.stopNotes, rt.notesDone
	rt.stopNotes = nil
	for _, l := range rt.live {
		l.cancel()
	}
	rt.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	grace := cmp.Or(max(rt.CloseGrace, 0), DefaultCloseGrace)
	ended := make(chan struct{})
	go func() { rt.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(grace):
		rt.Log.Warn("runs did not end in time after being stopped; closing anyway", "grace", grace)
	}
}

// titleFrom makes a thread title from its first message: the first line,
// cut at a word boundary.
func titleFrom(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= titleRunes {
		return line
	}
	r := []rune(line)[:titleRunes]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > titleRunes/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

var approvalSchema = (&Tool{ID: "approval", ResumeSchema: ApprovalResumeSchema})

func validateApproval(data json.RawMessage) error { return approvalSchema.ValidateResume(data) }
