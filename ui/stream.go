package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
)

// frame is the coalescing window of a chat stream: at most one patch per
// message per frame, so a fast model (thousands of tokens a second) costs the
// browser ~60 morphs a second, while a slow one gets each token at once.
const frame = 16 * time.Millisecond

// sideDelay is how long after a frame that patched a reply the rest of
// what changed with it follows (the sidebar, the header, the inbox, the
// composer's buttons, the task panel, the usage): on their own, those
// patches and the reads behind them are not in the way of the reply's
// text, on the server or in the page, which applies a network read's
// events in one task. A reply's first tokens came with all of them (a run
// starts, its chat is titled): 10-60 ms to the screen at 50 tok/s, where
// the others took 1-2 ms; so did its last, with the run's end.
const sideDelay = 4 * time.Millisecond

// startHold is how long at most a run's start holds the rest for its
// reply's first frame (chatStream.opening): a model that answers at once
// (a local one, a cached prompt) has its first token on the page with the
// run's new title in the header and the sidebar, not behind them; the
// rest of a slower one shows 50 ms (three frames) after the send.
const startHold = 50 * time.Millisecond

// stream is the one long-lived stream of an open chat. It subscribes to the
// thread (and, for the sidebar, to thread-level events of every thread),
// sends the current state once, then patches what changed, coalesced per
// frame. Terminal events are flushed at once. It never owns a run: closing it
// stops nothing.
func (s *Server) stream(rw http.ResponseWriter, r *http.Request) {
	w := s.streamWriter(rw)
	id := r.PathValue("id")
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // server shutdown ends the stream; unregistered when it ends

	threadSub := s.rt.Subscribe(id)
	defer threadSub.Close()
	listSub := s.rt.Subscribe("", agentcore.EventThread, agentcore.EventMessage,
		agentcore.EventStart, agentcore.EventFinish, agentcore.EventAbort, agentcore.EventError)
	defer listSub.Close()
	// The inbox is computed once for every page; this stream renders it.
	inboxWatch := s.inboxes.Watch()
	defer inboxWatch.Close()

	v := &chatStream{s: s, id: id, at: r.URL.Query().Get("m"), out: w, sse: datastar.NewSSE(w, r, datastar.WithContext(ctx)), shown: map[string]bool{}, live: map[string]*liveReply{},
		gate: newGate()}
	s.gates.Store(v.gate.token, v.gate)
	defer s.gates.Delete(v.gate.token)
	defer v.gate.stop()
	// Subscribed first, then the full state: nothing between the page load
	// and this moment is lost, and what comes twice is idempotent.
	if err := v.full(ctx); err != nil {
		s.logStreamEnd(id, err)
		return
	}

	// One timer wakes the loop for the next frame: wake arms it to fire d
	// from now, unless it fires sooner already.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var due time.Time // when timer fires; zero when it is not armed
	wake := func(d time.Duration) {
		if at := time.Now().Add(d); due.IsZero() || at.Before(due) {
			due = at
			timer.Reset(d)
		}
	}
	var last time.Time // the last frame that patched a reply on the page
	for {
		select {
		case <-ctx.Done():
			return
		case <-threadSub.Ready():
		case <-listSub.Ready():
		case <-inboxWatch.C():
			v.inbox, v.sidebar = true, true // the sidebar marks chats that need you
		case <-timer.C:
			due = time.Time{}
		case n := <-v.gate.acks:
			v.gate.acked(n)
		case <-v.gate.expired():
			v.gate.timedOut()
		}
		v.take(threadSub.Drain(), listSub.Drain())
		if !v.dirty() || v.gate.waiting {
			continue // what changes meanwhile goes in the frame after the page's answer
		}
		if wait := v.wait(last); wait > 0 {
			wake(wait)
			continue
		}
		at := time.Now()
		v.frameBytes, v.frameAdded, v.frameReplaced = 0, 0, 0
		err := v.flush(ctx)
		if v.paced {
			last = at
		}
		if err == nil && (v.behind || v.frameBytes >= ackMin) {
			err = v.askAck()
		}
		if err != nil {
			s.logStreamEnd(id, err)
			return
		}
		// No event needs to wake the next frame.
		if v.sideDirty() {
			wake(sideDelay)
		} else if v.behind {
			wake(frame)
		}
	}
}

