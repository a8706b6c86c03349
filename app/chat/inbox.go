package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"parley/agentcore"
)

// The inbox: everything that needs the user across threads — notifications,
// questions, plans and tool calls waiting for an answer, failed runs.
//
// It is computed once per change, not once per open page: an Inbox follows
// the runtime's bus for the events that change it, lets a burst settle, reads
// the store once and hands the snapshot to every watcher. A page that opens
// takes the latest snapshot; one that reads right after a change it caused
// (Act, a run that ended) gets it recomputed first, once for all readers.

const (
	// inboxSetting keeps what the user set aside: snoozed and dismissed
	// items that are not notifications (those keep it on their record).
	inboxSetting = "inbox"
	// snoozeFor is how long "Not now" hides an item.
	snoozeFor = time.Hour
	// inboxRefresh recomputes now and then: snoozes end, failures age out.
	inboxRefresh = 30 * time.Second
	// inboxFrame coalesces a burst of changes (a run ending, its
	// notifications) into one computation.
	inboxFrame = 100 * time.Millisecond
	// failedWindow: failed runs older than this no longer need the user.
	failedWindow = 7 * 24 * time.Hour
	// inboxMax bounds the notifications (and runs) one snapshot lists.
	inboxMax = 200
)

// inboxEvents are the runtime's events that may change the inbox: a
// notification, a call that waits, a run that starts or ends, a thread
// renamed or deleted, a message (a later reply makes a failure history).
var inboxEvents = []agentcore.EventType{
	agentcore.EventNotification, agentcore.EventToolSuspended, agentcore.EventToolApproval,
	agentcore.EventStart, agentcore.EventFinish, agentcore.EventError, agentcore.EventAbort,
	agentcore.EventThread, agentcore.EventMessage,
}

// ItemKind is what an inbox item asks of the user.
type ItemKind string

const (
	KindNotification ItemKind = "notification"
	KindQuestion     ItemKind = "question"
	KindPlan         ItemKind = "plan"
	KindApproval     ItemKind = "approval"
	KindFailed       ItemKind = "failed"
)

// Item is one thing that needs the user. Exactly one of the payloads is set,
// the one its Kind names.
type Item struct {
	// Key is what Act names: "n/<thread>/<id>", "call/<thread>/<call>",
	// "run/<thread>/<run>".
	Key         string
	Kind        ItemKind
	ThreadID    string
	ThreadTitle string
	At          time.Time // when it came to need the user: the order, newest first
	CallID      string    // questions, plans, approvals: the waiting call

	Notification *Notification
	Question     *Question
	Plan         *Plan
	Approval     *Approval
	Failed       *FailedRun
}

// Notification is an unread notification.
type Notification struct {
	ID       string
	Summary  string
	Source   string
	Kind     string
	Priority agentcore.Priority
	Status   agentcore.NotificationStatus
	Count    int    // notifications coalesced into this one
	Link     string // the http(s) address it points at, if any
}

// Question is what an ask_user call asks.
type Question struct {
	Text    string
	Options []Option
	Multi   bool
}

// Option is one answer a question offers.
type Option struct{ Label, Description string }

// Plan is a submit_plan call waiting for review; Title and Path are empty
// while its payload is not readable.
type Plan struct{ Title, Path string }

// Approval is a tool call waiting to be allowed: the call as it stands.
type Approval struct{ Call agentcore.ToolInvocation }

// FailedRun is a run that failed and has not been answered since.
type FailedRun struct {
	RunID string
	Error string
	Model string
}

// Snapshot is the inbox at one moment.
type Snapshot struct {
	// Seq numbers the computations: a watcher that has shown Seq n has
	// nothing to do until a snapshot with a higher one.
	Seq     int64
	Items   []Item   // newest first
	Sources []string // the notifications' sources, sorted
	// OlderNotes: more unread notifications wait past the inboxMax newest.
	OlderNotes bool
}

// ErrBadInboxAction: an item key or action the inbox does not know.
var ErrBadInboxAction = errors.New("bad inbox action")

// unread are the statuses of the notifications the inbox lists.
var unread = []agentcore.NotificationStatus{agentcore.NotePending, agentcore.NoteDelivered}

