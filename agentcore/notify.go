package agentcore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Notification delivery actions (spec §4.5).
const (
	NotifyDeliver   = "deliver"   // the full notification, now
	NotifyQueue     = "queue"     // the full notification once the thread is idle
	NotifyDefer     = "defer"     // later, at DeliverAt / SummaryAt
	NotifySummarize = "summarize" // a one-line summary at SummaryAt
	NotifyPersist   = "persist"   // keep it in the inbox only
	NotifyDiscard   = "discard"   // drop it
)

// MaxNotificationPayload bounds a notification's payload.
const MaxNotificationPayload = 256 << 10

// NotificationInput is a notification from a source: a CI job, a cron
// script, a webhook relay.
type NotificationInput struct {
	Source      string          `json:"source"`
	Kind        string          `json:"kind"`
	Summary     string          `json:"summary"`
	Priority    Priority        `json:"priority,omitempty"` // "" = medium (or, coalescing, the record's)
	Payload     json.RawMessage `json:"payload,omitempty"`
	SourceID    string          `json:"sourceId,omitempty"`
	DedupeKey   string          `json:"dedupeKey,omitempty"`
	CoalesceKey string          `json:"coalesceKey,omitempty"`
	Attributes  Attrs           `json:"attributes,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
}

// Check reports what is wrong with in, naming the field.
func (in NotificationInput) Check() error {
	switch {
	case strings.TrimSpace(in.Source) == "":
		return errors.New("notification source is required")
	case strings.TrimSpace(in.Kind) == "":
		return errors.New("notification kind is required")
	case strings.TrimSpace(in.Summary) == "":
		return errors.New("notification summary is required")
	case len(in.Payload) > MaxNotificationPayload:
		return fmt.Errorf("notification payload is %d bytes, more than the %d (256 KiB) allowed", len(in.Payload), MaxNotificationPayload)
	case len(in.Payload) > 0 && !json.Valid(in.Payload):
		return errors.New("notification payload is not valid JSON")
	}
	if in.Priority != "" {
		if _, err := ParsePriority(string(in.Priority)); err != nil {
			return err
		}
	}
	for _, a := range in.Attributes {
		if !xmlName.MatchString(a.Name) {
			return fmt.Errorf("Invalid signal XML attribute name: %s", a.Name)
		}
	}
	return nil
}

// Decision is what happens to a notification.
type Decision struct {
	Action    string     `json:"action"`
	DeliverAt *time.Time `json:"deliverAt,omitempty"`
	SummaryAt *time.Time `json:"summaryAt,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Model     string     `json:"model,omitempty"` // the model of a run it wakes
}

// DecisionInput is what a delivery policy decides on.
type DecisionInput struct {
	Notification Notification
	Active       bool // the thread has a run in progress
	Now          time.Time
}

// DeliveryPolicy overrides the default delivery of notifications; the first
// that answers wins: Decide, then Sources, then Priorities, then Default,
// then the built-in table.
type DeliveryPolicy struct {
	Decide     func(DecisionInput) (Decision, bool)
	Sources    map[string]Decision
	Priorities map[Priority]Decision
	Default    *Decision
}

// decide resolves the decision for in.
func (p *DeliveryPolicy) decide(in DecisionInput) Decision {
	if p != nil {
		if p.Decide != nil {
			if d, ok := p.Decide(in); ok {
				return d
			}
		}
		if d, ok := p.Sources[in.Notification.Source]; ok {
			return d
		}
		if d, ok := p.Priorities[in.Notification.Priority]; ok {
			return d
		}
		if p.Default != nil {
			return *p.Default
		}
	}
	return defaultDecision(in)
}

// defaultDecision is the built-in table: urgent now; high now when idle,
// else a summary now and the whole at idle; medium now when idle, else in
// the batch summary; low only ever summarised, never waking the thread.
func defaultDecision(in DecisionInput) Decision {
	now := in.Now
	switch p := in.Notification.Priority; {
	case p == PriorityUrgent:
		return Decision{Action: NotifyDeliver, Reason: "urgent"}
	case p == PriorityHigh && in.Active:
		return Decision{Action: NotifySummarize, SummaryAt: &now, DeliverAt: &now, Reason: "active-high-summary-then-full"}
	case p == PriorityHigh:
		return Decision{Action: NotifyDeliver, Reason: "idle-high"}
	case p == PriorityLow && !in.Active:
		return Decision{Action: NotifySummarize, SummaryAt: &now, Reason: "idle-low-summary"}
	case in.Active:
		return Decision{Action: NotifySummarize, SummaryAt: &now, Reason: "active-batch-summary"}
	}
	return Decision{Action: NotifyDeliver, Reason: "idle-medium"}
}

