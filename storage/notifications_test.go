package storage

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

func mustNotification(t *testing.T, db *DB, n agentcore.Notification) agentcore.Notification {
	t.Helper()
	n, err := db.CreateNotification(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustGetNotification(t *testing.T, db *DB, threadID, id string) agentcore.Notification {
	t.Helper()
	n, err := db.GetNotification(context.Background(), threadID, id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(ns []agentcore.Notification) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.ID)
	}
	return out
}

func at(sec int) *time.Time {
	t := time.Date(2026, 3, 1, 12, 0, sec, 0, time.UTC)
	return &t
}

// A record with every field set, in a zone other than UTC and below a
// millisecond, so the round trip must normalise both.
func fullNotification(threadID string) agentcore.Notification {
	local := time.FixedZone("CET", 3600)
	tp := func(ms int) *time.Time {
		t := time.Date(2026, 3, 1, 13, 0, 0, ms*int(time.Millisecond)+999, local)
		return &t
	}
	return agentcore.Notification{
		ID: "n-full", ThreadID: threadID, Source: "github", Kind: "ci-status",
		Priority: agentcore.PriorityHigh, Status: agentcore.NoteDelivered,
		Summary: "CI failed on main: é ✓ 𝄞", Payload: json.RawMessage(`{"run":42,"steps":["build","test"]}`),
		ResourceID: "res-1", AgentID: "agent-1", SourceID: "check-7", DedupeKey: "ci:main", CoalesceKey: "ci",
		CoalescedCount: 3,
		// Not alphabetical: the order must survive.
		Attributes: agentcore.Attrs{{Name: "zeta", Value: "z"}, {Name: "alpha", Value: 1.5},
			{Name: "mid", Value: true}, {Name: "none", Value: nil}},
		CreatedAt: *tp(1), UpdatedAt: *tp(2), DeliveredAt: tp(3), SeenAt: tp(4), DismissedAt: tp(5),
		ArchivedAt: tp(6), DiscardedAt: tp(7), DeliverAt: tp(8), SummaryAt: tp(9),
		DeliveryReason: "idle-high", DeliveryAttempts: 2, LastDeliveryAttemptAt: tp(10),
		LastDeliveryError: "thread busy", DeliveredSignalID: "sig-1", SummarySignalID: "sig-0",
		Metadata:     map[string]any{"pr": "123", "labels": []any{"ci"}},
		SnoozedUntil: tp(11),
	}
}

// normalised is n as the store returns it: UTC, millisecond precision.
func normalised(n agentcore.Notification) agentcore.Notification {
	truncateTimes(&n)
	return n
}

func TestNotificationRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})

	in := fullNotification(th.ID)
	created := mustNotification(t, db, in)
	want := normalised(fullNotification(th.ID))
	if !reflect.DeepEqual(created, want) {
		t.Errorf("CreateNotification returned\n%+v\nwant\n%+v", created, want)
	}
	if in.DeliverAt.Location() == time.UTC {
		t.Error("CreateNotification wrote through the caller's time pointers")
	}
	got := mustGetNotification(t, db, th.ID, in.ID)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetNotification =\n%+v\nwant\n%+v", got, want)
	}
	b, err := json.Marshal(got.Attributes)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); s != `{"zeta":"z","alpha":1.5,"mid":true,"none":null}` {
		t.Errorf("attributes read back as %s; want insertion order", s)
	}

	// The minimal record: defaults filled in, every optional field NULL
	// in the table and empty/nil when read back.
	bare := mustNotification(t, db, agentcore.Notification{ThreadID: th.ID, Source: "cron", Kind: "backup",
		Summary: "Backup done"})
	if bare.ID == "" || bare.CreatedAt.IsZero() || !bare.UpdatedAt.Equal(bare.CreatedAt) {
		t.Errorf("defaults: id %q createdAt %v updatedAt %v", bare.ID, bare.CreatedAt, bare.UpdatedAt)
	}
	if bare.Status != agentcore.NotePending || bare.Priority != agentcore.PriorityMedium || bare.CoalescedCount != 1 {
		t.Errorf("defaults: status %q priority %q count %d; want pending, medium, 1",
			bare.Status, bare.Priority, bare.CoalescedCount)
	}
	got = mustGetNotification(t, db, th.ID, bare.ID)
	if !reflect.DeepEqual(got, bare) {
		t.Errorf("minimal record read back as\n%+v\nwant\n%+v", got, bare)
	}
	var nonNull int
	if err := db.reader.QueryRowContext(ctx, `SELECT
		(payload IS NOT NULL) + (resource_id IS NOT NULL) + (agent_id IS NOT NULL) + (source_id IS NOT NULL) +
		(dedupe_key IS NOT NULL) + (coalesce_key IS NOT NULL) + (attributes IS NOT NULL) +
		(delivered_at IS NOT NULL) + (seen_at IS NOT NULL) + (dismissed_at IS NOT NULL) +
		(archived_at IS NOT NULL) + (discarded_at IS NOT NULL) + (deliver_at IS NOT NULL) +
		(summary_at IS NOT NULL) + (delivery_reason IS NOT NULL) + (last_delivery_attempt_at IS NOT NULL) +
		(last_delivery_error IS NOT NULL) + (delivered_signal_id IS NOT NULL) +
		(summary_signal_id IS NOT NULL) + (metadata IS NOT NULL) + (snoozed_until IS NOT NULL)
		FROM notifications WHERE thread_id = ? AND id = ?`, th.ID, bare.ID).Scan(&nonNull); err != nil {
		t.Fatal(err)
	}
	if nonNull != 0 {
		t.Errorf("%d optional columns of the minimal record are not NULL", nonNull)
	}
}

