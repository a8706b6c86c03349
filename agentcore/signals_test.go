package agentcore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// waitIdle waits for the thread's runs (queued turns included) to end.
func waitIdle(t *testing.T, rt *agentcore.Runtime, threadID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := rt.Wait(ctx, threadID); err != nil {
		t.Fatalf("thread still busy: %v", err)
	}
}

func messages(t *testing.T, rt *agentcore.Runtime, threadID string) []agentcore.Message {
	t.Helper()
	msgs, err := rt.ListMessages(t.Context(), threadID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func shape(msgs []agentcore.Message) string {
	var b []string
	for _, m := range msgs {
		s := string(m.Role)
		if m.Type != "" {
			s += ":" + m.Type
		}
		b = append(b, s+"("+string(m.Status)+")")
	}
	return strings.Join(b, " ")
}

// lastUser is the last user message the model got in request i.
func lastUser(srv *scripted.Server, i int) string {
	req := srv.Requests()[i]
	for j := len(req.Messages) - 1; j >= 0; j-- {
		if req.Messages[j].Role == "user" {
			return req.Messages[j].Content
		}
	}
	return ""
}

// A message sent while the agent is working reaches the same run at its
// next model input; the thread reads in order: the reply so far, the
// message, the rest of the reply.
func TestSendMessageDeliversIntoRunningLoop(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	delivered := make(chan agentcore.Accepted, 1)
	srv.Push(scripted.Reply{
		Text: "Working on it, step by step, slowly.", Delay: 10 * time.Millisecond,
		ToolCalls: nil,
		OnChunk: func(i int, _ string, _ time.Time) {
			if i == 2 {
				acc, _, err := rt.SendMessage(context.Background(), "Also check the tests", nil, agentcore.SignalTarget{ThreadID: th.ID})
				if err != nil {
					t.Errorf("send: %v", err)
				}
				delivered <- acc
			}
		},
	}, scripted.Reply{Text: "Tests checked too."})
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "Fix the bug"})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	acc := <-delivered
	if acc.Action != agentcore.Deliver || acc.RunID != sent.Run.ID {
		t.Fatalf("accepted %+v, want deliver into %s", acc, sent.Run.ID)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (the same run read the message before it ended)", n)
	}
	if got := lastUser(srv, 1); got != "Also check the tests" {
		t.Fatalf("second model input ends with %q", got)
	}
	msgs := messages(t, rt, th.ID)
	if got := shape(msgs); got != "user(complete) assistant(complete) signal:user(complete) assistant(complete)" {
		t.Fatalf("thread %s", got)
	}
	if msgs[1].RunID != sent.Run.ID || msgs[3].RunID != sent.Run.ID {
		t.Fatalf("both halves of the reply belong to the run: %q %q", msgs[1].RunID, msgs[3].RunID)
	}
	if msgs[3].Content.Text() != "Tests checked too." {
		t.Fatalf("second half %q", msgs[3].Content.Text())
	}
	// The history replays in the same order for the next run.
	srv.Push(scripted.Reply{Text: "ok"})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "thanks"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	var roles []string
	for _, m := range srv.Requests()[2].Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,system,user,assistant,user,assistant,user" {
		t.Fatalf("replayed prompt roles %s", got)
	}
}

// An idle thread is woken by a message: a run starts that reads it.
func TestSendMessageWakesIdleThread(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "Hi!"})
	acc, sig, err := rt.SendMessage(t.Context(), "hello from a script", agentcore.Attrs{{Name: "from", Value: "cron"}}, agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Action != agentcore.Wake || acc.RunID == "" {
		t.Fatalf("accepted %+v", acc)
	}
	waitIdle(t, rt, th.ID)
	if got := lastUser(srv, 0); got != `<user from="cron">hello from a script</user>` {
		t.Fatalf("model read %q", got)
	}
	msgs := messages(t, rt, th.ID)
	if got := shape(msgs); got != "signal:user(complete) assistant(complete)" || msgs[0].ID != sig.ID {
		t.Fatalf("thread %s", got)
	}
	got, _ := rt.GetThread(t.Context(), th.ID)
	if got.Title != "hello from a script" {
		t.Fatalf("title %q", got.Title)
	}
}