// wait is how long the next frame waits: a reply's frames go a frame
// apart, the rest sideDelay after the last of them, or while a run is
// opening with its reply's first frame (startHold at most); a terminal
// event waits for nothing.
func (v *chatStream) wait(last time.Time) time.Duration {
	switch {
	case v.urgent:
		return 0
	case v.replyDirty():
		return frame - time.Since(last)
	case time.Now().Before(v.openUntil):
		return time.Until(v.openUntil)
	}
	return sideDelay - time.Since(last)
}

func (s *Server) logStreamEnd(id string, err error) {
	if !errors.Is(err, context.Canceled) {
		s.log.Debug("chat stream ended", "thread", id, "err", err)
	}
}

// chatStream is the state of one open chat's stream: what the browser shows
// and what has changed since the last patch.
type chatStream struct {
	s     *Server
	id    string
	at    string        // the message the chat opened on (a search hit): full shows its page
	out   *streamWriter // under sse
	sse   *datastar.ServerSentEventGenerator
	shown map[string]bool       // message ids in the browser's #messages
	args  argPreview            // parsers of tool calls being written
	live  map[string]*liveReply // replies being written, as the page holds them

	added    []string        // messages to append, in order
	changed  map[string]bool // messages to re-render
	sidebar  bool
	header   bool
	inbox    bool // what needs the user may have changed
	tasks    bool // the stored task list changed
	liveTask bool // a task_write is streaming: preview its list
	actions  bool
	usage    bool // a run ended: the thread's usage total changed
	urgent   bool // a terminal event: flush now
	branch   bool // the active branch changed: show its messages again
	behind   bool // a reply on the page lags its text (liveReply's pace): send more next frame
	held     bool // the last flush left all but the messages for the next (sideDelay)
	// paced says the last flush patched a message already on the page (a
	// reply's text, its state): only such frames space the next one a
	// frame apart. A run's start marks its reply changed before the
	// first token, and a frame that found nothing to patch held that
	// token back up to a frame; at 50 tok/s each later token then waited
	// for the one before, 15, 10, 6, 2 ms.
	paced bool
	// openUntil is when the rest stops waiting for the first frame of the
	// reply of run openRun (opening); zero when it does not wait.
	openRun   string
	openUntil time.Time

	gate       *gate             // flow control (flow.go)
	last       map[string]string // what patchOnce last sent, by part
	rows       map[string]string // the sidebar's rows as last sent, by thread id (patchSidebar)
	frameBytes int               // HTML the frame being flushed patches into a reply
	// frameAdded and frameReplaced split the frame's text and cards into
	// what it adds to the page and what it replaces there (an open block,
	// a card), for the gate's pace.
	frameAdded, frameReplaced int
}

func (v *chatStream) take(thread, list []agentcore.Event) {
	for _, e := range thread {
		switch e.Type {
		case agentcore.EventMessage:
			// New, or one already shown that moved to the end (a message
			// sent while the agent worked, filed where the agent read it).
			if !contains(v.added, e.MessageID) {
				v.added = append(v.added, e.MessageID)
			}
		case agentcore.EventStart:
			v.actions = true
			v.change(e.MessageID)
		case agentcore.EventThread:
			v.header = true
		case agentcore.EventTasks:
			v.tasks = true
		case agentcore.EventBranch:
			v.branch = true
		default: // text, reasoning and tool events change the reply
			v.change(e.MessageID)
			if e.ToolName == "task_write" && e.Type == agentcore.EventToolCallDelta {
				v.liveTask = true
			}
		}
		if e.Terminal() {
			v.change(e.MessageID)
			v.actions, v.urgent, v.usage = true, true, true
		}
	}
	if len(list) > 0 { // a run started or ended, a thread or its messages changed
		v.sidebar = true
	}
}

