package ui

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"strings"
	"time"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
)

// pageMessages is how many messages one page of a thread holds: several
// screens of scrollback before the next page loads, while rendering a page
// stays a few milliseconds (see history.go).
const pageMessages = 50

// sidebar builds the thread list.
func (s *Server) sidebar(ctx context.Context, active string) (components.Sidebar, error) {
	in, _ := s.inboxes.Current(ctx) // without it, no chat is marked as needing you
	return s.sidebarFor(ctx, active, in)
}

// sidebarFor is the sidebar with the chats in the inbox in marked.
func (s *Server) sidebarFor(ctx context.Context, active string, in chat.Snapshot) (components.Sidebar, error) {
	threads, err := s.rt.ListThreads(ctx, agentcore.ThreadQuery{Limit: 500})
	if err != nil {
		return components.Sidebar{}, fmt.Errorf("list threads: %w", err)
	}
	sb := components.Sidebar{ActiveID: active}
	now := time.Now()
	needs := map[string]bool{}
	for _, it := range in.Items {
		needs[it.ThreadID] = true
	}
	for _, t := range threads {
		_, running := s.rt.Live(t.ID)
		item := components.ThreadItem{
			ID: t.ID, Title: t.Title, Pinned: t.Pinned, Running: running, When: when(t.UpdatedAt, now),
			NeedsYou: needs[t.ID],
		}
		// The threads come pinned first, then newest first: each group's
		// chats are together.
		id, label := threadGroup(t.Pinned, t.UpdatedAt, now)
		if n := len(sb.Groups); n > 0 && sb.Groups[n-1].ID == id {
			sb.Groups[n-1].Threads = append(sb.Groups[n-1].Threads, item)
			continue
		}
		sb.Groups = append(sb.Groups, components.ThreadGroup{ID: id, Label: label, Threads: []components.ThreadItem{item}})
	}
	return sb, nil
}

// threadGroup is the sidebar heading a chat is listed under: Pinned, or by
// the day of its last message (in the local time zone, as its time is
// shown): Today, Yesterday, Previous 7 days, Previous 30 days, then its
// month ("October", "October 2025" for another year). A time in the future
// (another machine's clock) counts as today.
func threadGroup(pinned bool, at, now time.Time) (id, label string) {
	if pinned {
		return "pinned", "Pinned"
	}
	at, now = at.Local(), now.Local()
	switch days := civilDay(now) - civilDay(at); {
	case days <= 0:
		return "today", "Today"
	case days == 1:
		return "yesterday", "Yesterday"
	case days <= 7:
		return "week", "Previous 7 days"
	case days <= 30:
		return "month", "Previous 30 days"
	}
	id = fmt.Sprintf("month-%04d-%02d", at.Year(), int(at.Month()))
	if at.Year() == now.Year() {
		return id, at.Month().String()
	}
	return id, fmt.Sprintf("%s %d", at.Month(), at.Year())
}

// civilDay numbers t's calendar day in its zone, so that days differ by
// one across a midnight whatever the hours (and a 23- or 25-hour day).
func civilDay(t time.Time) int {
	y, m, d := t.Date()
	return int(time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Unix() / 86400)
}

// chat builds an open thread's view on its latest page or, when at names
// one of its messages, on the page around that message (highlighted).
func (s *Server) chat(ctx context.Context, t agentcore.Thread, at string) (components.Chat, error) {
	msgs, pager, err := s.messageWindow(ctx, t.ID, at)
	if err != nil {
		return components.Chat{}, err
	}
	live, running := s.rt.Live(t.ID)
	c := components.Chat{ThreadID: t.ID, Title: t.Title, Model: s.threadModel(t), Running: running,
		Waiting: !running && s.rt.Waiting(ctx, t.ID),
		Mode:    threadMode(t), Plans: approvedPlans(t), Tasks: s.tasks(ctx, t.ID), YOLO: chat.Of(t).YOLO,
		Workspace: threadWorkspace(t, s.cfg.Workspace), CanPick: s.cfg.PickFolder != nil, Pager: pager}
	c.Thinking, c.NoThinking = s.chatThinking(t)
	c.Sampling = s.chatSampling(ctx, t)
	for _, m := range msgs {
		v := s.messageView(m, live, running, nil)
		v.Hit = m.ID == pager.At
		c.Messages = append(c.Messages, v)
	}
	c.Usage = s.threadUsage(ctx, t)
	c.ForkedFrom = s.forkedFrom(ctx, t)
	c.Instructions = s.instructions(ctx, t)
	c.Agent = s.chatAgent(ctx, t)
	return c, nil
}