// NotifyTarget is the thread a notification is for.
type NotifyTarget struct {
	ResourceID string
	ThreadID   string
	AgentID    string // "" = the default agent
}

// NotifyResult is what Notify did.
type NotifyResult struct {
	Record   Notification `json:"record"`
	Decision Decision     `json:"decision"`
	Signal   *Signal      `json:"signal,omitempty"`
	Accepted *Accepted    `json:"accepted,omitempty"`
}

// ErrNoNotifications: the store keeps no notifications.
var ErrNoNotifications = errors.New("this store keeps no notifications")

func (rt *Runtime) notes() (NotificationStore, error) {
	ns, ok := rt.store.(NotificationStore)
	if !ok {
		return nil, ErrNoNotifications
	}
	return ns, nil
}

// Notify files a notification in its thread's inbox (merging it into a
// pending duplicate by dedupeKey or coalesceKey) and delivers it as the
// agent's delivery policy decides (Mastra's sendNotificationSignal).
func (rt *Runtime) Notify(ctx context.Context, in NotificationInput, to NotifyTarget) (NotifyResult, error) {
	if err := in.Check(); err != nil {
		return NotifyResult{}, err
	}
	ns, err := rt.notes()
	if err != nil {
		return NotifyResult{}, err
	}
	if to.ThreadID == "" {
		return NotifyResult{}, errors.New("notification threadId is required")
	}
	thread, err := rt.store.GetThread(ctx, to.ThreadID)
	if err != nil {
		return NotifyResult{}, fmt.Errorf("notify thread %s: %w", to.ThreadID, err)
	}
	if to.ResourceID != "" && to.ResourceID != thread.ResourceID {
		return NotifyResult{}, fmt.Errorf("notify thread %s: it belongs to another resource than %s: %w", thread.ID, to.ResourceID, ErrNotFound)
	}
	agent, err := rt.Agent(to.AgentID)
	if err != nil {
		return NotifyResult{}, err
	}
	lane := rt.noteLane(thread.ID)
	lane.Lock()
	defer lane.Unlock()

	now := time.Now().UTC()
	n := Notification{
		ThreadID: thread.ID, Source: in.Source, Kind: in.Kind, Priority: cmp.Or(in.Priority, PriorityMedium),
		Status: NotePending, Summary: in.Summary, Payload: in.Payload, ResourceID: thread.ResourceID,
		AgentID: agent.ID, SourceID: in.SourceID, DedupeKey: in.DedupeKey, CoalesceKey: in.CoalesceKey,
		CoalescedCount: 1, Attributes: in.Attributes, Metadata: in.Metadata, CreatedAt: now, UpdatedAt: now,
	}
	merged := false
	if n.DedupeKey != "" || n.CoalesceKey != "" {
		old, ok, err := ns.FindCoalescable(ctx, n)
		if err != nil {
			return NotifyResult{}, fmt.Errorf("notify thread %s: %w", thread.ID, err)
		}
		if ok {
			old.Summary = in.Summary
			if len(in.Payload) > 0 {
				old.Payload = in.Payload
			}
			if in.Priority != "" {
				old.Priority = in.Priority
			}
			old.Attributes = old.Attributes.Merge(in.Attributes)
			for k, v := range in.Metadata {
				if old.Metadata == nil {
					old.Metadata = map[string]any{}
				}
				old.Metadata[k] = v
			}
			old.CoalescedCount++
			old.UpdatedAt = now
			n, merged = old, true
		}
	}
	dec := agent.DeliveryPolicy.decide(DecisionInput{Notification: n, Active: rt.liveRun(thread.ID) != nil, Now: now})
	n.DeliveryReason = cmp.Or(dec.Reason, n.DeliveryReason)
	switch dec.Action {
	case NotifyDeliver, NotifyPersist:
	case NotifyQueue:
		n.DeliverAt = &now
	case NotifySummarize:
		n.SummaryAt = cmp.Or(dec.SummaryAt, &now)
		if dec.DeliverAt != nil {
			n.DeliverAt = dec.DeliverAt
		}
	case NotifyDefer:
		if dec.DeliverAt == nil && dec.SummaryAt == nil {
			return NotifyResult{}, errors.New("a defer decision needs deliverAt or summaryAt")
		}
		n.DeliverAt, n.SummaryAt = dec.DeliverAt, dec.SummaryAt
	case NotifyDiscard:
		n.stamp(NoteDiscarded, now)
	default:
		return NotifyResult{}, fmt.Errorf("invalid notification decision %q", dec.Action)
	}
	if merged {
		err = ns.SaveNotification(ctx, n)
	} else {
		n, err = ns.CreateNotification(ctx, n)
	}
	if err != nil {
		return NotifyResult{}, fmt.Errorf("store notification: %w", err)
	}
	res := NotifyResult{Record: n, Decision: dec}
	if dec.Action == NotifyDeliver {
		sig, acc, err := rt.deliverNote(ctx, ns, &n, dec.Model)
		res.Record = n
		if err == nil {
			res.Signal, res.Accepted = &sig, &acc
		}
	}
	// The record rides along: a desktop shell alerts on urgent ones.
	raw, _ := json.Marshal(res.Record)
	rt.bus.Publish(Event{Type: EventNotification, ThreadID: thread.ID, Result: raw})
	rt.kickNotes()
	return res, nil
}

