package agentcore_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
)

// noteRuntime is a runtime over the SQLite file path with the scripted model.
func noteRuntime(t *testing.T, path string, srv *scripted.Server, policy *agentcore.DeliveryPolicy) (*agentcore.Runtime, *storage.DB) {
	t.Helper()
	db, err := storage.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{
		BaseURLs: map[string]string{"openai-compatible": srv.URL()},
		APIKeys:  map[string]string{"openai-compatible": "k"},
		Getenv:   func(string) string { return "" }, MaxRetries: -1,
	}
	agent := &agentcore.Agent{
		ID: "a", Name: "A", Instructions: agentcore.Text("Be brief."), Model: "openai-compatible/test",
		Models:         func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
		DeliveryPolicy: policy,
	}
	rt := agentcore.NewRuntime(db, nil, agent)
	return rt, db
}

func newNoteRuntime(t *testing.T, policy *agentcore.DeliveryPolicy) (*agentcore.Runtime, *scripted.Server) {
	t.Helper()
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	srv.SetDefault(func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "noted"} })
	rt, db := noteRuntime(t, filepath.Join(t.TempDir(), "p.db"), srv, policy)
	t.Cleanup(func() { rt.Close(); db.Close() })
	return rt, srv
}

func note(p agentcore.Priority, summary string) agentcore.NotificationInput {
	return agentcore.NotificationInput{Source: "github", Kind: "ci-status", Summary: summary, Priority: p}
}

// busy starts a run whose model holds after its first words until the
// returned func lets it finish (and waits for the thread to fall idle).
func busy(t *testing.T, rt *agentcore.Runtime, srv *scripted.Server, threadID string) (release func()) {
	t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	let := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(let)
	srv.Push(scripted.Reply{Text: strings.Repeat("word ", 10), OnChunk: func(i int, _ string, _ time.Time) {
		if i == 0 {
			close(started)
			<-gate
		}
	}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: threadID, Text: "work"}); err != nil {
		t.Fatal(err)
	}
	<-started
	return func() { let(); waitIdle(t, rt, threadID) }
}

func modelSaw(srv *scripted.Server, substr string) bool {
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, substr) {
				return true
			}
		}
	}
	return false
}

func get(t *testing.T, rt *agentcore.Runtime, threadID, id string) agentcore.Notification {
	t.Helper()
	list, err := rt.Notifications(t.Context(), agentcore.NotificationQuery{ThreadID: threadID})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("notification %s not listed", id)
	return agentcore.Notification{}
}