func TestSignalBehaviours(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	to := func(active, idle string) agentcore.SignalTarget {
		return agentcore.SignalTarget{ThreadID: th.ID, IfActive: agentcore.IfActive{Behavior: active}, IfIdle: agentcore.IfIdle{Behavior: idle}}
	}
	note := agentcore.Signal{Type: agentcore.SignalReactive, Contents: "disk almost full"}

	// Idle: persist stores without waking; discard drops.
	acc, _, err := rt.SendSignal(t.Context(), note, to("", agentcore.Persist))
	if err != nil || acc.Action != agentcore.Persist {
		t.Fatalf("idle persist: %+v %v", acc, err)
	}
	acc, _, err = rt.SendSignal(t.Context(), note, to("", agentcore.Discard))
	if err != nil || acc.Action != agentcore.Discard {
		t.Fatalf("idle discard: %+v %v", acc, err)
	}
	if got := shape(messages(t, rt, th.ID)); got != "signal:system-reminder(complete)" {
		t.Fatalf("after idle persist/discard: %s", got)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a persisted signal woke the thread")
	}
	_, _, err = rt.SendSignal(t.Context(), note, to("", "shout"))
	if err == nil || !strings.Contains(err.Error(), `invalid ifIdle behavior "shout"`) {
		t.Fatalf("bad ifIdle: %v", err)
	}

	// Active: persist and discard leave the run alone; the persisted one
	// waits for the next run.
	release := make(chan struct{})
	results := make(chan agentcore.Accepted, 2)
	srv.Push(scripted.Reply{Text: "one two three four", Delay: 5 * time.Millisecond, OnChunk: func(i int, _ string, _ time.Time) {
		if i == 1 {
			for _, b := range []string{agentcore.Persist, agentcore.Discard} {
				acc, _, err := rt.SendSignal(context.Background(), agentcore.Signal{Type: agentcore.SignalReactive, Contents: b}, to(b, ""))
				if err != nil {
					t.Errorf("active %s: %v", b, err)
				}
				results <- acc
			}
			close(release)
		}
	}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	<-release
	waitIdle(t, rt, th.ID)
	if a, b := <-results, <-results; a.Action != agentcore.Persist || b.Action != agentcore.Discard {
		t.Fatalf("active results %+v %+v", a, b)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls: persist/discard must not reach the running loop", n)
	}
	msgs := messages(t, rt, th.ID)
	var texts []string
	for _, m := range msgs {
		if m.Role == agentcore.RoleSignal {
			texts = append(texts, m.Content.Text())
		}
	}
	if strings.Join(texts, ",") != "disk almost full,persist" {
		t.Fatalf("stored signals %v", texts)
	}

	// A run id that is not running, with no thread: nothing to route to.
	_, _, err = rt.SendSignal(t.Context(), note, agentcore.SignalTarget{RunID: "nope"})
	if !errors.Is(err, agentcore.ErrNoActiveRun) || err.Error() != "No active agent run found for signal target" {
		t.Fatalf("unknown run: %v", err)
	}
	_, _, err = rt.SendSignal(t.Context(), note, agentcore.SignalTarget{ThreadID: "missing"})
	if !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("unknown thread: %v", err)
	}
}

// A transient signal reaches the current model call and is never stored.
func TestTransientSignalIsNotStored(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "noted"})
	acc, _, err := rt.SendSignal(t.Context(), agentcore.Signal{Type: agentcore.SignalReactive, Contents: "cursor at line 4", Transient: true}, agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil || acc.Action != agentcore.Wake {
		t.Fatalf("%+v %v", acc, err)
	}
	waitIdle(t, rt, th.ID)
	if got := lastUser(srv, 0); got != "<system-reminder>cursor at line 4</system-reminder>" {
		t.Fatalf("model read %q", got)
	}
	if got := shape(messages(t, rt, th.ID)); got != "assistant(complete)" {
		t.Fatalf("thread %s", got)
	}
}