// noteLane orders the inbox changes of one thread (a separate lock from
// the signal lane: delivering a notification sends a signal).
func (rt *Runtime) noteLane(threadID string) *sync.Mutex {
	return rt.lane("notes\x00" + threadID)
}

// noteChanged tells the thread and every inbox that notifications changed.
func (rt *Runtime) noteChanged(threadID string) {
	rt.bus.Publish(Event{Type: EventNotification, ThreadID: threadID})
}

// noteSignal is the full notification as the model reads it.
func noteSignal(n Notification) Signal {
	attrs := n.Attributes.Merge(Attrs{
		{"id", n.ID}, {"source", n.Source}, {"type", n.Kind}, {"kind", n.Kind},
		{"priority", string(n.Priority)}, {"status", string(NoteDelivered)},
	})
	if n.CoalescedCount > 1 {
		attrs = attrs.Merge(Attrs{{"coalescedCount", float64(n.CoalescedCount)}})
	}
	meta := map[string]any{}
	for k, v := range n.Metadata {
		meta[k] = v
	}
	note := map[string]any{"signal": "notification", "recordId": n.ID, "source": n.Source, "kind": n.Kind,
		"priority": string(n.Priority), "status": string(NoteDelivered)}
	if n.CoalescedCount > 1 {
		note["coalescedCount"] = n.CoalescedCount
	}
	meta["notification"] = note
	return Signal{Type: SignalNotification, TagName: "notification", Contents: n.Summary, Attributes: attrs, Metadata: meta}
}

// deliverNote sends the full notification into its thread (delivered to a
// running loop, else waking one) and records the outcome on n.
func (rt *Runtime) deliverNote(ctx context.Context, ns NotificationStore, n *Notification, model string) (Signal, Accepted, error) {
	acc, sig, err := rt.SendSignal(ctx, noteSignal(*n), SignalTarget{
		ResourceID: n.ResourceID, ThreadID: n.ThreadID, AgentID: n.AgentID, IfIdle: IfIdle{Model: model},
	})
	now := time.Now().UTC()
	if err != nil {
		rt.noteFailed(ctx, ns, n, err, now)
		return Signal{}, Accepted{}, err
	}
	n.stamp(NoteDelivered, now)
	n.DeliveredSignalID, n.DeliverAt = sig.ID, nil
	if err := ns.SaveNotification(ctx, *n); err != nil {
		rt.Log.Error("record notification delivery", "notification", n.ID, "err", err)
	}
	return sig, acc, nil
}

