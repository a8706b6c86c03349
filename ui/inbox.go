package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
)

// The inbox: everything that needs the user across threads — notifications,
// questions, plans and tool calls waiting for an answer, failed runs — on
// every page, live, answerable in place.

const (
	// inboxSetting keeps what the user set aside: snoozed and dismissed
	// items that are not notifications (those keep it on their record).
	inboxSetting = "inbox"
	// snoozeFor is how long "Not now" hides an item.
	snoozeFor = time.Hour
	// inboxRefresh re-reads the inbox now and then: snoozes end.
	inboxRefresh = 30 * time.Second
	// inboxFrame coalesces bursts of changes into one patch.
	inboxFrame = 100 * time.Millisecond
	// failedWindow: failed runs older than this no longer need the user.
	failedWindow = 7 * 24 * time.Hour
	inboxMax     = 200
)

// inboxState is the settings value under inboxSetting.
type inboxState struct {
	Snoozed   map[string]time.Time `json:"snoozed,omitempty"`
	Dismissed map[string]bool      `json:"dismissed,omitempty"`
}

// unread are the statuses of the notifications the inbox lists.
var unread = []agentcore.NotificationStatus{agentcore.NotePending, agentcore.NoteDelivered}

// inboxMu orders read-modify-writes of the inbox setting.
var inboxMu sync.Mutex

func (s *Server) inboxState(ctx context.Context) inboxState {
	st := inboxState{Snoozed: map[string]time.Time{}, Dismissed: map[string]bool{}}
	if raw, ok, err := s.rt.Store.GetSetting(ctx, inboxSetting); err == nil && ok {
		_ = json.Unmarshal(raw, &st)
	}
	if st.Snoozed == nil {
		st.Snoozed = map[string]time.Time{}
	}
	if st.Dismissed == nil {
		st.Dismissed = map[string]bool{}
	}
	return st
}

// inbox gathers the items, newest first.
func (s *Server) inbox(ctx context.Context) (components.Inbox, error) {
	now := time.Now()
	st := s.inboxState(ctx)
	type dated struct {
		item components.InboxItem
		at   time.Time
	}
	var items []dated
	titles := map[string]string{}
	threadTitle := func(id string) string {
		if t, ok := titles[id]; ok {
			return t
		}
		t, err := s.rt.Store.GetThread(ctx, id)
		if err != nil {
			titles[id] = ""
			return ""
		}
		titles[id] = t.Title
		return t.Title
	}
	hidden := func(key string) bool {
		if st.Dismissed[key] {
			return true
		}
		until, ok := st.Snoozed[key]
		return ok && now.Before(until)
	}

	notes, err := s.rt.Notifications(ctx, agentcore.NotificationQuery{Statuses: unread, Limit: inboxMax + 1})
	if err != nil && !isNoNotes(err) {
		return components.Inbox{}, err
	}
	older := len(notes) > inboxMax
	notes = notes[:min(len(notes), inboxMax)]
	sources := map[string]bool{}
	for _, n := range notes {
		if n.SnoozedUntil != nil && now.Before(*n.SnoozedUntil) {
			continue
		}
		sources[n.Source] = true
		items = append(items, dated{components.InboxItem{
			Key: "n/" + n.ThreadID + "/" + n.ID, Kind: "notification", ThreadID: n.ThreadID, ThreadTitle: threadTitle(n.ThreadID),
			Title: n.Summary, Source: n.Source, NoteKind: n.Kind, Priority: string(n.Priority), Status: string(n.Status),
			Count: n.CoalescedCount, When: when(n.UpdatedAt, now), Link: noteLink(n),
			Alert: n.Priority == agentcore.PriorityUrgent || n.Priority == agentcore.PriorityHigh,
		}, n.UpdatedAt})
	}

	runs, err := s.rt.Store.ListRuns(ctx, agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunFailed}, Limit: inboxMax})
	if err != nil {
		return components.Inbox{}, err
	}
	pendingDone := map[string]bool{}
	for _, run := range runs {
		switch run.Status {
		case agentcore.RunFailed:
			key := "run/" + run.ThreadID + "/" + run.ID
			if hidden(key) || now.Sub(run.StartedAt) > failedWindow || s.runSuperseded(ctx, run) {
				continue
			}
			items = append(items, dated{components.InboxItem{
				Key: key, Kind: "failed", ThreadID: run.ThreadID, ThreadTitle: threadTitle(run.ThreadID),
				Title: cmp.Or(run.Error, "The run failed"), Detail: run.Model, When: when(cmp.Or(run.FinishedAt, run.StartedAt), now),
			}, cmp.Or(run.FinishedAt, run.StartedAt)})
		case agentcore.RunSuspended:
			if pendingDone[run.ThreadID] {
				continue
			}
			pendingDone[run.ThreadID] = true
			if _, live := s.rt.Live(run.ThreadID); live {
				continue // answered a moment ago: the run goes on
			}
			calls, err := s.rt.Pending(ctx, run.ThreadID)
			if err != nil {
				continue
			}
			for _, ti := range calls {
				key := "call/" + run.ThreadID + "/" + ti.ToolCallID
				if hidden(key) {
					continue
				}
				it := components.InboxItem{Key: key, ThreadID: run.ThreadID, ThreadTitle: threadTitle(run.ThreadID),
					CallID: ti.ToolCallID, When: when(cmp.Or(run.FinishedAt, run.StartedAt), now)}
				switch {
				case ti.Approval:
					it.Kind, it.Title = "approval", "Allow "+ti.ToolName+"?"
					if card := toolCard(&ti, nil); card != nil && card.Brief != "" {
						it.Detail = card.Brief
					}
				case ti.ToolName == "submit_plan":
					it.Kind, it.Title = "plan", "A plan waits for your review"
					if p := planReview(&ti); p != nil && p.Title != "" {
						it.Title = p.Title
						it.Detail = p.Path
					}
				default:
					q := question(&ti)
					if q == nil {
						continue
					}
					it.Kind, it.Title, it.Multi, it.Alert = "question", q.Text, q.Multi, true
					it.Options = q.Options
				}
				items = append(items, dated{it, cmp.Or(run.FinishedAt, run.StartedAt)})
			}
		}
	}
	slices.SortStableFunc(items, func(a, b dated) int { return b.at.Compare(a.at) })
	in := components.Inbox{Items: make([]components.InboxItem, 0, len(items)), Live: true, OlderNotes: older}
	for _, d := range items {
		in.Items = append(in.Items, d.item)
	}
	for src := range sources {
		in.Sources = append(in.Sources, src)
	}
	slices.Sort(in.Sources)
	return in, nil
}