// forkedFrom is where a forked chat came from, as its metadata says (an
// imported file may say anything: only the ids of a chat here link).
func (s *Server) forkedFrom(ctx context.Context, t agentcore.Thread) *components.ForkRef {
	from, ok := t.Metadata[agentcore.MetaForkedFrom].(map[string]any)
	if !ok {
		return nil
	}
	threadID, _ := from["threadId"].(string)
	messageID, _ := from["messageId"].(string)
	ref := &components.ForkRef{}
	if !agentcore.ValidID(threadID) || !agentcore.ValidID(messageID) {
		return ref
	}
	src, err := s.rt.GetThread(ctx, threadID)
	if err != nil {
		return ref
	}
	ref.ThreadID, ref.MessageID, ref.Title = src.ID, messageID, src.Title
	return ref
}

// threadModel is the model a thread's next run uses.
func (s *Server) threadModel(t agentcore.Thread) string {
	if m := chat.Of(t).Model; m != "" {
		return m
	}
	if d, ok := s.cfg.Agents.Of(context.Background(), chat.Of(t)); ok && d.Model != "" {
		return d.Model // the chat's agent's
	}
	if a, err := s.rt.Agent(""); err == nil {
		return a.CurrentModel()
	}
	return ""
}

// messageView renders one message; the run in progress overrides the
// store's (up to 50 ms older) copy of the reply it is writing.
//
// prev keeps the argument parsers of calls still being written across
// frames, so each frame parses only the new bytes; nil parses from scratch.
func (s *Server) messageView(m agentcore.Message, live agentcore.Live, running bool, prev *argPreview) components.Message {
	v, content, reply := s.messageShell(m, live, running)
	if reply {
		if prev == nil {
			prev = &argPreview{}
		}
		v.Parts = replyParts(m.ThreadID, content, prev)
	}
	return v
}

// messageShell is messageView without an assistant reply's parts: it
// returns the content they come from and whether the message has them.
func (s *Server) messageShell(m agentcore.Message, live agentcore.Live, running bool) (components.Message, agentcore.Content, bool) {
	if running && live.MessageID == m.ID {
		m.Content, m.Status = live.Content, agentcore.StatusStreaming
	}
	v := components.Message{ID: m.ID, ThreadID: m.ThreadID, Role: string(m.Role), Status: string(m.Status)}
	text := m.Content.Text()
	if sig, ok := agentcore.SignalOf(m); ok {
		if sig.Type != agentcore.SignalUser {
			v.Signal = signalLine(sig)
			return v, m.Content, false
		}
		v.Role, v.Badge = string(agentcore.RoleUser), signalBadge(sig, m.Status)
		v.CanEdit = m.Status == agentcore.StatusQueued
	}
	reply := v.Role != string(agentcore.RoleUser)
	if !reply {
		v.HTML = `<p class="plain">` + html.EscapeString(text) + `</p>`
		v.Files = messageFiles(m.Content)
	}
	meta := m.Content.Metadata
	v.Model, _ = meta["model"].(string)
	if m.Status == agentcore.StatusStreaming && running && live.MessageID == m.ID {
		v.Model = live.Run.Model
		if reply && !answered(m.Content) && !live.Run.StartedAt.IsZero() {
			v.WaitingSince = live.Run.StartedAt.UnixMilli()
		}
	}
	v.Usage = messageUsage(m.Content, v.Model)
	v.HasText = strings.TrimSpace(text) != ""
	switch m.Status {
	case agentcore.StatusError:
		v.Error, _ = meta["error"].(string)
		v.NotSaved = meta["failure"] == agentcore.FailureStore
		if v.Error == "" {
			v.Error = "unknown error"
		}
	case agentcore.StatusInterrupted:
		if meta["stopped"] == "user" {
			v.Note = "Stopped"
		} else {
			v.Note = "Interrupted — Parley stopped while this reply was being written"
		}
	}
	if meta["retried"] == true {
		v.Retried = true
		if v.Note == "" {
			v.Note = "Answered again below"
		} else {
			v.Note += " · answered again below"
		}
	}
	if m.Status == agentcore.StatusStreaming && !(running && live.MessageID == m.ID) {
		// Stored as streaming but no run writes it: the run ended a moment
		// ago; the final write is on its way.
		v.Status = string(agentcore.StatusComplete)
	}
	s.treeActions(&v, m)
	return v, m.Content, reply
}

