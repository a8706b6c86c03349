package storage

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/hostile"
)

func importSample(id string, texts ...string) agentcore.ThreadImport {
	created := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	imp := agentcore.ThreadImport{Thread: agentcore.Thread{ID: id, Title: "Imported " + id,
		Metadata: map[string]any{"mode": "plan"}, CreatedAt: created, UpdatedAt: created.Add(time.Hour)}}
	for i, text := range texts {
		role := agentcore.RoleUser
		if i%2 == 1 {
			role = agentcore.RoleAssistant
		}
		imp.Messages = append(imp.Messages, agentcore.Message{ID: id + "-m" + string(rune('a'+i)), Role: role,
			Content: agentcore.TextContent(text), CreatedAt: created.Add(time.Duration(i) * time.Minute)})
	}
	return imp
}

func count(t *testing.T, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An import stores threads and messages as the file has them: ids,
// titles, metadata, timestamps, order; and the messages are searchable.
func TestImportThreadsKeepsFreeIDs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	in := []agentcore.ThreadImport{importSample("t1", "hello zebra", "hi there"), importSample("t2", "second")}
	got, err := db.ImportThreads(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "t1" || got[1].ID != "t2" {
		t.Fatalf("stored %+v", got)
	}
	th, err := db.GetThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := in[0].Thread
	want.ResourceID = DefaultResourceID
	if !reflect.DeepEqual(th, want) {
		t.Fatalf("thread\n got %+v\nwant %+v", th, want)
	}
	msgs, err := db.ListMessages(ctx, "t1", agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		w := in[0].Messages[i]
		if m.ID != w.ID || m.Seq != int64(i+1) || m.Role != w.Role || m.Content.Text() != w.Content.Text() ||
			!m.CreatedAt.Equal(w.CreatedAt) || m.Status != agentcore.StatusComplete || m.ThreadID != "t1" {
			t.Errorf("message %d: %+v, want %+v", i, m, w)
		}
	}
	if ids := search(t, db, "zebra"); len(ids) != 1 || ids[0] != "t1-ma" {
		t.Fatalf("imported text not searchable: %v", ids)
	}
}

// The same file imported twice makes a second thread with new ids, thread
// and messages alike; nothing of the first is touched.
func TestImportThreadsTwiceGetsNewIDs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	in := []agentcore.ThreadImport{importSample("t1", "a", "b", "c")}
	if _, err := db.ImportThreads(ctx, in); err != nil {
		t.Fatal(err)
	}
	again, err := db.ImportThreads(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].ID == "t1" || again[0].ID == "" {
		t.Fatalf("second import kept id %q", again[0].ID)
	}
	msgs, _ := db.ListMessages(ctx, again[0].ID, agentcore.MessageQuery{})
	if len(msgs) != 3 {
		t.Fatalf("%d messages in the copy", len(msgs))
	}
	for _, m := range msgs {
		if strings.HasPrefix(m.ID, "t1-") {
			t.Fatalf("copy reuses message id %s", m.ID)
		}
	}
	orig, _ := db.ListMessages(ctx, "t1", agentcore.MessageQuery{})
	if len(orig) != 3 || orig[0].ID != "t1-ma" {
		t.Fatalf("original changed: %+v", orig)
	}

	// A message id already used elsewhere renews the whole thread's ids.
	clash := importSample("t9", "x")
	clash.Messages[0].ID = "t1-mb"
	got, err := db.ImportThreads(ctx, []agentcore.ThreadImport{clash})
	if err != nil || got[0].ID == "t9" {
		t.Fatalf("clash import: %+v, %v", got, err)
	}
}

// Anything wrong anywhere stores nothing at all: not the threads before the
// bad one, not the bad thread's earlier messages.
func TestImportThreadsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	bad := importSample("t2", "fine", "also fine", "broken")
	bad.Messages[2].Role = ""
	_, err := db.ImportThreads(ctx, []agentcore.ThreadImport{importSample("t1", "ok"), bad})
	if err == nil || !strings.Contains(err.Error(), "message 3: no role") || !strings.Contains(err.Error(), "thread 2") {
		t.Fatalf("err = %v", err)
	}
	for _, table := range []string{"threads", "messages", "messages_fts"} {
		if n := count(t, db, table); n != 0 {
			t.Errorf("%s has %d rows after a failed import", table, n)
		}
	}
	// A cancelled import stores nothing either.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.ImportThreads(cctx, []agentcore.ThreadImport{importSample("t3", "x")}); err == nil {
		t.Fatal("cancelled import succeeded")
	}
	if n := count(t, db, "threads"); n != 0 {
		t.Fatalf("%d threads after a cancelled import", n)
	}
}