func (v *chatStream) change(id string) {
	if id == "" {
		return
	}
	if v.changed == nil {
		v.changed = map[string]bool{}
	}
	v.changed[id] = true
}

func (v *chatStream) dirty() bool {
	return v.replyDirty() || v.sideDirty()
}

// replyDirty says whether messages are to be patched.
func (v *chatStream) replyDirty() bool {
	return v.branch || len(v.added) > 0 || len(v.changed) > 0 || v.behind
}

// sideDirty says whether anything but the messages is to be patched.
func (v *chatStream) sideDirty() bool {
	return v.sidebar || v.header || v.actions || v.tasks || v.liveTask || v.usage || v.inbox
}

// full sends the whole chat: used once when the stream opens.
func (v *chatStream) full(ctx context.Context) error {
	t, err := v.s.rt.GetThread(ctx, v.id)
	if errors.Is(err, agentcore.ErrNotFound) {
		return v.sse.PatchElementTempl(components.Messages(components.Chat{ThreadID: v.id, Deleted: true}))
	}
	if err != nil {
		return err
	}
	c, err := v.s.chat(ctx, t, v.at)
	if err != nil {
		return err
	}
	for _, m := range c.Messages {
		v.shown[m.ID] = true
	}
	if err := v.sse.PatchElementTempl(components.Messages(c)); err != nil {
		return err
	}
	if err := v.patchOnce("actions", components.ComposerActions(v.id, c.Running, c.Waiting)); err != nil {
		return err
	}
	// The header too, though the page came with it: what it was sent
	// then may have changed since, and from here on this stream patches
	// only what changes in it.
	if err := v.patchHeader(ctx, t); err != nil {
		return err
	}
	if err := v.patchOnce("usage", components.ThreadUsageView(v.s.threadUsage(ctx, t))); err != nil {
		return err
	}
	in, err := v.s.inboxes.Current(ctx)
	if err != nil {
		return err
	}
	return v.patchInboxSidebar(ctx, in, true, true)
}

