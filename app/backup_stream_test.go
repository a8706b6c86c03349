package app

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/storage"
)

// stored is a thread with its messages.
type stored struct {
	agentcore.Thread
	messages []agentcore.Message
}

// everything is every thread of a database with its messages, by id.
func everything(t *testing.T, db *storage.DB) map[string]stored {
	t.Helper()
	ts, err := db.ListThreads(context.Background(), agentcore.ThreadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]stored{}
	for _, th := range ts {
		ms, err := db.ListMessages(context.Background(), th.ID, agentcore.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		out[th.ID] = stored{th, ms}
	}
	return out
}

// `parley backup` while a reply streams, then `parley restore` into a fresh
// data folder: every thread and message is there as it was, and the reply
// that was streaming is the part written by then, marked interrupted.
func TestBackupDuringAStreamRestores(t *testing.T) {
	dir := t.TempDir()
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	in, err := Open(t.Context(), Config{DataDir: dir, Workspace: dir, Model: DemoModel, Getenv: func(string) string { return "" }}, Options{Scripted: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	for i, text := range []string{"first chat", "second chat"} {
		model.Push(scripted.Reply{Text: "A whole answer " + strings.Repeat("x", i)})
		th, err := in.Runtime.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Runtime.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: text}); err != nil {
			t.Fatal(err)
		}
		if err := in.Runtime.Wait(t.Context(), th.ID); err != nil {
			t.Fatal(err)
		}
		// The chat's title is written after its reply: settled before the
		// backup, so that what was is what the backup holds.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			th, err := in.Runtime.GetThread(t.Context(), th.ID)
			if err != nil {
				t.Fatal(err)
			}
			if th.Metadata["autoTitle"] == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the chat's title was never written")
			}
		}
	}
	streaming, goOn := make(chan struct{}), make(chan struct{})
	letGo := sync.OnceFunc(func() { close(goOn) })
	t.Cleanup(letGo)
	model.Push(scripted.Reply{Text: strings.Repeat("streaming on ", 200), OnChunk: func(i int, _ string, _ time.Time) {
		if i == 100 {
			close(streaming)
			<-goOn
		}
	}})
	live, err := in.Runtime.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := in.Runtime.Send(t.Context(), agentcore.SendRequest{ThreadID: live.ID, Text: "a long one"})
	if err != nil {
		t.Fatal(err)
	}
	<-streaming
	time.Sleep(200 * time.Millisecond) // a streaming write or more has landed
	before := everything(t, in.Store)

	file := filepath.Join(t.TempDir(), "during.db")
	var out, errs bytes.Buffer
	if code := Main([]string{"backup", "--data", dir, "--to", file}, &out, &errs); code != 0 {
		t.Fatalf("backup while a reply streams: %d %s", code, errs.String())
	}
	letGo()
	if err := in.Runtime.Wait(t.Context(), live.ID); err != nil {
		t.Fatal(err)
	}

	fresh := t.TempDir()
	if code := Main([]string{"restore", "--data", fresh, file}, &out, &errs); code != 0 {
		t.Fatalf("restore into a fresh folder: %d %s", code, errs.String())
	}
	db, err := storage.Open(t.Context(), filepath.Join(fresh, "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after := everything(t, db)
	if len(after) != 3 || len(before) != 3 {
		t.Fatalf("%d threads restored, %d before", len(after), len(before))
	}
	for id, was := range before {
		th, ms := was.Thread, was.messages
		restored, ok := after[id]
		if !ok || !reflect.DeepEqual(restored.Thread, th) {
			t.Fatalf("thread %q (%s) is not restored as it was: %+v", th.Title, th.ID, restored.Thread)
		}
		got := restored.messages
		if len(got) != len(ms) {
			t.Fatalf("%q: %d messages restored, %d before", th.Title, len(got), len(ms))
		}
		for i, m := range ms {
			if m.ID == sent.MessageID {
				if m.Status != agentcore.StatusStreaming || got[i].Status != agentcore.StatusInterrupted ||
					!strings.HasPrefix(strings.Repeat("streaming on ", 200), got[i].Content.Text()) || got[i].Content.Text() == "" {
					t.Fatalf("the reply streaming at the backup: was %s, restored %s %q", m.Status, got[i].Status, got[i].Content.Text())
				}
				m.Status, m.Content = got[i].Status, got[i].Content
			}
			if !reflect.DeepEqual(got[i], m) {
				t.Fatalf("message %d of %q restored as\n%+v\nwas\n%+v", i, th.Title, got[i], m)
			}
		}
	}
}