// runSuperseded: a later reply on the thread (a retry, or the answer to a
// new message; finished, failed or still being written) makes the failure
// history, not something that needs the user.
func (s *Server) runSuperseded(ctx context.Context, failed agentcore.Run) bool {
	msgs, err := s.rt.Store.ListMessages(ctx, failed.ThreadID, agentcore.MessageQuery{Limit: 1, Last: true})
	if err != nil || len(msgs) == 0 {
		return false
	}
	last := msgs[0]
	return last.Role == agentcore.RoleAssistant && last.RunID != "" && last.RunID != failed.ID
}

func isNoNotes(err error) bool { return errors.Is(err, agentcore.ErrNoNotifications) }

// patchInbox sends the bell and the inbox panel's list.
func patchInbox(sse *datastar.ServerSentEventGenerator, in components.Inbox) error {
	if err := sse.PatchElementTempl(components.InboxBell(in.Count())); err != nil {
		return err
	}
	return sse.PatchElementTempl(components.InboxList(in))
}

// inboxStream keeps the bell and the panel of one page current.
func (s *Server) inboxStream(rw http.ResponseWriter, r *http.Request) {
	w := s.streamWriter(rw)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // server shutdown ends the stream; unregistered when it ends
	sub := s.rt.Bus.Subscribe("", agentcore.EventNotification, agentcore.EventToolSuspended, agentcore.EventToolApproval,
		agentcore.EventStart, agentcore.EventFinish, agentcore.EventError, agentcore.EventAbort, agentcore.EventThread, eventInbox)
	defer sub.Close()
	sse := datastar.NewSSE(w, r, datastar.WithContext(ctx))
	send := func() error {
		in, err := s.inbox(ctx)
		if err != nil {
			return err
		}
		if err := patchInbox(sse, in); err != nil {
			return err
		}
		// Pages without a chat stream keep their sidebar current from
		// here: which chats run, which need you.
		sb, err := s.sidebarFor(ctx, "", in)
		if err != nil {
			return err
		}
		return sse.PatchElementTempl(components.SidebarView(sb))
	}
	if err := send(); err != nil {
		s.logStreamEnd("inbox", err)
		return
	}
	tick := time.NewTicker(inboxRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-sub.Ready():
			// Let a burst (a run ending, its notifications) settle.
			select {
			case <-time.After(inboxFrame):
			case <-ctx.Done():
				return
			}
			sub.Drain()
		}
		if err := send(); err != nil {
			s.logStreamEnd("inbox", err)
			return
		}
	}
}