func TestNotifyIdlePriorities(t *testing.T) {
	cases := []struct {
		p                agentcore.Priority
		action, reason   string
		wakes            bool
		status           agentcore.NotificationStatus
		modelSawFullText bool
	}{
		{agentcore.PriorityUrgent, "deliver", "urgent", true, agentcore.NoteDelivered, true},
		{agentcore.PriorityHigh, "deliver", "idle-high", true, agentcore.NoteDelivered, true},
		{agentcore.PriorityMedium, "deliver", "idle-medium", true, agentcore.NoteDelivered, true},
		{agentcore.PriorityLow, "summarize", "idle-low-summary", false, agentcore.NotePending, false},
	}
	for _, c := range cases {
		t.Run(string(c.p), func(t *testing.T) {
			rt, srv := newNoteRuntime(t, nil)
			rt.StartNotifications()
			th := thread(t, rt)
			res, err := rt.Notify(t.Context(), note(c.p, "build 42 failed"), agentcore.NotifyTarget{ThreadID: th.ID})
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Action != c.action || res.Decision.Reason != c.reason {
				t.Fatalf("decision %+v", res.Decision)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				waitIdle(t, rt, th.ID)
				n := get(t, rt, th.ID, res.Record.ID)
				if n.Status == c.status && (c.wakes || n.SummarySignalID != "") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("record %+v", n)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if woke := len(srv.Requests()) > 0; woke != c.wakes {
				t.Fatalf("woke the thread: %v, want %v", woke, c.wakes)
			}
			if c.modelSawFullText && !modelSaw(srv, `<notification id="`+res.Record.ID+`" source="github" type="ci-status" kind="ci-status" priority="`+string(c.p)+`" status="delivered">build 42 failed</notification>`) {
				t.Fatalf("the model did not read the notification: %+v", srv.Requests())
			}
			if c.p == agentcore.PriorityLow {
				msgs := messages(t, rt, th.ID)
				if len(msgs) != 1 || msgs[0].Type != "notification-summary" || msgs[0].Content.Text() != "github: 1" {
					t.Fatalf("low summary: %s %q", shape(msgs), msgs[0].Content.Text())
				}
			}
		})
	}
}

func TestNotifyActivePriorities(t *testing.T) {
	t.Run("urgent is delivered into the running loop", func(t *testing.T) {
		rt, srv := newNoteRuntime(t, nil)
		rt.StartNotifications()
		th := thread(t, rt)
		done := busy(t, rt, srv, th.ID)
		res, err := rt.Notify(t.Context(), note(agentcore.PriorityUrgent, "prod is down"), agentcore.NotifyTarget{ThreadID: th.ID})
		if err != nil || res.Accepted == nil || res.Accepted.Action != agentcore.Deliver {
			t.Fatalf("%+v %v", res, err)
		}
		done()
		if !modelSaw(srv, ">prod is down</notification>") || len(srv.Requests()) != 2 {
			t.Fatalf("%d requests", len(srv.Requests()))
		}
	})
	t.Run("high: a summary now, the whole once idle", func(t *testing.T) {
		rt, srv := newNoteRuntime(t, nil)
		rt.StartNotifications()
		th := thread(t, rt)
		done := busy(t, rt, srv, th.ID)
		res, err := rt.Notify(t.Context(), note(agentcore.PriorityHigh, "deploy needs a decision"), agentcore.NotifyTarget{ThreadID: th.ID})
		if err != nil || res.Decision.Reason != "active-high-summary-then-full" || res.Record.DeliverAt == nil || res.Record.SummaryAt == nil {
			t.Fatalf("%+v %v", res, err)
		}
		done()
		// Summary into the busy run; once it ended, the full one woke a run.
		deadline := time.Now().Add(5 * time.Second)
		for get(t, rt, th.ID, res.Record.ID).Status != agentcore.NoteDelivered {
			if time.Now().After(deadline) {
				t.Fatalf("never delivered: %+v", get(t, rt, th.ID, res.Record.ID))
			}
			time.Sleep(10 * time.Millisecond)
		}
		waitIdle(t, rt, th.ID)
		if !modelSaw(srv, `<notification-summary pending="1" priority="high">github: 1</notification-summary>`) {
			t.Fatal("no summary reached the busy run")
		}
		if !modelSaw(srv, ">deploy needs a decision</notification>") {
			t.Fatal("the full notification never reached a model")
		}
	})
	for _, p := range []agentcore.Priority{agentcore.PriorityMedium, agentcore.PriorityLow} {
		t.Run(string(p)+" is summarised in the batch", func(t *testing.T) {
			rt, srv := newNoteRuntime(t, nil)
			rt.StartNotifications()
			th := thread(t, rt)
			done := busy(t, rt, srv, th.ID)
			res, err := rt.Notify(t.Context(), note(p, "a review comment"), agentcore.NotifyTarget{ThreadID: th.ID})
			if err != nil || res.Decision.Reason != "active-batch-summary" {
				t.Fatalf("%+v %v", res, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for get(t, rt, th.ID, res.Record.ID).SummarySignalID == "" {
				if time.Now().After(deadline) {
					t.Fatal("no summary")
				}
				time.Sleep(10 * time.Millisecond)
			}
			done()
			n := get(t, rt, th.ID, res.Record.ID)
			if n.Status != agentcore.NotePending || n.SummaryAt != nil {
				t.Fatalf("after summary %+v", n)
			}
			if modelSaw(srv, ">a review comment<") {
				t.Fatal("the full text was delivered")
			}
		})
	}
}

func TestNotifyDedupeAndCoalesce(t *testing.T) {
	rt, _ := newNoteRuntime(t, &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}})
	th := thread(t, rt)
	to := agentcore.NotifyTarget{ThreadID: th.ID}
	a, err := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "build 1 failed", DedupeKey: "b1", Payload: json.RawMessage(`{"n":1}`), Attributes: agentcore.Attrs{{Name: "branch", Value: "main"}}}, to)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "build 1 failed again", DedupeKey: "b1", Priority: agentcore.PriorityHigh, Attributes: agentcore.Attrs{{Name: "attempt", Value: 2.0}}}, to)
	if err != nil {
		t.Fatal(err)
	}
	if b.Record.ID != a.Record.ID || b.Record.CoalescedCount != 2 || b.Record.Summary != "build 1 failed again" || b.Record.Priority != agentcore.PriorityHigh || string(b.Record.Payload) != `{"n":1}` {
		t.Fatalf("merged %+v", b.Record)
	}
	if v, _ := b.Record.Attributes.Get("branch"); v != "main" {
		t.Fatalf("attributes %+v", b.Record.Attributes)
	}
	// Another kind never merges; a coalesceKey merges related ones.
	c, _ := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "deploy", Summary: "deploy", DedupeKey: "b1"}, to)
	if c.Record.ID == a.Record.ID {
		t.Fatal("a different kind was merged")
	}
	d1, _ := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "gh", Kind: "comment", Summary: "1 comment", CoalesceKey: "pr-7"}, to)
	d2, _ := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "gh", Kind: "comment", Summary: "2 comments", CoalesceKey: "pr-7"}, to)
	if d1.Record.ID != d2.Record.ID || d2.Record.CoalescedCount != 2 {
		t.Fatalf("coalesce %+v", d2.Record)
	}
	// Once dealt with, a duplicate starts a new record.
	if _, err := rt.SetNotificationStatus(t.Context(), th.ID, a.Record.ID, agentcore.NoteDismissed); err != nil {
		t.Fatal(err)
	}
	e, _ := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "build 1 failed a third time", DedupeKey: "b1"}, to)
	if e.Record.ID == a.Record.ID || e.Record.CoalescedCount != 1 {
		t.Fatalf("a dismissed record was merged into: %+v", e.Record)
	}
	// The signal of a coalesced record says how many it holds.
	rt2, srv2 := newNoteRuntime(t, nil)
	th2 := thread(t, rt2)
	in := agentcore.NotificationInput{Source: "gh", Kind: "comment", Summary: "3 comments", CoalesceKey: "k", Priority: agentcore.PriorityLow}
	rt2.Notify(t.Context(), in, agentcore.NotifyTarget{ThreadID: th2.ID})
	in.Priority = agentcore.PriorityUrgent
	res, err := rt2.Notify(t.Context(), in, agentcore.NotifyTarget{ThreadID: th2.ID})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt2, th2.ID)
	if !modelSaw(srv2, `priority="urgent" status="delivered" coalescedCount="2">3 comments</notification>`) || res.Record.CoalescedCount != 2 {
		t.Fatalf("coalesced delivery: %+v", srv2.Requests())
	}
}