// A reply still streaming in the file has no run here: it is stored
// interrupted, with its usage metadata as it was.
func TestImportThreadsStatuses(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	imp := importSample("t1", "q", "half an answer")
	imp.Messages[1].Status = agentcore.StatusStreaming
	imp.Messages[1].RunID = "run-elsewhere"
	imp.Messages[1].Content.Metadata = map[string]any{"usage": map[string]any{"inputTokens": 5}}
	if _, err := db.ImportThreads(ctx, []agentcore.ThreadImport{imp}); err != nil {
		t.Fatal(err)
	}
	m, err := db.GetMessage(ctx, "t1-mb")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != agentcore.StatusInterrupted || m.RunID != "" {
		t.Fatalf("status %s, run %q", m.Status, m.RunID)
	}
	raw, _ := json.Marshal(m.Content.Metadata)
	if string(raw) != `{"usage":{"inputTokens":5}}` {
		t.Fatalf("metadata %s", raw)
	}
}

// hostileIDs are ids an attacker would put in a shared file: each breaks
// out of a JavaScript string, an HTML attribute, a script element or a URL
// path if used unescaped.
var hostileIDs = hostile.IDs()

// A file whose thread, message and tool call ids Parley would not accept
// from its API is stored with new ones, each valid; the messages are the
// thread's, and a tool call keeps one id across its parts.
func TestImportThreadsReplacesInvalidIDs(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for i, bad := range hostileIDs {
		good := "ok" + strconv.Itoa(i)
		imp := importSample(good, "question", "answer")
		imp.Thread.ID = bad
		imp.Messages[0].ID = bad + "m"
		imp.Messages[0].ThreadID = bad
		imp.Messages[1].ThreadID = bad
		imp.Messages[1].Content.Parts = append(imp.Messages[1].Content.Parts,
			agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: bad, ToolName: "view", Args: json.RawMessage(`{}`), Result: json.RawMessage(`"x"`)}},
			agentcore.Part{Type: "step-start"},
			agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "suspended", ToolCallID: bad, ToolName: "ask_user", Args: json.RawMessage(`{}`)}})
		got, err := db.ImportThreads(ctx, []agentcore.ThreadImport{imp})
		if err != nil {
			t.Fatalf("id %d: %v", i, err)
		}
		id := got[0].ID
		if !agentcore.ValidID(id) {
			t.Fatalf("id %d: the thread was stored as %.40q", i, id)
		}
		msgs, err := db.ListMessages(ctx, id, agentcore.MessageQuery{})
		if err != nil || len(msgs) != 2 {
			t.Fatalf("id %d: thread %s has %d messages (%v), want 2", i, id, len(msgs), err)
		}
		if msgs[1].ID != good+"-mb" {
			t.Errorf("id %d: the valid message id became %q", i, msgs[1].ID)
		}
		for _, m := range msgs {
			if !agentcore.ValidID(m.ID) || m.ThreadID != id {
				t.Fatalf("id %d: message %.40q of thread %.40q, want a valid id of thread %s", i, m.ID, m.ThreadID, id)
			}
		}
		parts := msgs[1].Content.Parts
		a, b := parts[len(parts)-3].ToolInvocation, parts[len(parts)-1].ToolInvocation
		if !agentcore.ValidID(a.ToolCallID) || a.ToolCallID != b.ToolCallID {
			t.Fatalf("id %d: the tool call was stored as %.40q and %.40q, want one valid id", i, a.ToolCallID, b.ToolCallID)
		}
		if imp.Thread.ID != bad || imp.Messages[0].ID != bad+"m" {
			t.Fatalf("id %d: ImportThreads changed the caller's import", i)
		}
	}
	var n int
	if err := db.reader.QueryRow(`SELECT count(*) FROM messages WHERE id GLOB '*[^A-Za-z0-9_-]*' OR thread_id GLOB '*[^A-Za-z0-9_-]*'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d stored messages with an invalid id (%v)", n, err)
	}
}