// Queued messages each start a run of their own, after the active one, in
// the order they were queued.
func TestQueueMessageRunsAfterActiveRun(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	queued := make(chan []agentcore.Accepted, 1)
	srv.Push(scripted.Reply{Text: "first answer, written slowly", Delay: 5 * time.Millisecond, OnChunk: func(i int, _ string, _ time.Time) {
		if i == 1 {
			var accs []agentcore.Accepted
			for _, text := range []string{"second question", "third question"} {
				acc, _, err := rt.QueueMessage(context.Background(), text, agentcore.SignalTarget{ThreadID: th.ID})
				if err != nil {
					t.Errorf("queue: %v", err)
				}
				accs = append(accs, acc)
			}
			queued <- accs
		}
	}}, scripted.Reply{Text: "second answer"}, scripted.Reply{Text: "third answer"})
	first, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "first question"})
	if err != nil {
		t.Fatal(err)
	}
	accs := <-queued
	if accs[0].Action != agentcore.Queue || accs[1].Action != agentcore.Queue {
		t.Fatalf("accepted %+v", accs)
	}
	if q := rt.Queued(th.ID); len(q) != 2 {
		t.Fatalf("queued %d", len(q))
	}
	waitIdle(t, rt, th.ID)
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d model calls, want 3 (one run per turn)", n)
	}
	if lastUser(srv, 0) != "first question" || lastUser(srv, 1) != "second question" || lastUser(srv, 2) != "third question" {
		t.Fatalf("turn order: %q %q %q", lastUser(srv, 0), lastUser(srv, 1), lastUser(srv, 2))
	}
	msgs := messages(t, rt, th.ID)
	if got := shape(msgs); got != "user(complete) assistant(complete) signal:user(complete) assistant(complete) signal:user(complete) assistant(complete)" {
		t.Fatalf("thread %s", got)
	}
	if msgs[3].RunID == first.Run.ID || msgs[5].RunID == msgs[3].RunID {
		t.Fatal("queued turns did not get runs of their own")
	}
}

// Stopping a run keeps what was queued and delivered in the thread, as
// sent, and starts nothing.
func TestStopKeepsQueuedTurns(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	ready, gate := make(chan struct{}), make(chan struct{})
	defer close(gate) // the model's side of the stopped stream may go
	srv.Push(scripted.Reply{Text: "a b c d e f g h i j k l m n o p", OnChunk: func(i int, _ string, _ time.Time) {
		if i == 1 {
			close(ready)
			<-gate // still going when the user queues and stops
		}
	}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "start"}); err != nil {
		t.Fatal(err)
	}
	<-ready
	if _, _, err := rt.QueueMessage(t.Context(), "later", agentcore.SignalTarget{ThreadID: th.ID}); err != nil {
		t.Fatal(err)
	}
	if !rt.Stop(t.Context(), th.ID) {
		t.Fatal("nothing stopped")
	}
	waitIdle(t, rt, th.ID)
	if got := shape(messages(t, rt, th.ID)); got != "user(complete) assistant(interrupted) signal:user(complete)" {
		t.Fatalf("thread %s", got)
	}
	if len(srv.Requests()) != 1 || len(rt.Queued(th.ID)) != 0 {
		t.Fatal("a stopped thread started its queued turn")
	}
}