func TestNotifyPolicyPrecedence(t *testing.T) {
	persist := agentcore.Decision{Action: agentcore.NotifyPersist, Reason: "by-priority"}
	policy := &agentcore.DeliveryPolicy{
		Decide: func(in agentcore.DecisionInput) (agentcore.Decision, bool) {
			if in.Notification.Kind == "page" {
				return agentcore.Decision{Action: agentcore.NotifyDiscard, Reason: "by-decide"}, true
			}
			return agentcore.Decision{}, false
		},
		Sources:    map[string]agentcore.Decision{"cron": {Action: agentcore.NotifyPersist, Reason: "by-source"}},
		Priorities: map[agentcore.Priority]agentcore.Decision{agentcore.PriorityLow: persist},
		Default:    &agentcore.Decision{Action: agentcore.NotifyPersist, Reason: "by-default"},
	}
	rt, srv := newNoteRuntime(t, policy)
	th := thread(t, rt)
	for _, c := range []struct {
		in     agentcore.NotificationInput
		reason string
	}{
		{agentcore.NotificationInput{Source: "cron", Kind: "page", Summary: "x", Priority: agentcore.PriorityLow}, "by-decide"},
		{agentcore.NotificationInput{Source: "cron", Kind: "tick", Summary: "x", Priority: agentcore.PriorityLow}, "by-source"},
		{agentcore.NotificationInput{Source: "ci", Kind: "tick", Summary: "x", Priority: agentcore.PriorityLow}, "by-priority"},
		{agentcore.NotificationInput{Source: "ci", Kind: "tick", Summary: "x", Priority: agentcore.PriorityUrgent}, "by-default"},
	} {
		res, err := rt.Notify(t.Context(), c.in, agentcore.NotifyTarget{ThreadID: th.ID})
		if err != nil || res.Decision.Reason != c.reason {
			t.Fatalf("%+v → %+v %v", c.in, res.Decision, err)
		}
		if c.reason == "by-decide" && res.Record.Status != agentcore.NoteDiscarded {
			t.Fatalf("discarded record %+v", res.Record)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a persisted notification woke the thread")
	}
}

func TestNotifyRejectsBadInput(t *testing.T) {
	rt, _ := newNoteRuntime(t, nil)
	th := thread(t, rt)
	to := agentcore.NotifyTarget{ThreadID: th.ID}
	cases := []struct {
		in   agentcore.NotificationInput
		to   agentcore.NotifyTarget
		want string
	}{
		{agentcore.NotificationInput{Kind: "k", Summary: "s"}, to, "source is required"},
		{agentcore.NotificationInput{Source: "s", Summary: "s"}, to, "kind is required"},
		{agentcore.NotificationInput{Source: "s", Kind: "k"}, to, "summary is required"},
		{agentcore.NotificationInput{Source: "s", Kind: "k", Summary: "s", Priority: "critical"}, to, `invalid priority "critical"`},
		{agentcore.NotificationInput{Source: "s", Kind: "k", Summary: "s", Payload: json.RawMessage(`"` + strings.Repeat("x", agentcore.MaxNotificationPayload) + `"`)}, to, "more than the 262144 (256 KiB) allowed"},
		{agentcore.NotificationInput{Source: "s", Kind: "k", Summary: "s"}, agentcore.NotifyTarget{ThreadID: "nope"}, "not found"},
	}
	for _, c := range cases {
		if _, err := rt.Notify(t.Context(), c.in, c.to); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.in, err, c.want)
		}
	}
	if list, _ := rt.Notifications(t.Context(), agentcore.NotificationQuery{}); len(list) != 0 {
		t.Fatalf("bad input stored %d records", len(list))
	}
}