// noteFailed counts a failed delivery; the fifth fails the record.
func (rt *Runtime) noteFailed(ctx context.Context, ns NotificationStore, n *Notification, cause error, now time.Time) {
	n.DeliveryAttempts++
	n.LastDeliveryAttemptAt, n.LastDeliveryError, n.UpdatedAt = &now, cause.Error(), now
	if n.DeliveryAttempts >= MaxDeliveryAttempts {
		n.Status = NoteFailed
	}
	rt.Log.Warn("notification delivery failed", "notification", n.ID, "thread", n.ThreadID, "attempt", n.DeliveryAttempts, "err", cause)
	if err := ns.SaveNotification(ctx, *n); err != nil {
		rt.Log.Error("record failed notification delivery", "notification", n.ID, "err", err)
	}
}

// summarySignal sums up a thread's pending notifications: "<source>: <n>, …".
func summarySignal(pending []Notification) Signal {
	bySource := map[string]int{}
	byPriority := map[string]int{}
	var ids []string
	top := PriorityLow
	for _, n := range pending {
		bySource[n.Source]++
		byPriority[string(n.Priority)]++
		ids = append(ids, n.ID)
		if n.Priority.rank() < top.rank() {
			top = n.Priority
		}
	}
	sources := make([]string, 0, len(bySource))
	for s := range bySource {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var parts []string
	var groups []map[string]any
	for _, s := range sources {
		parts = append(parts, fmt.Sprintf("%s: %d", s, bySource[s]))
		groups = append(groups, map[string]any{"source": s, "count": bySource[s]})
	}
	contents := strings.Join(parts, ", ")
	if len(pending) == 0 {
		contents = "No pending notifications"
	}
	attrs := Attrs{{"pending", float64(len(pending))}}
	note := map[string]any{"signal": "summary", "pending": len(pending), "groups": groups, "byPriority": byPriority, "notificationIds": ids}
	if len(pending) > 0 {
		attrs = append(attrs, Attr{"priority", string(top)})
		note["priority"] = string(top)
	}
	return Signal{Type: SignalNotification, TagName: "notification-summary", Contents: contents, Attributes: attrs,
		Metadata: map[string]any{"notification": note, "notificationSummary": contents, "notificationIds": ids}}
}

// StartNotifications starts delivering notifications when they fall due
// (deliverAt/summaryAt, kept in the store, so a restart loses none) and
// when a thread falls idle. Close stops it.
func (rt *Runtime) StartNotifications() {
	if _, err := rt.notes(); err != nil {
		return
	}
	rt.mu.Lock()
	if rt.kick != nil {
		rt.mu.Unlock()
		return
	}
	rt.kick = make(chan struct{}, 1)
	rt.stopNotes = make(chan struct{})
	rt.notesDone = make(chan struct{})
	stop, done, kick := rt.stopNotes, rt.notesDone, rt.kick
	rt.mu.Unlock()
	go rt.dispatchLoop(stop, done, kick)
	rt.kickNotes()
}

// kickNotes asks the dispatcher to look for due notifications now.
func (rt *Runtime) kickNotes() {
	rt.mu.Lock()
	k := rt.kick
	rt.mu.Unlock()
	if k == nil {
		return
	}
	select {
	case k <- struct{}{}:
	default:
	}
}

// noteIdle bounds the dispatcher's sleep when nothing is scheduled.
const noteIdle = time.Minute

func (rt *Runtime) dispatchLoop(stop <-chan struct{}, done chan<- struct{}, kick <-chan struct{}) {
	defer close(done)
	ns, _ := rt.notes()
	timer := time.NewTimer(noteIdle)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-kick:
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := rt.DispatchDue(ctx, time.Now().UTC()); err != nil {
			rt.Log.Error("deliver due notifications", "err", err)
		}
		wait := noteIdle
		if at, ok, err := ns.NextDue(ctx); err == nil && ok {
			wait = min(max(time.Until(at), 10*time.Millisecond), noteIdle)
		}
		cancel()
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// DispatchDue delivers the notifications due at now (Mastra's
// dispatchDueNotifications): per thread, summaries first, then each full
// notification by priority; a high one already summarised waits while its
// thread is busy.
func (rt *Runtime) DispatchDue(ctx context.Context, now time.Time) error {
	ns, err := rt.notes()
	if err != nil {
		return err
	}
	due, err := ns.DueNotifications(ctx, now, 100)
	if err != nil {
		return err
	}
	byThread := map[string][]Notification{}
	var order []string
	for _, n := range due {
		if _, ok := byThread[n.ThreadID]; !ok {
			order = append(order, n.ThreadID)
		}
		byThread[n.ThreadID] = append(byThread[n.ThreadID], n)
	}
	for _, threadID := range order {
		rt.dispatchThread(ctx, ns, threadID, byThread[threadID], now)
	}
	return nil
}

func (rt *Runtime) dispatchThread(ctx context.Context, ns NotificationStore, threadID string, due []Notification, now time.Time) {
	lane := rt.noteLane(threadID)
	lane.Lock()
	defer lane.Unlock()
	defer rt.noteChanged(threadID)
	active := rt.liveRun(threadID) != nil
	slices.SortStableFunc(due, func(a, b Notification) int {
		return cmp.Or(cmp.Compare(a.Priority.rank(), b.Priority.rank()), a.CreatedAt.Compare(b.CreatedAt))
	})

	var summarise []Notification
	for _, n := range due {
		if n.SummaryAt != nil && !n.SummaryAt.After(now) {
			summarise = append(summarise, n)
		}
	}
	summarised := map[string]string{}
	if len(summarise) > 0 {
		rt.sendSummary(ctx, ns, threadID, summarise, summarised)
	}
	for _, n := range due {
		if n.DeliverAt == nil || n.DeliverAt.After(now) {
			continue
		}
		fresh, err := ns.GetNotification(ctx, n.ThreadID, n.ID)
		if err != nil || fresh.Status != NotePending || fresh.DeliveredSignalID != "" {
			continue
		}
		if active && (fresh.SummarySignalID != "" || fresh.DeliveryReason == NotifyQueue) {
			continue // the full one goes when the thread falls idle
		}
		if fresh.AgentID == "" || fresh.ResourceID == "" {
			missing := "agentId"
			if fresh.AgentID != "" {
				missing = "resourceId"
			}
			rt.noteFailed(ctx, ns, &fresh, fmt.Errorf("Notification %s is missing %s", fresh.ID, missing), now)
			continue
		}
		_, _, _ = rt.deliverNote(ctx, ns, &fresh, "")
	}
}

// sendSummary sends one summary of the thread's pending notifications for
// the records due for one. A summary of low ones only is kept in the
// thread without waking it.
func (rt *Runtime) sendSummary(ctx context.Context, ns NotificationStore, threadID string, due []Notification, sent map[string]string) {
	allLow := true
	for _, n := range due {
		if n.Priority != PriorityLow {
			allLow = false
		}
	}
	// Only the records due now, as Mastra's sendNotificationSummary: one
	// summarised before and still pending is not summarised again.
	sig := summarySignal(due)
	to := SignalTarget{ThreadID: threadID, AgentID: due[0].AgentID}
	if allLow {
		to.IfIdle.Behavior = Persist
	}
	now := time.Now().UTC()
	_, sig, err := rt.SendSignal(ctx, sig, to)
	for _, n := range due {
		n := n
		if err != nil {
			rt.noteFailed(ctx, ns, &n, err, now)
			continue
		}
		n.SummaryAt, n.SummarySignalID, n.UpdatedAt = nil, sig.ID, now
		if err := ns.SaveNotification(ctx, n); err != nil {
			rt.Log.Error("record notification summary", "notification", n.ID, "err", err)
		}
		sent[n.ID] = sig.ID
	}
}

// Notifications lists inbox records.
func (rt *Runtime) Notifications(ctx context.Context, q NotificationQuery) ([]Notification, error) {
	ns, err := rt.notes()
	if err != nil {
		return nil, err
	}
	return ns.ListNotifications(ctx, q)
}

// SetNotificationStatus marks a record seen, dismissed or archived.
func (rt *Runtime) SetNotificationStatus(ctx context.Context, threadID, id string, s NotificationStatus) (Notification, error) {
	switch s {
	case NoteSeen, NoteDismissed, NoteArchived:
	default:
		return Notification{}, fmt.Errorf("a notification can be marked seen, dismissed or archived, not %q", s)
	}
	return rt.updateNote(ctx, threadID, id, func(n *Notification) {
		n.stamp(s, time.Now().UTC())
		n.DeliverAt, n.SummaryAt = nil, nil // dealt with: nothing more to deliver
	})
}

// updateNote changes one record under its thread's inbox lock.
func (rt *Runtime) updateNote(ctx context.Context, threadID, id string, change func(*Notification)) (Notification, error) {
	ns, err := rt.notes()
	if err != nil {
		return Notification{}, err
	}
	lane := rt.noteLane(threadID)
	lane.Lock()
	defer lane.Unlock()
	n, err := ns.GetNotification(ctx, threadID, id)
	if err != nil {
		return Notification{}, err
	}
	change(&n)
	if err := ns.SaveNotification(ctx, n); err != nil {
		return Notification{}, err
	}
	rt.noteChanged(threadID)
	return n, nil
}

// SnoozeNotification hides a record from the inbox until then; its
// delivery is untouched ("not now" never means no).
func (rt *Runtime) SnoozeNotification(ctx context.Context, threadID, id string, until time.Time) (Notification, error) {
	return rt.updateNote(ctx, threadID, id, func(n *Notification) {
		u := until.UTC()
		n.SnoozedUntil, n.UpdatedAt = &u, time.Now().UTC()
	})
}

// ReadResult is what reading notifications did (the inbox tool's read).
type ReadResult struct {
	Message     string   `json:"message"`
	Delivered   []string `json:"delivered"`
	MarkedSeen  []string `json:"markedSeen"`
	Unavailable []string `json:"unavailable"`
	AlreadyRead []string `json:"alreadyRead"`
}

// ReadNotifications delivers the full text of unread notifications into
// the thread and marks them seen: the one id, or every pending and
// delivered one.
func (rt *Runtime) ReadNotifications(ctx context.Context, threadID, id string) (ReadResult, error) {
	ns, err := rt.notes()
	if err != nil {
		return ReadResult{}, err
	}
	var list []Notification
	if id != "" {
		n, err := ns.GetNotification(ctx, threadID, id)
		if err != nil {
			return ReadResult{}, err
		}
		list = []Notification{n}
	} else if list, err = ns.ListNotifications(ctx, NotificationQuery{ThreadID: threadID, Statuses: []NotificationStatus{NotePending, NoteDelivered}}); err != nil {
		return ReadResult{}, err
	}
	res := ReadResult{Delivered: []string{}, MarkedSeen: []string{}, Unavailable: []string{}, AlreadyRead: []string{}}
	lane := rt.noteLane(threadID)
	lane.Lock()
	defer lane.Unlock()
	for _, n := range list {
		switch {
		case n.Status != NotePending && n.Status != NoteDelivered:
			res.AlreadyRead = append(res.AlreadyRead, n.ID)
			continue
		case n.DeliveredSignalID == "" && (n.AgentID == "" || n.ResourceID == ""):
			res.Unavailable = append(res.Unavailable, n.ID)
			continue
		case n.DeliveredSignalID == "":
			_, sig, err := rt.SendSignal(ctx, noteSignal(n), SignalTarget{ThreadID: threadID, AgentID: n.AgentID, IfIdle: IfIdle{Behavior: Persist}})
			if err != nil {
				res.Unavailable = append(res.Unavailable, n.ID)
				continue
			}
			n.DeliveredSignalID = sig.ID
			res.Delivered = append(res.Delivered, n.ID)
		}
		now := time.Now().UTC()
		if n.DeliveredAt == nil {
			n.DeliveredAt = &now
		}
		n.stamp(NoteSeen, now)
		n.DeliverAt, n.SummaryAt = nil, nil
		if err := ns.SaveNotification(ctx, n); err != nil {
			return res, err
		}
		res.MarkedSeen = append(res.MarkedSeen, n.ID)
	}
	res.Message = "No unread notifications needed delivery."
	if len(res.Delivered) > 0 {
		res.Message = fmt.Sprintf("%d notification(s) will now be delivered.", len(res.Delivered))
	}
	rt.noteChanged(threadID)
	return res, nil
}