// However many senders race, a thread never runs two loops at once, and
// every message reaches a model.
func TestConcurrentSendersNeverRunTwoLoops(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.SetDefault(func(scripted.Request) scripted.Reply {
		return scripted.Reply{Text: "ok then", Delay: time.Millisecond}
	})
	sub := rt.Subscribe(th.ID, agentcore.EventStart, agentcore.EventFinish, agentcore.EventAbort, agentcore.EventError)
	defer sub.Close()
	var active, maxActive atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-sub.Ready():
			case <-time.After(3 * time.Second):
				return
			}
			for _, e := range sub.Drain() {
				if e.Type == agentcore.EventStart {
					if n := active.Add(1); n > maxActive.Load() {
						maxActive.Store(n)
					}
				} else {
					active.Add(-1)
				}
			}
		}
	}()

	const senders = 50
	var wg sync.WaitGroup
	actions := make(chan string, senders)
	for i := range senders {
		wg.Go(func() {
			acc, _, err := rt.SendMessage(context.Background(), fmt.Sprintf("message %d", i), nil, agentcore.SignalTarget{ThreadID: th.ID})
			if err != nil {
				t.Errorf("sender %d: %v", i, err)
			}
			actions <- acc.Action
		})
	}
	wg.Wait()
	close(actions)
	waitIdle(t, rt, th.ID)
	<-done
	if maxActive.Load() != 1 {
		t.Fatalf("%d runs were going at once", maxActive.Load())
	}
	wakes := 0
	for a := range actions {
		if a == agentcore.Wake {
			wakes++
		} else if a != agentcore.Deliver {
			t.Fatalf("action %s", a)
		}
	}
	if wakes < 1 {
		t.Fatal("no sender woke the thread")
	}
	// Every message was read by a model exactly once, in some request.
	seen := map[string]int{}
	for _, req := range srv.Requests() {
		last := map[string]bool{}
		for _, m := range req.Messages {
			if m.Role == "user" {
				last[m.Content] = true
			}
		}
		for k := range last {
			seen[k]++
		}
	}
	for i := range senders {
		if seen[fmt.Sprintf("message %d", i)] == 0 {
			t.Fatalf("message %d never reached a model", i)
		}
	}
	for _, m := range messages(t, rt, th.ID) {
		if m.Status != agentcore.StatusComplete {
			t.Fatalf("message %s left %s", m.ID, m.Status)
		}
	}
}

// A state lane sends a state once: the same cacheKey and mode again is
// skipped as unchanged; a new key bumps the version.
func TestStateSignalLanes(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	to := agentcore.SignalTarget{ThreadID: th.ID}
	in := agentcore.StateInput{ID: "build", CacheKey: "sha-1", Contents: "build is green", Value: map[string]any{"ok": true}}
	res, err := rt.SendStateSignal(t.Context(), in, to)
	if err != nil || res.Skipped || res.Action != agentcore.Persist {
		t.Fatalf("first: %+v %v", res, err)
	}
	again, err := rt.SendStateSignal(t.Context(), in, to)
	if err != nil || !again.Skipped || again.Reason != "unchanged" {
		t.Fatalf("same state: %+v %v", again, err)
	}
	delta := in
	delta.Mode = "delta"
	if res, _ := rt.SendStateSignal(t.Context(), delta, to); res.Skipped {
		t.Fatal("a delta with the same key is not the same state")
	}
	in.CacheKey, in.Contents = "sha-2", "build is red"
	res, err = rt.SendStateSignal(t.Context(), in, to)
	if err != nil || res.Skipped {
		t.Fatalf("new state: %+v %v", res, err)
	}
	if v := res.Signal.Metadata["state"].(map[string]any)["version"]; v != 3 {
		t.Fatalf("version %v, want 3", v)
	}
	got, _ := rt.GetThread(t.Context(), th.ID)
	lanes := got.Metadata["mastra"].(map[string]any)["stateSignals"].(map[string]any)["build"].(map[string]any)
	if lanes["currentCacheKey"] != "sha-2" || lanes["currentMode"] != "snapshot" || lanes["lastSnapshotSignalId"] != res.Signal.ID {
		t.Fatalf("tracking %+v", lanes)
	}
	if got := shape(messages(t, rt, th.ID)); got != "signal:state(complete) signal:state(complete) signal:state(complete)" {
		t.Fatalf("thread %s", got)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a state update woke the thread")
	}
	for _, bad := range []struct {
		in   agentcore.StateInput
		want string
	}{
		{agentcore.StateInput{CacheKey: "k"}, "state signal id is required"},
		{agentcore.StateInput{ID: "x"}, "state signal cacheKey is required"},
	} {
		if _, err := rt.SendStateSignal(t.Context(), bad.in, to); err == nil || err.Error() != bad.want {
			t.Fatalf("%+v: %v", bad.in, err)
		}
	}
}

