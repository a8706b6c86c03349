package chat_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/app/chat"
	"parley/storage"
)

func newInbox(t *testing.T) (*chat.Inbox, *agentcore.Runtime, agentcore.Thread) {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentcore.Agent{ID: "parley", Name: "Parley", Model: "none/none",
		DeliveryPolicy: &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}}
	rt := agentcore.NewRuntime(db, nil, agent)
	th, err := rt.CreateThread(ctx, agentcore.Thread{ResourceID: "me", Title: "Builds"})
	if err != nil {
		t.Fatal(err)
	}
	in := chat.NewInbox(rt, nil)
	t.Cleanup(func() {
		in.Close()
		rt.Close()
		db.Close()
	})
	return in, rt, th
}

// Readers share one computation per change: a hundred readers at once, a
// notification, one computation; each watcher is told.
func TestInboxOneComputationPerChange(t *testing.T) {
	in, rt, th := newInbox(t)
	ctx := context.Background()
	if _, err := in.Current(ctx); err != nil {
		t.Fatal(err)
	}
	var watches []*chat.Watch
	for range 5 {
		w := in.Watch()
		defer w.Close()
		watches = append(watches, w)
	}
	before := in.Computations()
	read := func() {
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if _, err := in.Current(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	read()
	if n := in.Computations() - before; n != 0 {
		t.Fatalf("nothing changed, %d computations", n)
	}

	if _, err := rt.Notify(ctx, agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "Build 7 failed", Priority: agentcore.PriorityHigh},
		agentcore.NotifyTarget{ThreadID: th.ID}); err != nil {
		t.Fatal(err)
	}
	read()
	for i, w := range watches {
		select {
		case <-w.C():
		case <-time.After(5 * time.Second):
			t.Fatalf("watcher %d not told", i)
		}
	}
	time.Sleep(300 * time.Millisecond) // the coalesced refresh finds nothing left
	if n := in.Computations() - before; n != 1 {
		t.Fatalf("one notification, %d computations", n)
	}
	s := in.Latest()
	if len(s.Items) != 1 || s.Items[0].Kind != chat.KindNotification || s.Items[0].ThreadTitle != "Builds" ||
		s.Items[0].Notification.Summary != "Build 7 failed" || s.Items[0].Notification.Priority != agentcore.PriorityHigh ||
		len(s.Sources) != 1 || s.Sources[0] != "ci" || s.Seq != in.Computations() {
		t.Fatalf("snapshot %+v", s)
	}

	// Set aside: the next reader sees it gone, at once.
	if err := in.Act(ctx, s.Items[0].Key, "snooze"); err != nil {
		t.Fatal(err)
	}
	if s, err := in.Current(ctx); err != nil || len(s.Items) != 0 {
		t.Fatalf("after snooze: %+v, %v", s, err)
	}
	for _, bad := range [][2]string{{"bogus", "dismiss"}, {s.Items[0].Key, "archive-all"}, {"run/" + th.ID + "/r1", "seen"}} {
		if err := in.Act(ctx, bad[0], bad[1]); !errors.Is(err, chat.ErrBadInboxAction) {
			t.Errorf("%s %s: %v", bad[0], bad[1], err)
		}
	}
	if err := in.SeenAll(ctx, "", "loud"); !errors.Is(err, chat.ErrBadInboxAction) {
		t.Errorf("seen-all of priority loud: %v", err)
	}
}