func TestNotificationIDsArePerThread(t *testing.T) {
	db := openTest(t)
	a := mustThread(t, db, agentcore.Thread{})
	b := mustThread(t, db, agentcore.Thread{})
	mustNotification(t, db, agentcore.Notification{ID: "same", ThreadID: a.ID, Source: "s", Kind: "k", Summary: "in a"})
	mustNotification(t, db, agentcore.Notification{ID: "same", ThreadID: b.ID, Source: "s", Kind: "k", Summary: "in b"})
	if got := mustGetNotification(t, db, b.ID, "same"); got.Summary != "in b" {
		t.Errorf("thread b's record = %q", got.Summary)
	}
	_, err := db.CreateNotification(context.Background(),
		agentcore.Notification{ID: "same", ThreadID: a.ID, Source: "s", Kind: "k", Summary: "again"})
	if err == nil || !strings.Contains(err.Error(), "create notification same on thread "+a.ID) {
		t.Errorf("duplicate id in one thread: err = %v", err)
	}
	if got := mustGetNotification(t, db, a.ID, "same"); got.Summary != "in a" {
		t.Errorf("the duplicate replaced the record: %q", got.Summary)
	}
}

func TestNotificationErrors(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})

	_, err := db.CreateNotification(ctx, agentcore.Notification{ID: "n1", ThreadID: "no-such-thread",
		Source: "s", Kind: "k", Summary: "x"})
	if !agentcore.IsNotFound(err) || !strings.Contains(err.Error(), "no-such-thread") {
		t.Errorf("create on an unknown thread: err = %v; want not found naming the thread", err)
	}

	_, err = db.CreateNotification(ctx, agentcore.Notification{ID: "bad", ThreadID: th.ID, Source: "s", Kind: "k",
		Summary: "x", Payload: json.RawMessage(`{"unclosed"`)})
	if err == nil || !strings.Contains(err.Error(), "payload is not JSON") {
		t.Errorf("invalid payload: err = %v", err)
	}

	_, err = db.GetNotification(ctx, th.ID, "missing")
	want := "Notification missing was not found for thread " + th.ID
	if !agentcore.IsNotFound(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("get missing: err = %v; want %q wrapping ErrNotFound", err, want)
	}

	err = db.SaveNotification(ctx, agentcore.Notification{ID: "missing", ThreadID: th.ID, Source: "s", Kind: "k",
		Priority: agentcore.PriorityLow, Status: agentcore.NotePending, Summary: "x"})
	if !agentcore.IsNotFound(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("save missing: err = %v; want %q wrapping ErrNotFound", err, want)
	}

	// Neither the failed creates nor the failed save stored anything.
	all, err := db.ListNotifications(ctx, agentcore.NotificationQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Errorf("failed calls left %d records: %v", len(all), ids(all))
	}
}

