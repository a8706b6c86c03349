package agentcore_test

import (
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// waitStored waits until the stored reply id has at least n bytes of text.
func waitStored(t *testing.T, rt *agentcore.Runtime, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		m, err := rt.GetMessage(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Content.Text()) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the reply never had %d bytes stored", n)
}

// A reply the disk has no room for fails its run, named as such, at once:
// the run does not stream on as if it were kept. What was stored stays,
// marked failed; when there is room again the next message works.
func TestFullDiskFailsTheRun(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	// 200 KB in 2,000 chunks, 2 ms apart: 4 s if it ran to the end.
	srv.Push(scripted.Reply{Text: strings.Repeat("a reply that goes on ", 10_000), ChunkSize: 5, Delay: 2 * time.Millisecond})
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go on"})
	if err != nil {
		t.Fatal(err)
	}
	waitStored(t, rt, sent.MessageID, 1)
	if err := db.LimitPages(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	end := events[len(events)-1]
	if end.Type != agentcore.EventError || !end.StoreFailed || end.Error != "the disk is full: the reply could not be saved" {
		t.Fatalf("the run ended with %+v, want the store failure named", end)
	}
	// The run ended within its write retries (about 1 s), long before the
	// 4 s stream would have: far from all of the reply was streamed. (Counted
	// in bytes, not timed: a loaded machine slows the stream and the
	// retries alike.)
	streamed := 0
	for _, e := range events {
		if e.Type == agentcore.EventTextDelta {
			streamed += len(e.Text)
		}
	}
	if full := len("a reply that goes on ") * 10_000; streamed > full/2 {
		t.Errorf("the run streamed %d of %d bytes after the disk filled", streamed, full)
	}

	// Nothing is left streaming: the store's row, or while the disk has
	// no room for even that, what the runtime shows of it.
	m, err := rt.GetMessage(t.Context(), sent.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != agentcore.StatusError || m.Content.Metadata["error"] != end.Error || m.Content.Text() == "" {
		t.Fatalf("the reply reads %s %v with %d bytes, want failed with its error and what was stored", m.Status, m.Content.Metadata, len(m.Content.Text()))
	}
	run, err := rt.GetRun(t.Context(), end.RunID)
	if err != nil {
		t.Fatal(err)
	}

	if err := db.LimitPages(t.Context(), -1); err != nil {
		t.Fatal(err)
	}
	// The run's own final writes land once there is room (owe).
	deadline := time.Now().Add(10 * time.Second)
	for run.Status == agentcore.RunRunning && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if run, err = rt.GetRun(t.Context(), end.RunID); err != nil {
			t.Fatal(err)
		}
	}
	if run.Status != agentcore.RunFailed || run.Error != end.Error {
		t.Fatalf("the run is stored %s %q, want failed with the store's error", run.Status, run.Error)
	}
	stored, err := db.GetMessage(t.Context(), sent.MessageID)
	for ; err == nil && stored.Status == agentcore.StatusStreaming && time.Now().Before(deadline); stored, err = db.GetMessage(t.Context(), sent.MessageID) {
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || stored.Status != agentcore.StatusError || stored.Content.Metadata["error"] != end.Error {
		t.Fatalf("once there is room the stored reply is %s %v (%v), want failed with its error", stored.Status, stored.Content.Metadata, err)
	}

	srv.Push(scripted.Reply{Text: "Room again."})
	sent, err = rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "and now?"})
	if err != nil {
		t.Fatalf("the next message with room again: %v", err)
	}
	if end := collect(t, sub); end[len(end)-1].Type != agentcore.EventFinish {
		t.Fatalf("the next run ended with %+v", end[len(end)-1])
	}
	if m, err := rt.GetMessage(t.Context(), sent.MessageID); err != nil || m.Status != agentcore.StatusComplete || m.Content.Text() != "Room again." {
		t.Fatalf("the next reply: %+v, %v", m, err)
	}
}

// A reply whose streaming writes landed but whose final write found no
// room fails too: it is not reported finished while the store keeps less.
func TestFullDiskAtTheEndFailsTheRun(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	release := make(chan struct{})
	text := strings.Repeat("word ", 30_000)
	srv.Push(scripted.Reply{Text: text, ChunkSize: 30_000 - 1, OnChunk: func(i int, _ string, _ time.Time) {
		if i == 0 {
			<-release // the first chunk is stored before the disk fills
		}
	}})
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	waitStored(t, rt, sent.MessageID, 1)
	if err := db.LimitPages(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	close(release)
	events := collect(t, sub)
	if end := events[len(events)-1]; end.Type != agentcore.EventError || !end.StoreFailed {
		t.Fatalf("the run ended with %+v, want the store failure", end)
	}
	m, err := rt.GetMessage(t.Context(), sent.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != agentcore.StatusError || len(m.Content.Text()) >= len(text) {
		t.Fatalf("the reply reads %s with %d of %d bytes", m.Status, len(m.Content.Text()), len(text))
	}
}