// Inbox computes the inbox once per change and hands it to its watchers.
type Inbox struct {
	rt  *agentcore.Runtime
	log *slog.Logger
	sub *agentcore.Subscription

	// mu: one computation at a time; stale says the store changed in a
	// way no event announced (an item set aside).
	mu    sync.Mutex
	stale bool
	snap  atomic.Pointer[Snapshot] // nil until the first computation

	computations atomic.Int64

	wmu      sync.Mutex
	watchers map[*Watch]struct{}

	// stateMu orders read-modify-writes of the inbox setting.
	stateMu sync.Mutex

	kick      chan struct{}
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// NewInbox follows rt's bus until Close.
func NewInbox(rt *agentcore.Runtime, log *slog.Logger) *Inbox {
	if log == nil {
		log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	i := &Inbox{rt: rt, log: log, sub: rt.Subscribe("", inboxEvents...), watchers: map[*Watch]struct{}{},
		kick: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go i.loop(ctx)
	return i
}

// Close stops following the bus; watchers get nothing more. It is safe to
// call more than once.
func (i *Inbox) Close() {
	i.closeOnce.Do(func() {
		i.stop()
		<-i.done
		i.sub.Close()
	})
}

// Computations is how many times the inbox has been computed.
func (i *Inbox) Computations() int64 { return i.computations.Load() }

// Current is the inbox now: the latest snapshot, recomputed first (once,
// whoever else asks meanwhile) when a change is waiting.
func (i *Inbox) Current(ctx context.Context) (Snapshot, error) {
	return i.refresh(ctx, false)
}

// Latest is the last snapshot computed, without touching the store; zero
// before the first computation.
func (i *Inbox) Latest() Snapshot {
	if s := i.snap.Load(); s != nil {
		return *s
	}
	return Snapshot{}
}

// refresh recomputes when a change waits (or force) and tells the watchers.
func (i *Inbox) refresh(ctx context.Context, force bool) (Snapshot, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	changed := len(i.sub.Drain()) > 0 || i.stale || force
	if cur := i.snap.Load(); cur != nil && !changed {
		return *cur, nil
	}
	i.stale = true // until a computation succeeds
	s, err := i.compute(ctx)
	if err != nil {
		return i.Latest(), err
	}
	i.stale = false
	i.snap.Store(&s)
	i.notify()
	return s, nil
}

// changed marks the inbox stale and has it recomputed.
func (i *Inbox) changed() {
	i.mu.Lock()
	i.stale = true
	i.mu.Unlock()
	select {
	case i.kick <- struct{}{}:
	default:
	}
}

func (i *Inbox) loop(ctx context.Context) {
	defer close(i.done)
	tick := time.NewTicker(inboxRefresh)
	defer tick.Stop()
	for {
		force := false
		select {
		case <-ctx.Done():
			return
		case <-i.sub.Ready():
		case <-i.kick:
		case <-tick.C:
			if i.watching() == 0 {
				i.mu.Lock()
				i.stale = true // the next reader recomputes
				i.mu.Unlock()
				continue
			}
			force = true
		}
		// Let a burst settle.
		select {
		case <-time.After(inboxFrame):
		case <-ctx.Done():
			return
		}
		if _, err := i.refresh(ctx, force); err != nil && ctx.Err() == nil {
			i.log.Warn("inbox not computed", "err", err)
		}
	}
}

// Watch is one reader of the inbox: C is signalled when a newer snapshot
// is out (read it with Latest).
type Watch struct {
	i *Inbox
	c chan struct{}
}

// Watch starts watching; Close it when done.
func (i *Inbox) Watch() *Watch {
	w := &Watch{i: i, c: make(chan struct{}, 1)}
	i.wmu.Lock()
	i.watchers[w] = struct{}{}
	i.wmu.Unlock()
	return w
}

// C is signalled when a newer snapshot is out.
func (w *Watch) C() <-chan struct{} { return w.c }

// Close stops watching; it is safe to call more than once.
func (w *Watch) Close() {
	w.i.wmu.Lock()
	delete(w.i.watchers, w)
	w.i.wmu.Unlock()
}

func (i *Inbox) watching() int {
	i.wmu.Lock()
	defer i.wmu.Unlock()
	return len(i.watchers)
}

func (i *Inbox) notify() {
	i.wmu.Lock()
	defer i.wmu.Unlock()
	for w := range i.watchers {
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
}

// setAside is the settings value under inboxSetting.
type setAside struct {
	Snoozed   map[string]time.Time `json:"snoozed,omitempty"`
	Dismissed map[string]bool      `json:"dismissed,omitempty"`
}

func (i *Inbox) setAside(ctx context.Context) setAside {
	st := setAside{}
	if raw, ok, err := i.rt.GetSetting(ctx, inboxSetting); err == nil && ok {
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

// compute gathers the items, newest first.
func (i *Inbox) compute(ctx context.Context) (Snapshot, error) {
	seq := i.computations.Add(1)
	now := time.Now()
	st := i.setAside(ctx)
	var items []Item
	titles := map[string]string{}
	threadTitle := func(id string) string {
		if t, ok := titles[id]; ok {
			return t
		}
		t, err := i.rt.GetThread(ctx, id)
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

	notes, err := i.rt.Notifications(ctx, agentcore.NotificationQuery{Statuses: unread, Limit: inboxMax + 1})
	if err != nil && !errors.Is(err, agentcore.ErrNoNotifications) {
		return Snapshot{}, fmt.Errorf("list notifications: %w", err)
	}
	older := len(notes) > inboxMax
	notes = notes[:min(len(notes), inboxMax)]
	sources := map[string]bool{}
	for _, n := range notes {
		if n.SnoozedUntil != nil && now.Before(*n.SnoozedUntil) {
			continue
		}
		sources[n.Source] = true
		items = append(items, Item{
			Key: "n/" + n.ThreadID + "/" + n.ID, Kind: KindNotification, ThreadID: n.ThreadID, ThreadTitle: threadTitle(n.ThreadID), At: n.UpdatedAt,
			Notification: &Notification{ID: n.ID, Summary: n.Summary, Source: n.Source, Kind: n.Kind, Priority: n.Priority,
				Status: n.Status, Count: n.CoalescedCount, Link: noteLink(n)},
		})
	}

	runs, err := i.rt.ListRuns(ctx, agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended, agentcore.RunFailed}, Limit: inboxMax})
	if err != nil {
		return Snapshot{}, fmt.Errorf("list runs: %w", err)
	}
	pendingDone := map[string]bool{}
	for _, run := range runs {
		at := cmp.Or(run.FinishedAt, run.StartedAt)
		switch run.Status {
		case agentcore.RunFailed:
			key := "run/" + run.ThreadID + "/" + run.ID
			if hidden(key) || now.Sub(run.StartedAt) > failedWindow || i.superseded(ctx, run) {
				continue
			}
			items = append(items, Item{Key: key, Kind: KindFailed, ThreadID: run.ThreadID, ThreadTitle: threadTitle(run.ThreadID), At: at,
				Failed: &FailedRun{RunID: run.ID, Error: run.Error, Model: run.Model}})
		case agentcore.RunSuspended:
			if pendingDone[run.ThreadID] {
				continue
			}
			pendingDone[run.ThreadID] = true
			if _, live := i.rt.Live(run.ThreadID); live {
				continue // answered a moment ago: the run goes on
			}
			calls, err := i.rt.Pending(ctx, run.ThreadID)
			if err != nil {
				continue
			}
			for _, ti := range calls {
				key := "call/" + run.ThreadID + "/" + ti.ToolCallID
				if hidden(key) {
					continue
				}
				it := Item{Key: key, ThreadID: run.ThreadID, ThreadTitle: threadTitle(run.ThreadID), CallID: ti.ToolCallID, At: at}
				switch {
				case ti.Approval:
					it.Kind, it.Approval = KindApproval, &Approval{Call: ti}
				case ti.ToolName == "submit_plan":
					p, _ := PlanOf(&ti)
					it.Kind, it.Plan = KindPlan, &p
				default:
					q, ok := QuestionOf(&ti)
					if !ok {
						continue
					}
					it.Kind, it.Question = KindQuestion, &q
				}
				items = append(items, it)
			}
		}
	}
	slices.SortStableFunc(items, func(a, b Item) int { return b.At.Compare(a.At) })
	s := Snapshot{Seq: seq, Items: items, OlderNotes: older}
	for src := range sources {
		s.Sources = append(s.Sources, src)
	}
	slices.Sort(s.Sources)
	return s, nil
}

// superseded: a later reply on the thread (a retry, or the answer to a new
// message; finished, failed or still being written) makes the failure
// history, not something that needs the user.
func (i *Inbox) superseded(ctx context.Context, failed agentcore.Run) bool {
	msgs, err := i.rt.ListMessages(ctx, failed.ThreadID, agentcore.MessageQuery{Limit: 1, Last: true})
	if err != nil || len(msgs) == 0 {
		return false
	}
	last := msgs[0]
	return last.Role == agentcore.RoleAssistant && last.RunID != "" && last.RunID != failed.ID
}

// QuestionOf is the question a suspended (or answered) call asked, when its
// payload has one: ask_user's {question, options, selectionMode}.
func QuestionOf(ti *agentcore.ToolInvocation) (Question, bool) {
	if len(ti.SuspendPayload) == 0 {
		return Question{}, false
	}
	var p struct {
		Question string `json:"question"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
		SelectionMode string `json:"selectionMode"`
	}
	if err := json.Unmarshal(ti.SuspendPayload, &p); err != nil || p.Question == "" {
		return Question{}, false
	}
	q := Question{Text: p.Question, Multi: p.SelectionMode == "multi_select"}
	for _, o := range p.Options {
		q.Options = append(q.Options, Option{Label: o.Label, Description: o.Description})
	}
	return q, true
}

// PlanOf is the title and path of the plan a submit_plan call submitted,
// when its payload is readable (not while it is being written).
func PlanOf(ti *agentcore.ToolInvocation) (Plan, bool) {
	var p struct {
		Path  string `json:"path"`
		Title string `json:"title"`
	}
	if len(ti.SuspendPayload) == 0 || json.Unmarshal(ti.SuspendPayload, &p) != nil {
		return Plan{}, false
	}
	return Plan{Title: p.Title, Path: p.Path}, true
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

// Act sets an item aside: a notification marked seen, archived or
// dismissed; anything snoozed ("not now" — it still waits, nothing is
// denied) or dismissed from the inbox. Errors a caller can fix wrap
// ErrBadInboxAction.
func (i *Inbox) Act(ctx context.Context, key, action string) error {
	if err := i.act(ctx, key, action); err != nil {
		return err
	}
	i.changed()
	return nil
}

func (i *Inbox) act(ctx context.Context, key, action string) error {
	kind, rest, _ := strings.Cut(key, "/")
	threadID, id, ok := strings.Cut(rest, "/")
	if !ok || threadID == "" || id == "" || (kind != "n" && kind != "call" && kind != "run") {
		return fmt.Errorf("%w: unknown inbox item %q", ErrBadInboxAction, key)
	}
	if kind == "n" {
		var err error
		switch action {
		case "seen":
			_, err = i.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteSeen)
		case "archive":
			_, err = i.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteArchived)
		case "dismiss":
			_, err = i.rt.SetNotificationStatus(ctx, threadID, id, agentcore.NoteDismissed)
		case "snooze":
			_, err = i.rt.SnoozeNotification(ctx, threadID, id, time.Now().Add(snoozeFor))
		default:
			return fmt.Errorf("%w: a notification can be marked seen, archived, dismissed or snoozed, not %q", ErrBadInboxAction, action)
		}
		return err
	}
	i.stateMu.Lock()
	defer i.stateMu.Unlock()
	st := i.setAside(ctx)
	switch action {
	case "snooze":
		st.Snoozed[key] = time.Now().Add(snoozeFor)
	case "dismiss":
		st.Dismissed[key] = true
	default:
		return fmt.Errorf("%w: this item can be snoozed or dismissed, not %q", ErrBadInboxAction, action)
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
	if err := i.rt.SetSetting(ctx, inboxSetting, raw); err != nil {
		return fmt.Errorf("set inbox item %s aside: %w", key, err)
	}
	return nil
}

// SeenAll marks seen every unread notification of the source and priority
// given (empty: any), those past the newest inboxMax included; the snoozed
// ones stay, as they are not on the list the user cleared.
func (i *Inbox) SeenAll(ctx context.Context, source, priority string) error {
	q := agentcore.NotificationQuery{Statuses: unread}
	if source != "" {
		q.Sources = []string{source}
	}
	if priority != "" {
		p, err := agentcore.ParsePriority(priority)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadInboxAction, err)
		}
		q.Priorities = []agentcore.Priority{p}
	}
	defer i.changed()
	notes, err := i.rt.Notifications(ctx, q)
	if err != nil && !errors.Is(err, agentcore.ErrNoNotifications) {
		return err
	}
	for _, n := range notes {
		if n.SnoozedUntil != nil && time.Now().Before(*n.SnoozedUntil) {
			continue
		}
		if _, err := i.rt.SetNotificationStatus(ctx, n.ThreadID, n.ID, agentcore.NoteSeen); err != nil && !errors.Is(err, agentcore.ErrNotFound) {
			return err
		}
	}
	return nil
}