// A thread subscription follows every run of the thread in turn; leaving
// it stops nothing, abort stops the run.
func TestSubscribeThread(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	sub := rt.SubscribeThread(th.ID)
	if sub.ActiveRunID() != "" {
		t.Fatal("an idle thread has an active run")
	}
	srv.Push(scripted.Reply{Text: "one"}, scripted.Reply{Text: "two"})
	var runs []string
	go func() {
		for _, text := range []string{"a", "b"} {
			if _, _, err := rt.SendMessage(context.Background(), text, nil, agentcore.SignalTarget{ThreadID: th.ID}); err != nil {
				t.Errorf("send: %v", err)
			}
			waitIdle(t, rt, th.ID)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var first agentcore.EventType
	for e := range sub.Events(ctx) {
		if first == "" {
			first = e.Type
		}
		if e.Type == agentcore.EventStart {
			runs = append(runs, e.RunID)
		}
		if e.Type == agentcore.EventFinish && len(runs) == 2 {
			break
		}
	}
	if first != agentcore.EventStart || len(runs) != 2 || runs[0] == runs[1] {
		t.Fatalf("first event %s, runs %v", first, runs)
	}

	// Unsubscribing leaves a run going; Abort stops it.
	srv.Push(scripted.Reply{Text: strings.Repeat("slow ", 50), Delay: 10 * time.Millisecond})
	acc, _, err := rt.SendMessage(t.Context(), "c", nil, agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	other := rt.SubscribeThread(th.ID)
	sub.Unsubscribe()
	if got := other.ActiveRunID(); got != acc.RunID {
		t.Fatalf("active run %q, want %q", got, acc.RunID)
	}
	if !other.Abort() || other.ActiveRunID() != "" {
		t.Fatal("abort did not stop the run")
	}
	other.Unsubscribe()
	for range sub.Events(t.Context()) {
		t.Fatal("an ended subscription yielded")
	}
}

// A message sent while the agent works can be taken back until a model
// reads it: a queued turn then never runs, a steering message never
// reaches the loop; a read one stays.
func TestUnsend(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	ready, release := make(chan struct{}), make(chan struct{})
	srv.Push(scripted.Reply{Text: "working on it, slowly", Delay: 5 * time.Millisecond, OnChunk: func(i int, _ string, _ time.Time) {
		if i == 1 {
			close(ready)
			<-release
		}
	}}, scripted.Reply{Text: "done"})
	first, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	<-ready
	_, queued, err := rt.QueueMessage(t.Context(), "a later turn", agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, steer, err := rt.SendMessage(t.Context(), "a change of plan", nil, agentcore.SignalTarget{ThreadID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{queued.ID, steer.ID} {
		got, err := rt.Unsend(t.Context(), th.ID, id)
		if err != nil || got.ID != id {
			t.Fatalf("unsend %s: %+v %v", id, got, err)
		}
	}
	if _, err := rt.Unsend(t.Context(), th.ID, queued.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("taken back twice: %v", err)
	}
	if _, err := rt.Unsend(t.Context(), th.ID, first.User.ID); !errors.Is(err, agentcore.ErrAlreadyRead) {
		t.Fatalf("a read message: %v", err)
	}
	close(release)
	waitIdle(t, rt, th.ID)
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls: a message taken back was still sent", n)
	}
	if got := shape(messages(t, rt, th.ID)); got != "user(complete) assistant(complete)" {
		t.Fatalf("thread %s", got)
	}
}