func TestSaveNotification(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	orig := mustNotification(t, db, fullNotification(th.ID))

	// Replace every field, clearing the optional ones.
	next := agentcore.Notification{ID: orig.ID, ThreadID: th.ID, Source: "gitlab", Kind: "deploy",
		Priority: agentcore.PriorityUrgent, Status: agentcore.NotePending, Summary: "Deploy waiting",
		CoalescedCount: 4, CreatedAt: *at(1), UpdatedAt: *at(2), DeliverAt: at(3),
		Attributes: agentcore.Attrs{{Name: "b", Value: "2"}, {Name: "a", Value: "1"}}}
	if err := db.SaveNotification(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got := mustGetNotification(t, db, th.ID, orig.ID); !reflect.DeepEqual(got, next) {
		t.Errorf("after save\n%+v\nwant\n%+v", got, next)
	}

	// A zero CreatedAt keeps the stored one; a zero UpdatedAt is now.
	next.CreatedAt, next.UpdatedAt = time.Time{}, time.Time{}
	before := time.Now().Add(-time.Second)
	if err := db.SaveNotification(ctx, next); err != nil {
		t.Fatal(err)
	}
	got := mustGetNotification(t, db, th.ID, orig.ID)
	if !got.CreatedAt.Equal(*at(1)) {
		t.Errorf("createdAt = %v; want the stored %v", got.CreatedAt, *at(1))
	}
	if got.UpdatedAt.Before(before) {
		t.Errorf("updatedAt = %v; want now", got.UpdatedAt)
	}
}

func TestNotificationCoalescing(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	other := mustThread(t, db, agentcore.Thread{})

	base := agentcore.Notification{ThreadID: th.ID, Source: "github", Kind: "ci", AgentID: "agent",
		ResourceID: "res", Summary: "x"}
	with := func(f func(*agentcore.Notification)) agentcore.Notification {
		n := base
		f(&n)
		return n
	}
	mk := func(id string, f func(*agentcore.Notification)) {
		n := with(f)
		n.ID = id
		mustNotification(t, db, n)
	}
	mk("dedupe-old", func(n *agentcore.Notification) { n.DedupeKey = "d1"; n.UpdatedAt = *at(1) })
	mk("dedupe-new", func(n *agentcore.Notification) { n.DedupeKey = "d1"; n.UpdatedAt = *at(5) })
	mk("coalesce", func(n *agentcore.Notification) { n.CoalesceKey = "c1"; n.UpdatedAt = *at(3) })
	mk("delivered", func(n *agentcore.Notification) { n.CoalesceKey = "c-done"; n.Status = agentcore.NoteDelivered })
	mk("no-agent", func(n *agentcore.Notification) { n.AgentID, n.ResourceID, n.CoalesceKey = "", "", "c2" })
	mk("other-thread", func(n *agentcore.Notification) { n.ThreadID = other.ID; n.CoalesceKey = "c3" })

	for _, tc := range []struct {
		name string
		n    agentcore.Notification
		want string // "" = none
	}{
		{"same dedupe key, newest first", with(func(n *agentcore.Notification) { n.DedupeKey = "d1" }), "dedupe-new"},
		{"dedupe key wins over coalesce key",
			with(func(n *agentcore.Notification) { n.DedupeKey = "d-unknown"; n.CoalesceKey = "c1" }), ""},
		{"same coalesce key", with(func(n *agentcore.Notification) { n.CoalesceKey = "c1" }), "coalesce"},
		{"no keys", base, ""},
		{"different kind", with(func(n *agentcore.Notification) { n.Kind = "deploy"; n.CoalesceKey = "c1" }), ""},
		{"different source", with(func(n *agentcore.Notification) { n.Source = "gitlab"; n.CoalesceKey = "c1" }), ""},
		{"different agent", with(func(n *agentcore.Notification) { n.AgentID = "agent-2"; n.CoalesceKey = "c1" }), ""},
		{"no agent vs an agent", with(func(n *agentcore.Notification) { n.AgentID = ""; n.CoalesceKey = "c1" }), ""},
		{"different resource", with(func(n *agentcore.Notification) { n.ResourceID = "r2"; n.CoalesceKey = "c1" }), ""},
		{"not pending", with(func(n *agentcore.Notification) { n.CoalesceKey = "c-done" }), ""},
		{"NULL agent and resource equal NULL",
			with(func(n *agentcore.Notification) { n.AgentID, n.ResourceID, n.CoalesceKey = "", "", "c2" }), "no-agent"},
		{"an agent does not match NULL", with(func(n *agentcore.Notification) { n.CoalesceKey = "c2" }), ""},
		{"other thread", with(func(n *agentcore.Notification) { n.CoalesceKey = "c3" }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, ok, err := db.FindCoalescable(ctx, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if ok {
					t.Errorf("found %s; want none", found.ID)
				}
				return
			}
			if !ok || found.ID != tc.want {
				t.Errorf("found %q, %v; want %q", found.ID, ok, tc.want)
			}
		})
	}
}

func TestListNotifications(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a := mustThread(t, db, agentcore.Thread{})
	b := mustThread(t, db, agentcore.Thread{})
	mk := func(id, threadID, source, kind string, p agentcore.Priority, s agentcore.NotificationStatus,
		summary string, updated int) {
		mustNotification(t, db, agentcore.Notification{ID: id, ThreadID: threadID, Source: source, Kind: kind,
			Priority: p, Status: s, Summary: summary, CreatedAt: *at(0), UpdatedAt: *at(updated)})
	}
	mk("a1", a.ID, "github", "ci-status", agentcore.PriorityHigh, agentcore.NotePending, "Build FAILED on main", 1)
	mk("a2", a.ID, "cron", "backup", agentcore.PriorityLow, agentcore.NoteSeen, "Backup done: 100%", 4)
	mk("a3", a.ID, "github", "review", agentcore.PriorityMedium, agentcore.NoteDelivered, "snake_case review", 3)
	mk("b1", b.ID, "pager", "incident", agentcore.PriorityUrgent, agentcore.NotePending, "Free cache now", 2)
	// Same updatedAt as a2: id breaks the tie.
	mk("a0", a.ID, "cron", "cleanup", agentcore.PriorityLow, agentcore.NotePending, "Backup 1000 files", 4)

	for _, tc := range []struct {
		name string
		q    agentcore.NotificationQuery
		want []string
	}{
		{"all threads, newest first", agentcore.NotificationQuery{}, []string{"a0", "a2", "a3", "b1", "a1"}},
		{"one thread", agentcore.NotificationQuery{ThreadID: b.ID}, []string{"b1"}},
		{"limit", agentcore.NotificationQuery{Limit: 2}, []string{"a0", "a2"}},
		{"statuses", agentcore.NotificationQuery{ThreadID: a.ID,
			Statuses: []agentcore.NotificationStatus{agentcore.NotePending, agentcore.NoteDelivered}},
			[]string{"a0", "a3", "a1"}},
		{"priorities", agentcore.NotificationQuery{
			Priorities: []agentcore.Priority{agentcore.PriorityUrgent, agentcore.PriorityHigh}}, []string{"b1", "a1"}},
		{"sources", agentcore.NotificationQuery{Sources: []string{"pager", "cron"}}, []string{"a0", "a2", "b1"}},
		{"filters combine", agentcore.NotificationQuery{Sources: []string{"github"},
			Statuses: []agentcore.NotificationStatus{agentcore.NotePending}}, []string{"a1"}},
		{"text in summary, any case", agentcore.NotificationQuery{Text: "failed"}, []string{"a1"}},
		{"text in kind", agentcore.NotificationQuery{Text: "INCIDENT"}, []string{"b1"}},
		{"text in source", agentcore.NotificationQuery{Text: "Git"}, []string{"a3", "a1"}},
		{"% matches itself", agentcore.NotificationQuery{Text: "100%"}, []string{"a2"}},
		{"_ matches itself", agentcore.NotificationQuery{Text: "e_c"}, []string{"a3"}},
		{"backslash matches itself", agentcore.NotificationQuery{Text: `\`}, []string{}},
		{"nothing matches", agentcore.NotificationQuery{ThreadID: b.ID, Text: "backup"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ListNotifications(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tc.want) {
				t.Errorf("got %v; want %v", ids(got), tc.want)
			}
		})
	}
}

func TestDueNotifications(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})

	if _, ok, err := db.NextDue(ctx); err != nil || ok {
		t.Fatalf("NextDue of an empty store = %v, %v", ok, err)
	}
	mk := func(id string, s agentcore.NotificationStatus, deliverAt, summaryAt *time.Time, updated int) {
		mustNotification(t, db, agentcore.Notification{ID: id, ThreadID: th.ID, Source: "s", Kind: "k",
			Summary: id, Status: s, DeliverAt: deliverAt, SummaryAt: summaryAt, UpdatedAt: *at(updated)})
	}
	mk("unscheduled", agentcore.NotePending, nil, nil, 0)
	if _, ok, err := db.NextDue(ctx); err != nil || ok {
		t.Fatalf("NextDue with nothing scheduled = %v, %v", ok, err)
	}
	mk("deliver-20", agentcore.NotePending, at(20), nil, 1)
	mk("summary-10", agentcore.NotePending, nil, at(10), 1)
	mk("deliver-30-summary-5", agentcore.NotePending, at(30), at(5), 1)
	mk("both-10-later-update", agentcore.NotePending, at(10), at(10), 2)
	mk("future", agentcore.NotePending, at(50), at(40), 1)
	mk("delivered-early", agentcore.NoteDelivered, at(1), nil, 1)
	mk("failed-early", agentcore.NoteFailed, nil, at(1), 1)

	next, ok, err := db.NextDue(ctx)
	if err != nil || !ok || !next.Equal(*at(5)) {
		t.Errorf("NextDue = %v, %v, %v; want %v (earliest of a pending record)", next, ok, err, *at(5))
	}

	due, err := db.DueNotifications(ctx, *at(20), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"deliver-30-summary-5", "summary-10", "both-10-later-update", "deliver-20"}
	if !reflect.DeepEqual(ids(due), want) {
		t.Errorf("due at :20 = %v; want %v", ids(due), want)
	}
	if due, err = db.DueNotifications(ctx, *at(20), 2); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(due), want[:2]) {
		t.Errorf("due at :20, limit 2 = %v; want %v", ids(due), want[:2])
	}
	if due, err = db.DueNotifications(ctx, *at(4), 0); err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Errorf("due at :04 = %v; want none", ids(due))
	}

	// Once handled, a record is no longer due and no longer sets NextDue.
	n := mustGetNotification(t, db, th.ID, "deliver-30-summary-5")
	n.SummaryAt = nil
	if err := db.SaveNotification(ctx, n); err != nil {
		t.Fatal(err)
	}
	if next, ok, err = db.NextDue(ctx); err != nil || !ok || !next.Equal(*at(10)) {
		t.Errorf("NextDue after clearing summaryAt = %v, %v, %v; want %v", next, ok, err, *at(10))
	}
	if due, err = db.DueNotifications(ctx, *at(20), 0); err != nil {
		t.Fatal(err)
	}
	if want := []string{"summary-10", "both-10-later-update", "deliver-20"}; !reflect.DeepEqual(ids(due), want) {
		t.Errorf("due after clearing summaryAt = %v; want %v", ids(due), want)
	}
}

func TestDueNotificationsDefaultLimit(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	for range dueBatch + 1 {
		mustNotification(t, db, agentcore.Notification{ThreadID: th.ID, Source: "s", Kind: "k", Summary: "x",
			DeliverAt: at(1)})
	}
	due, err := db.DueNotifications(ctx, *at(2), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != dueBatch {
		t.Errorf("due with no limit = %d records; want %d", len(due), dueBatch)
	}
}

func TestDeleteThreadDeletesNotifications(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	gone := mustThread(t, db, agentcore.Thread{})
	kept := mustThread(t, db, agentcore.Thread{})
	mustNotification(t, db, agentcore.Notification{ID: "n", ThreadID: gone.ID, Source: "s", Kind: "k", Summary: "x"})
	mustNotification(t, db, agentcore.Notification{ID: "n", ThreadID: kept.ID, Source: "s", Kind: "k", Summary: "x"})
	if err := db.DeleteThread(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetNotification(ctx, gone.ID, "n"); !agentcore.IsNotFound(err) {
		t.Errorf("record of a deleted thread: err = %v; want not found", err)
	}
	all, err := db.ListNotifications(ctx, agentcore.NotificationQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].ThreadID != kept.ID {
		t.Errorf("after deleting a thread the store holds %+v; want only the other thread's record", all)
	}
}