// treeActions says what a message offers to grow or walk the chat's tree:
// its versions, Edit for a message the user sent, Regenerate for a
// finished reply, Fork for any stored message. A message still being
// written or waiting in the queue offers none.
func (s *Server) treeActions(v *components.Message, m agentcore.Message) {
	if v.Signal != nil || v.Status == string(agentcore.StatusStreaming) || v.Status == string(agentcore.StatusQueued) {
		return
	}
	_, signal := agentcore.SignalOf(m)
	v.CanRewrite = v.Role == string(agentcore.RoleUser) && !signal
	v.CanRegenerate = v.Role == string(agentcore.RoleAssistant)
	v.CanFork = true
	sib, err := s.rt.Siblings(s.ctx, m.ThreadID, m.ID)
	if err != nil {
		s.log.Warn("versions of a message are not readable", "message", m.ID, "err", err)
		return
	}
	if vs, ok := sib[m.ID]; ok && len(vs.IDs) > 1 {
		v.Versions = &components.Versions{N: vs.Index + 1, Of: len(vs.IDs)}
		if vs.Index > 0 {
			v.Versions.Prev = vs.IDs[vs.Index-1]
		}
		if vs.Index+1 < len(vs.IDs) {
			v.Versions.Next = vs.IDs[vs.Index+1]
		}
	}
}

// when is a compact timestamp for the sidebar.
func when(t, now time.Time) string {
	t = t.Local()
	switch {
	case now.Sub(t) < 24*time.Hour && t.Day() == now.Day():
		return t.Format("15:04")
	case now.Sub(t) < 6*24*time.Hour:
		return t.Format("Mon")
	case t.Year() == now.Year():
		return t.Format("2 Jan")
	default:
		return t.Format("Jan 2006")
	}
}

// modelList is the picker's list with the current model first.
func (s *Server) modelList(current string) []string {
	out := []string{}
	if current != "" {
		out = append(out, current)
	}
	for _, m := range s.cfg.Models() {
		if !strings.EqualFold(m, current) {
			out = append(out, m)
		}
	}
	return out
}

// threadMode is "plan" or "build" (the default).
func threadMode(t agentcore.Thread) string {
	return string(chat.Of(t).Mode)
}

// tasks is the thread's task list as the task tools stored it.
func (s *Server) tasks(ctx context.Context, threadID string) []components.Task {
	list, err := chat.Tasks(ctx, s.rt, threadID)
	if err != nil {
		s.log.Warn("task list is not readable", "thread", threadID, "err", err)
		return nil
	}
	return taskViews(list)
}

// taskViews are the panel's rows of a task list.
func taskViews(list []chat.Task) []components.Task {
	var out []components.Task
	for _, t := range list {
		out = append(out, components.Task{ID: t.ID, Content: t.Content, Status: t.Status, ActiveForm: t.ActiveForm})
	}
	return out
}

// approvedPlans are the plans approved in the chat.
func approvedPlans(t agentcore.Thread) []components.PlanRef {
	var out []components.PlanRef
	for _, p := range chat.Of(t).Plans {
		when := ""
		if !p.ApprovedAt.IsZero() {
			when = p.ApprovedAt.Local().Format("2 Jan 15:04")
		}
		out = append(out, components.PlanRef{Title: cmp.Or(p.Title, "Implementation plan"), Path: p.Path, When: when})
	}
	return out
}

// threadWorkspace is the folder a thread's tools work in.
func threadWorkspace(t agentcore.Thread, def string) string {
	return chat.Of(t).WorkspaceOr(def)
}

// signalBadge says how a user message sent while the agent worked reaches
// it: queued as the next turn, or read at the agent's next step.
func signalBadge(sig agentcore.Signal, status agentcore.MessageStatus) string {
	turn := sig.Metadata["queuedTurn"] == true
	switch {
	case status == agentcore.StatusQueued && turn:
		return "Queued — sent when this reply ends"
	case status == agentcore.StatusQueued:
		return "Steering — Parley reads it at its next step"
	}
	return ""
}

// signalLine is a signal other than a user message, as one line.
func signalLine(sig agentcore.Signal) *components.SignalLine {
	l := &components.SignalLine{Tag: sig.TagName, Text: sig.Contents, Label: sig.TagName}
	attr := func(name string) string {
		v, _ := sig.Attributes.Get(name)
		s, _ := v.(string)
		return s
	}
	switch sig.TagName {
	case "notification":
		l.Priority = attr("priority")
		l.Label = "Notification · " + attr("source")
		if k := attr("kind"); k != "" {
			l.Label += " · " + k
		}
	case "notification-summary":
		l.Label = "Inbox summary"
	case "state":
		l.Label = "State"
		if st, ok := sig.Metadata["state"].(map[string]any); ok {
			if id, _ := st["id"].(string); id != "" {
				l.Label = "State · " + id
			}
		}
	case "system-reminder":
		l.Label = "Reminder"
	}
	if l.Text == "" {
		l.Text = sig.XML()
	}
	return l
}

// answered: the reply has something to show, so the model is no longer
// waited for.
func answered(c agentcore.Content) bool {
	for _, p := range c.Parts {
		if p.Text != "" || p.ToolInvocation != nil || p.Source != nil {
			return true
		}
	}
	return false
}