// flush patches everything marked changed, the messages first: a frame
// that patches them leaves the rest (the sidebar, the header, the inbox,
// the composer's buttons, the task panel, the usage) for sideDelay later,
// once (what waited goes with the next frame, however busy the reply).
// While a run is opening the rest waits, and goes with its reply's first
// frame, after it: the page then applies and draws it all in the time
// before the next token, where sent sideDelay later it was still at it
// when the second token came.
func (v *chatStream) flush(ctx context.Context) error {
	live, running := v.s.rt.Live(v.id)
	wasOpen := !v.openUntil.IsZero()
	open := v.opening(running, live)
	hold := v.sideDirty() && (open && !v.urgent || (!wasOpen && !v.held && v.replyDirty()))
	v.held, v.paced = hold, false
	defer func() {
		v.added, v.changed, v.urgent = nil, nil, false
		if !hold {
			v.sidebar, v.header, v.actions = false, false, false
			v.tasks, v.liveTask, v.usage, v.inbox = false, false, false, false
		}
	}()
	// The thread is read only when its header may have changed (a rename,
	// a mode switch, a deletion, a run's usage): token frames touch the
	// store not at all.
	var t agentcore.Thread
	if (v.header || v.usage) && !hold {
		var err error
		t, err = v.s.rt.GetThread(ctx, v.id)
		if errors.Is(err, agentcore.ErrNotFound) {
			if err := v.sse.PatchElementTempl(components.Messages(components.Chat{ThreadID: v.id, Deleted: true})); err != nil {
				return err
			}
			return v.patchInboxSidebar(ctx, v.s.inboxes.Latest(), false, true)
		}
		if err != nil {
			return err
		}
	}
	if v.branch {
		// Another branch: the whole list again, as when the page opened.
		v.branch = false
		if err := v.showBranch(ctx); err != nil {
			return err
		}
	}
	// A reply the page lags: the next piece of it, live or finishing.
	if v.behind {
		v.behind = false
		for id, lr := range v.live {
			if lr.final == nil && !(running && live.MessageID == id) {
				continue
			}
			if v.changed == nil {
				v.changed = map[string]bool{}
			}
			v.changed[id] = true
		}
	}

	for _, id := range v.added {
		m, err := v.s.rt.GetMessage(ctx, id)
		if err != nil {
			continue // deleted meanwhile
		}
		if len(v.shown) == 0 {
			if err := v.sse.RemoveElementByID("messages-empty"); err != nil {
				return err
			}
		}
		if v.shown[id] {
			if err := v.sse.RemoveElementByID(components.MsgID(id)); err != nil {
				return err
			}
		}
		v.shown[id] = true
		delete(v.changed, id)
		if running && live.MessageID == id {
			if err := v.showLive(m, live, true); err != nil {
				return err
			}
			continue
		}
		if err := v.sse.PatchElementTempl(components.MessageView(v.s.messageView(m, live, running, &v.args)),
			datastar.WithSelectorID("messages"), datastar.WithModeAppend()); err != nil {
			return err
		}
	}
	written := v.out.written
	for id := range v.changed {
		if !v.shown[id] {
			continue
		}
		m := agentcore.Message{ID: id, ThreadID: v.id, Role: agentcore.RoleAssistant}
		if running && live.MessageID == id {
			if err := v.showLive(m, live, false); err != nil {
				return err
			}
			continue
		}
		if lr := v.live[id]; lr != nil && lr.final != nil {
			if err := v.finishLive(lr, *lr.final); err != nil {
				return err
			}
			continue
		}
		m, err := v.s.rt.GetMessage(ctx, id)
		if errors.Is(err, agentcore.ErrNotFound) {
			// Taken back (a queued message the user edits again).
			delete(v.shown, id)
			delete(v.live, id)
			if err := v.sse.RemoveElementByID(components.MsgID(id)); err != nil {
				return err
			}
			continue
		} else if err != nil {
			continue
		}
		if lr := v.live[id]; lr != nil {
			if err := v.finishLive(lr, m); err != nil {
				return err
			}
			continue
		}
		if err := v.sse.PatchElementTempl(components.MessageView(v.s.messageView(m, live, running, &v.args))); err != nil {
			return err
		}
	}
	v.paced = v.out.written > written
	if hold {
		return nil
	}
	if v.actions {
		if err := v.patchOnce("actions", components.ComposerActions(v.id, running, !running && v.s.rt.Waiting(ctx, v.id))); err != nil {
			return err
		}
	}
	if v.header {
		if err := v.patchHeader(ctx, t); err != nil {
			return err
		}
	}
	// The usage sits beside Send, not in the header; its context meter
	// depends on the chat's model, which the header switches.
	if v.usage || v.header {
		if err := v.patchOnce("usage", components.ThreadUsageView(v.s.threadUsage(ctx, t))); err != nil {
			return err
		}
	}
	if v.tasks || v.liveTask {
		tasks := v.s.tasks(ctx, v.id)
		if v.liveTask && !v.tasks && running {
			if streamed, ok := streamingTasks(live.Content, &v.args); ok {
				tasks = streamed
			}
		}
		if err := v.patchOnce("tasks", components.TaskPanel(tasks)); err != nil {
			return err
		}
	}
	if v.inbox || v.sidebar {
		return v.patchInboxSidebar(ctx, v.s.inboxes.Latest(), v.inbox, v.sidebar)
	}
	return nil
}

// opening says whether a run has started whose reply has nothing to show
// yet, for at most startHold from when this stream first saw it so.
func (v *chatStream) opening(running bool, live agentcore.Live) bool {
	open := running && len(live.Content.Parts) == 0
	if open && v.openRun != live.Run.ID {
		v.openRun, v.openUntil = live.Run.ID, time.Now().Add(startHold)
	}
	if open = open && time.Now().Before(v.openUntil); !open {
		v.openUntil = time.Time{}
	}
	return open
}