// A deferred notification is delivered at its time, even when Parley was
// restarted in between.
func TestNotifyTimerSurvivesRestart(t *testing.T) {
	srv := scripted.NewServer()
	defer srv.Close()
	srv.SetDefault(func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ok"} })
	path := filepath.Join(t.TempDir(), "p.db")
	at := time.Now().Add(400 * time.Millisecond).UTC()
	policy := &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyDefer, DeliverAt: &at, Reason: "later"}}
	rt, db := noteRuntime(t, path, srv, policy)
	th := thread(t, rt)
	res, err := rt.Notify(t.Context(), note(agentcore.PriorityMedium, "nightly report ready"), agentcore.NotifyTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	rt.Close()
	db.Close()

	rt, db = noteRuntime(t, path, srv, nil)
	defer func() { rt.Close(); db.Close() }()
	rt.StartNotifications()
	deadline := time.Now().Add(5 * time.Second)
	for get(t, rt, th.ID, res.Record.ID).Status != agentcore.NoteDelivered {
		if time.Now().After(deadline) {
			t.Fatalf("not delivered after restart: %+v", get(t, rt, th.ID, res.Record.ID))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := get(t, rt, th.ID, res.Record.ID); n.DeliveredAt.Before(at) {
		t.Fatalf("delivered at %v, before its time %v", n.DeliveredAt, at)
	}
	waitIdle(t, rt, th.ID)
	if !modelSaw(srv, ">nightly report ready</notification>") {
		t.Fatal("the model never read it")
	}
}

// Delivery is tried five times at most; then the record fails.
func TestNotifyFailsAfterFiveAttempts(t *testing.T) {
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	srv.SetDefault(func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "noted"} })
	rt, db := noteRuntime(t, filepath.Join(t.TempDir(), "p.db"), srv, nil)
	t.Cleanup(func() { rt.Close(); db.Close() })
	th := thread(t, rt)
	now := time.Now().UTC()
	res, err := rt.Notify(t.Context(), note(agentcore.PriorityMedium, "x"), agentcore.NotifyTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	if len(srv.Requests()) != 1 {
		t.Fatalf("%d model calls for one notification", len(srv.Requests()))
	}
	// A record whose agent is gone cannot be delivered.
	ns := agentcore.Store(db).(agentcore.NotificationStore)
	n := get(t, rt, th.ID, res.Record.ID)
	n.Status, n.DeliveredSignalID, n.AgentID, n.DeliverAt = agentcore.NotePending, "", "gone", &now
	if err := ns.SaveNotification(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		if err := rt.DispatchDue(t.Context(), time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		n = get(t, rt, th.ID, res.Record.ID)
		want := min(i, agentcore.MaxDeliveryAttempts)
		if n.DeliveryAttempts != want {
			t.Fatalf("after dispatch %d: %d attempts", i, n.DeliveryAttempts)
		}
	}
	if n.Status != agentcore.NoteFailed || !strings.Contains(n.LastDeliveryError, `agent "gone"`) || n.LastDeliveryAttemptAt == nil {
		t.Fatalf("record %+v", n)
	}
}

// Reading through the inbox delivers the unread ones into the thread and
// marks them seen.
func TestReadNotifications(t *testing.T) {
	rt, _ := newNoteRuntime(t, &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}})
	th := thread(t, rt)
	a, _ := rt.Notify(t.Context(), note(agentcore.PriorityLow, "first"), agentcore.NotifyTarget{ThreadID: th.ID})
	rt.Notify(t.Context(), note(agentcore.PriorityLow, "second"), agentcore.NotifyTarget{ThreadID: th.ID})
	res, err := rt.ReadNotifications(t.Context(), th.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Message != "2 notification(s) will now be delivered." || len(res.MarkedSeen) != 2 {
		t.Fatalf("%+v", res)
	}
	res, _ = rt.ReadNotifications(t.Context(), th.ID, "")
	if res.Message != "No unread notifications needed delivery." {
		t.Fatalf("second read %+v", res)
	}
	res, _ = rt.ReadNotifications(t.Context(), th.ID, a.Record.ID)
	if len(res.AlreadyRead) != 1 {
		t.Fatalf("read by id %+v", res)
	}
	if _, err := rt.ReadNotifications(t.Context(), th.ID, "nope"); err == nil || !strings.HasPrefix(err.Error(), "Notification nope was not found for thread "+th.ID) {
		t.Fatalf("unknown id: %v", err)
	}
	if got := shape(messages(t, rt, th.ID)); got != "signal:notification(complete) signal:notification(complete)" {
		t.Fatalf("thread %s", got)
	}
}

// A summary counts the records due now: a low notification summarised
// before, and still pending, is not summarised again with the next one
// (Mastra's sendNotificationSummary).
func TestNotifySummaryCountsOnlyTheDue(t *testing.T) {
	rt, _ := newNoteRuntime(t, nil)
	rt.StartNotifications()
	th := thread(t, rt)
	for i, text := range []string{"nightly build passed", "a dependency was updated"} {
		res, err := rt.Notify(t.Context(), note(agentcore.PriorityLow, text), agentcore.NotifyTarget{ThreadID: th.ID})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for get(t, rt, th.ID, res.Record.ID).SummarySignalID == "" {
			if time.Now().After(deadline) {
				t.Fatalf("notification %d never summarised", i+1)
			}
			time.Sleep(10 * time.Millisecond)
		}
		waitIdle(t, rt, th.ID)
	}
	msgs := messages(t, rt, th.ID)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want two summaries: %s", len(msgs), shape(msgs))
	}
	for i, m := range msgs {
		if m.Type != "notification-summary" || m.Content.Text() != "github: 1" {
			t.Errorf("summary %d: %s %q, want github: 1 (the one due, not both pending)", i+1, m.Type, m.Content.Text())
		}
	}
}