// eventInbox: the inbox changed without a run or a notification (an item
// set aside).
const eventInbox agentcore.EventType = "inbox"

// inboxAct sets an item aside: a notification marked seen, archived or
// dismissed; anything snoozed ("not now" — it still waits, nothing is
// denied) or dismissed from the inbox.
func (s *Server) inboxAct(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key    string `json:"key"`
		Action string `json:"action"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		http.Error(w, "bad inbox action: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.actOn(r.Context(), body.Key, body.Action); err != nil {
		s.httpError(w, r, err)
		return
	}
	s.rt.Bus.Publish(agentcore.Event{Type: eventInbox})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) actOn(ctx context.Context, key, action string) error {
	kind, rest, _ := strings.Cut(key, "/")
	threadID, id, ok := strings.Cut(rest, "/")
	if !ok || threadID == "" || id == "" || (kind != "n" && kind != "call" && kind != "run") {
		return fmt.Errorf("%w: unknown inbox item %q", errBadRequest, key)
	}
	if kind == "n" {
		var err error
		switch action {
		case "seen":
			_, err = s.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteSeen)
		case "archive":
			_, err = s.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteArchived)
		case "dismiss":
			_, err = s.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteDismissed)
		case "snooze":
			_, err = s.rt.SnoozeNotification(ctx, threadID, id, time.Now().Add(snoozeFor))
		default:
			return fmt.Errorf("%w: a notification can be marked seen, archived, dismissed or snoozed, not %q", errBadRequest, action)
		}
		return err
	}
	inboxMu.Lock()
	defer inboxMu.Unlock()
	st := s.inboxState(ctx)
	switch action {
	case "snooze":
		st.Snoozed[key] = time.Now().Add(snoozeFor)
	case "dismiss":
		st.Dismissed[key] = true
	default:
		return fmt.Errorf("%w: this item can be snoozed or dismissed, not %q", errBadRequest, action)
	}
	// Forget what no longer matters.
	for k, until := range st.Snoozed {
		if time.Now().After(until) {
			delete(st.Snoozed, k)
		}
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.rt.Store.SetSetting(ctx, inboxSetting, raw)
}

// inboxSeenAll marks seen every unread notification of the source and
// priority given (empty: any), those past the newest inboxMax included.
func (s *Server) inboxSeenAll(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Source   string `json:"source"`
		Priority string `json:"priority"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		http.Error(w, "bad inbox action: "+err.Error(), http.StatusBadRequest)
		return
	}
	q := agentcore.NotificationQuery{Statuses: unread}
	if body.Source != "" {
		q.Sources = []string{body.Source}
	}
	if body.Priority != "" {
		p, err := agentcore.ParsePriority(body.Priority)
		if err != nil {
			s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
			return
		}
		q.Priorities = []agentcore.Priority{p}
	}
	notes, err := s.rt.Notifications(r.Context(), q)
	if err != nil && !isNoNotes(err) {
		s.httpError(w, r, err)
		return
	}
	for _, n := range notes {
		if n.SnoozedUntil != nil && time.Now().Before(*n.SnoozedUntil) {
			continue // set aside for later: not on the list the user cleared
		}
		if _, err := s.rt.SetNotificationStatus(r.Context(), n.ThreadID, n.ID, agentcore.NoteSeen); err != nil && !errors.Is(err, agentcore.ErrNotFound) {
			s.httpError(w, r, err)
			return
		}
	}
	s.rt.Bus.Publish(agentcore.Event{Type: eventInbox})
	w.WriteHeader(http.StatusNoContent)
}

// inboxFocus records whether a page has the focus (app.js reports it), so
// a desktop shell shows OS notifications only when nobody is looking.
func (s *Server) inboxFocus(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Page    string `json:"page"`
		Focused bool   `json:"focused"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1024)).Decode(&body); err != nil || body.Page == "" {
		http.Error(w, "bad focus report: want {page, focused}", http.StatusBadRequest)
		return
	}
	if body.Focused {
		s.focused.Store(body.Page, true)
	} else {
		s.focused.Delete(body.Page)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Focused reports whether a Parley page has the focus now.
func (s *Server) Focused() bool {
	focused := false
	s.focused.Range(func(_, _ any) bool { focused = true; return false })
	return focused
}

// noteLink is the web address a notification points at, if it names one:
// metadata.targetUrl, else the payload's url. Only http and https.
func noteLink(n agentcore.Notification) string {
	var payload struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(n.Payload, &payload)
	target, _ := n.Metadata["targetUrl"].(string)
	for _, raw := range []string{target, payload.URL} {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return u.String()
		}
	}
	return ""
}
