package chat_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/app/chat"
	"parley/storage"
)

func newAsks(t *testing.T) (*chat.Asks, *agentcore.Runtime, string, func()) {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The agent's policy is the app's: asks are kept for the user.
	agent := &agentcore.Agent{ID: "parley", Name: "Parley", Model: "none/none",
		DeliveryPolicy: &agentcore.DeliveryPolicy{Sources: map[string]agentcore.Decision{chat.AskSource: chat.AskPolicy}}}
	rt := agentcore.NewRuntime(db, nil, agent)
	th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	return chat.NewAsks(rt, stop), rt, th.ID, func() { close(stop) }
}

// waitingFor waits until the ask id waits in thread.
func waitingFor(t *testing.T, as *chat.Asks, thread, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, ok := as.Waiting(thread, id); ok {
			return
		}
	}
	t.Fatalf("%s never waited", id)
}

type askDone struct {
	r   chat.Reply
	err error
}

func ask(ctx context.Context, as *chat.Asks, a chat.Ask) <-chan askDone {
	ch := make(chan askDone, 1)
	go func() {
		r, err := as.Ask(ctx, a)
		ch <- askDone{r, err}
	}()
	return ch
}

func notesOf(t *testing.T, rt *agentcore.Runtime, thread string) []agentcore.Notification {
	t.Helper()
	n, err := rt.Notifications(t.Context(), agentcore.NotificationQuery{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An answered ask returns the answer and leaves the inbox (archived); the
// question was kept for the user, never delivered to the agent.
func TestAskAnswered(t *testing.T) {
	as, rt, th, _ := newAsks(t)
	ch := ask(t.Context(), as, chat.Ask{ID: "q1", ThreadID: th, Kind: chat.AskQuestion, Text: "Which?", Options: []string{"a", "b"}})
	waitingFor(t, as, th, "q1")
	if n := notesOf(t, rt, th); len(n) != 1 || n[0].Status != agentcore.NotePending || n[0].Source != chat.AskSource || n[0].DedupeKey != "q1" {
		t.Fatalf("filed: %+v", n)
	}
	if err := as.Answer(t.Context(), th, "q1", chat.Reply{Answer: "  "}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty answer: %v", err)
	}
	if err := as.Answer(t.Context(), th, "q1", chat.Reply{Answer: "b"}); err != nil {
		t.Fatal(err)
	}
	if d := <-ch; d.err != nil || d.r.Answer != "b" {
		t.Fatalf("ask returned %+v", d)
	}
	if n := notesOf(t, rt, th); n[0].Status != agentcore.NoteArchived {
		t.Fatalf("answered, still %s", n[0].Status)
	}
	if err := as.Answer(t.Context(), th, "q1", chat.Reply{Answer: "again"}); !errors.Is(err, chat.ErrNoAsk) {
		t.Fatalf("a second answer: %v", err)
	}
}

// An asker that gives up dismisses its question; Parley stopping keeps it
// for the same id; a second call with the same id takes over the wait.
func TestAskEnds(t *testing.T) {
	as, rt, th, stop := newAsks(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := ask(ctx, as, chat.Ask{ID: "gone", ThreadID: th, Kind: chat.AskQuestion, Text: "?"})
	waitingFor(t, as, th, "gone")
	cancel()
	if d := <-ch; !errors.Is(d.err, context.Canceled) {
		t.Fatalf("cancelled ask: %+v", d)
	}
	if n := notesOf(t, rt, th); n[0].Status != agentcore.NoteDismissed {
		t.Fatalf("given up, still %s", n[0].Status)
	}

	first := ask(t.Context(), as, chat.Ask{ID: "dup", ThreadID: th, Kind: chat.AskApproval, Text: "rm -rf build"})
	waitingFor(t, as, th, "dup")
	second := ask(t.Context(), as, chat.Ask{ID: "dup", ThreadID: th, Kind: chat.AskApproval, Text: "rm -rf build"})
	if d := <-first; !errors.Is(d.err, chat.ErrAskSuperseded) {
		t.Fatalf("first of two: %+v", d)
	}
	stop()
	if d := <-second; !errors.Is(d.err, chat.ErrAskInterrupted) {
		t.Fatalf("at stop: %+v", d)
	}
	n := notesOf(t, rt, th)
	if n[0].DedupeKey != "dup" || n[0].CoalescedCount != 2 || n[0].Status != agentcore.NotePending {
		t.Fatalf("asked twice, then stopped: %+v", n[0])
	}
}

func TestCheckAsk(t *testing.T) {
	ok := chat.Ask{ID: "a", ThreadID: "t", Kind: chat.AskQuestion, Text: "q"}
	for _, c := range []struct {
		change func(*chat.Ask)
		want   string
	}{
		{func(a *chat.Ask) { a.ID = "" }, "id must be"},
		{func(a *chat.Ask) { a.ID = "a/b" }, "id must be"},
		{func(a *chat.Ask) { a.ThreadID = "<t>" }, "threadId must be"},
		{func(a *chat.Ask) { a.Kind = "poll" }, "unknown kind"},
		{func(a *chat.Ask) { a.Text = " \n" }, "empty"},
		{func(a *chat.Ask) { a.Text = strings.Repeat("x", chat.MaxAskText+1) }, "more than the 4000"},
		{func(a *chat.Ask) { a.Options = make([]string, chat.MaxAskOptions+1) }, "options, more than"},
		{func(a *chat.Ask) { a.Options = []string{"x", strings.Repeat("y", chat.MaxAskOption+1)} }, "options[1]"},
	} {
		a := ok
		c.change(&a)
		if err := chat.CheckAsk(a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckAsk(%.60v) = %v, want %q", a, err, c.want)
		}
	}
	if err := chat.CheckAsk(ok); err != nil {
		t.Fatal(err)
	}
}