// patchInboxSidebar sends the inbox (bell and list) and/or the sidebar,
// which marks the chats in it.
func (v *chatStream) patchInboxSidebar(ctx context.Context, in chat.Snapshot, inbox, sidebar bool) error {
	if inbox {
		view := inboxView(in)
		if err := v.patchOnce("bell", components.InboxBell(view.Count())); err != nil {
			return err
		}
		if err := v.patchOnce("inbox", components.InboxList(view)); err != nil {
			return err
		}
	}
	if !sidebar {
		return nil
	}
	sb, err := v.s.sidebarFor(ctx, v.id, in)
	if err != nil {
		return err
	}
	return v.patchSidebar(sb)
}

// patchHeader patches the chat's header, its mode and YOLO switches: of
// the header only its title when nothing else in it changed (a run's
// start titles a new chat), else all of it. Each morph of the page is
// time a reply's first tokens wait behind.
func (v *chatStream) patchHeader(ctx context.Context, t agentcore.Thread) error {
	c := components.Chat{ThreadID: t.ID, Model: v.s.threadModel(t), Plans: approvedPlans(t), Workspace: threadWorkspace(t, v.s.cfg.Workspace), CanPick: v.s.cfg.PickFolder != nil,
		Usage: v.s.threadUsage(ctx, t), Instructions: v.s.instructions(ctx, t), Agent: v.s.chatAgent(ctx, t)}
	c.Thinking, c.NoThinking = v.s.chatThinking(t)
	c.Sampling = v.s.chatSampling(ctx, t)
	models := v.s.modelList(c.Model)
	// The header's shape is the header with no title.
	if shape := renderString(components.ChatHeader(c, models)); v.last["header"] != shape {
		c.Title = t.Title
		v.setLast("header", shape)
		v.setLast("title", renderString(components.ChatTitle(t.Title)))
		if err := v.sse.PatchElementTempl(components.ChatHeader(c, models)); err != nil {
			return err
		}
	} else if err := v.patchOnce("title", components.ChatTitle(t.Title)); err != nil {
		return err
	}
	if err := v.patchOnce("mode", components.ModeSwitch(t.ID, threadMode(t))); err != nil {
		return err
	}
	return v.patchOnce("yolo", components.YoloSwitch(t.ID, chat.Of(t).YOLO))
}

// patchSidebar patches the sidebar: only the rows that changed while its
// groups hold the same chats in the same order (a run starts or ends, a
// chat is titled), else all of it. It lists up to 500 chats: morphing
// all of them at every run's start and end cost the page more than the
// reply's first tokens.
func (v *chatStream) patchSidebar(sb components.Sidebar) error {
	var shape strings.Builder
	rows := make(map[string]string, len(v.rows))
	for _, g := range sb.Groups {
		fmt.Fprintf(&shape, "%q %q:", g.ID, g.Label)
		for _, t := range g.Threads {
			shape.WriteString(" " + t.ID)
			rows[t.ID] = renderString(components.ThreadRow(t, t.ID == sb.ActiveID))
		}
		shape.WriteByte('\n')
	}
	same := v.rows != nil && v.last["sidebar"] == shape.String()
	old := v.rows
	v.rows = rows
	if !same {
		v.setLast("sidebar", shape.String())
		return v.sse.PatchElementTempl(components.SidebarView(sb))
	}
	for _, g := range sb.Groups {
		for _, t := range g.Threads {
			if html := rows[t.ID]; html != old[t.ID] {
				if err := v.sse.PatchElements(html); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// setLast records html as what this stream last sent for part.
func (v *chatStream) setLast(part, html string) {
	if v.last == nil {
		v.last = map[string]string{}
	}
	v.last[part] = html
}

// patchOnce patches c unless its HTML is what this stream last sent for
// part: a run's start and end mark the sidebar, the header, the inbox and
// the composer changed several times over, mostly with nothing new, and
// each morph is page time the reply's first tokens wait behind.
func (v *chatStream) patchOnce(part string, c templ.Component) error {
	html := renderString(c)
	if v.last[part] == html {
		return nil
	}
	v.setLast(part, html)
	return v.sse.PatchElements(html)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
