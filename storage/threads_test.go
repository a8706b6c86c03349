package storage

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"parley/agentcore"
)

func TestCreateThreadDefaults(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	before := time.Now().Add(-time.Millisecond)
	th := mustThread(t, db, agentcore.Thread{Title: "hello"})
	if th.ID == "" || th.ResourceID != DefaultResourceID {
		t.Errorf("created %+v, want an id and resource %q", th, DefaultResourceID)
	}
	if th.CreatedAt.Before(before) || !th.UpdatedAt.Equal(th.CreatedAt) || th.CreatedAt.Location() != time.UTC {
		t.Errorf("timestamps %v / %v, want now in UTC and equal", th.CreatedAt, th.UpdatedAt)
	}
	got, err := db.GetThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, th) {
		t.Errorf("GetThread = %+v\nwant        %+v", got, th)
	}
	var n int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM resources WHERE id = ?`,
		DefaultResourceID).Scan(&n); err != nil || n != 1 {
		t.Errorf("default resource rows = %d, %v; want 1", n, err)
	}
	mustThread(t, db, agentcore.Thread{}) // the resource exists now; creating another is fine
	if _, err := db.CreateThread(ctx, agentcore.Thread{ID: th.ID}); err == nil {
		t.Error("creating a thread with an existing id succeeded")
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	meta := map[string]any{
		"s": "é ✓", "n": 1.5, "b": true, "null": nil,
		"list":   []any{"a", 2.0},
		"nested": map[string]any{"k": map[string]any{"deep": "yes"}},
	}
	th := mustThread(t, db, agentcore.Thread{ResourceID: "user-1", Title: "t", Metadata: meta})
	got, err := db.GetThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Metadata, meta) {
		t.Errorf("metadata = %#v\nwant       %#v", got.Metadata, meta)
	}

	plain := mustThread(t, db, agentcore.Thread{})
	if got, _ := db.GetThread(ctx, plain.ID); got.Metadata != nil {
		t.Errorf("nil metadata read back as %#v", got.Metadata)
	}

	c := agentcore.Content{
		Format: 2,
		Parts: []agentcore.Part{
			{Type: "step-start"},
			{Type: "reasoning", Text: "think"},
			{Type: "text", Text: "hello"},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
				State: "result", ToolCallID: "call_1", ToolName: "read",
				Args: []byte(`{"path":"a.go"}`), Result: []byte(`{"ok":true,"lines":[1,2]}`), Step: 1,
			}},
		},
		Content:  "hello",
		Metadata: map[string]any{"model": "openai/gpt"},
	}
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: c,
		RunID: "run-9"})
	gm, err := db.GetMessage(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gm, m) {
		t.Errorf("GetMessage = %+v\nwant         %+v", gm, m)
	}
	if gm.ResourceID != "user-1" {
		t.Errorf("message resource %q, want the thread's", gm.ResourceID)
	}
}

func TestListThreadsOrder(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	t1 := mustThread(t, db, agentcore.Thread{Title: "t1", CreatedAt: at(1000)})
	t2 := mustThread(t, db, agentcore.Thread{Title: "t2", CreatedAt: at(2000)})
	t3 := mustThread(t, db, agentcore.Thread{Title: "t3", CreatedAt: at(3000)})
	t4 := mustThread(t, db, agentcore.Thread{Title: "t4", ResourceID: "other", CreatedAt: at(500)})

	pinned := true
	if _, err := db.UpdateThread(ctx, t1.ID, agentcore.ThreadPatch{Pinned: &pinned}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, agentcore.Message{ThreadID: t2.ID, Role: agentcore.RoleUser}) // t2 is now the most recent

	tests := []struct {
		name string
		q    agentcore.ThreadQuery
		want []agentcore.Thread
	}{
		{"all", agentcore.ThreadQuery{}, []agentcore.Thread{t1, t2, t3, t4}},
		{"limit", agentcore.ThreadQuery{Limit: 2}, []agentcore.Thread{t1, t2}},
		{"offset", agentcore.ThreadQuery{Limit: 2, Offset: 1}, []agentcore.Thread{t2, t3}},
		{"offset past end", agentcore.ThreadQuery{Offset: 10}, nil},
		{"resource", agentcore.ThreadQuery{ResourceID: "other"}, []agentcore.Thread{t4}},
		{"default resource", agentcore.ThreadQuery{ResourceID: DefaultResourceID, Offset: 2},
			[]agentcore.Thread{t3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListThreads(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var titles, want []string
			for _, th := range got {
				titles = append(titles, th.Title)
			}
			for _, th := range tt.want {
				want = append(want, th.Title)
			}
			if !reflect.DeepEqual(titles, want) {
				t.Errorf("got %v, want %v", titles, want)
			}
		})
	}
}

func TestUpdateThread(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{Title: "old", Metadata: map[string]any{"a": "1"},
		CreatedAt: time.UnixMilli(1000)})
	title, pinned := "new", true

	got, err := db.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new" || got.Pinned || got.Metadata["a"] != "1" || !got.UpdatedAt.Equal(th.UpdatedAt) ||
		!got.CreatedAt.Equal(th.CreatedAt) {
		t.Errorf("after title patch: %+v", got)
	}

	got, err = db.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{Pinned: &pinned,
		Metadata: map[string]any{"b": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new" || !got.Pinned || !reflect.DeepEqual(got.Metadata, map[string]any{"b": "2"}) {
		t.Errorf("after pin+metadata patch: %+v", got)
	}

	pinned = false
	got, err = db.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{Pinned: &pinned})
	if err != nil {
		t.Fatal(err)
	}
	if got.Pinned {
		t.Error("unpin did not stick")
	}
	if read, _ := db.GetThread(ctx, th.ID); !reflect.DeepEqual(read, got) {
		t.Errorf("GetThread = %+v, UpdateThread returned %+v", read, got)
	}
}

func TestDeleteThreadCascades(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	keep := mustThread(t, db, agentcore.Thread{})
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("cascade me")})
	kept := mustAppend(t, db, agentcore.Message{ThreadID: keep.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("keep me")})
	if err := db.CreateRun(ctx, agentcore.Run{ID: "r1", ThreadID: th.ID}); err != nil {
		t.Fatal(err)
	}

	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetThread(ctx, th.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("GetThread after delete: %v", err)
	}
	if _, err := db.GetMessage(ctx, m.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("GetMessage after delete: %v", err)
	}
	if _, err := db.GetRun(ctx, "r1"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("GetRun after delete: %v", err)
	}
	if got := search(t, db, "cascade"); len(got) != 0 {
		t.Errorf("search finds deleted message: %v", got)
	}
	if got := search(t, db, "keep"); !reflect.DeepEqual(got, []string{kept.ID}) {
		t.Errorf("search keep = %v, want the other thread's message", got)
	}
	if err := db.DeleteThread(ctx, th.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func mustTime(ms int64) time.Time { return time.UnixMilli(ms) }

// A thread's place and time are its last message activity: renaming,
// pinning and unpinning, and changing its metadata keep both; a message
// moves it to the top.
func TestEditsKeepThreadOrder(t *testing.T) {
	ctx := t.Context()
	db := openTest(t)
	at := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
	old := mustThread(t, db, agentcore.Thread{Title: "old", CreatedAt: at(1000)})
	newer := mustThread(t, db, agentcore.Thread{Title: "newer", CreatedAt: at(2000)})
	order := func() []string {
		t.Helper()
		ts, err := db.ListThreads(ctx, agentcore.ThreadQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, th := range ts {
			out = append(out, th.Title)
		}
		return out
	}

	title, on, off := "renamed", true, false
	edits := []struct {
		name string
		do   func() (agentcore.Thread, error)
	}{
		{"rename", func() (agentcore.Thread, error) {
			return db.UpdateThread(ctx, old.ID, agentcore.ThreadPatch{Title: &title})
		}},
		{"pin", func() (agentcore.Thread, error) {
			return db.UpdateThread(ctx, old.ID, agentcore.ThreadPatch{Pinned: &on})
		}},
		{"unpin", func() (agentcore.Thread, error) {
			return db.UpdateThread(ctx, old.ID, agentcore.ThreadPatch{Pinned: &off})
		}},
		{"metadata", func() (agentcore.Thread, error) {
			return db.UpdateThread(ctx, old.ID, agentcore.ThreadPatch{Metadata: map[string]any{"mode": "plan"}})
		}},
		{"a setting", func() (agentcore.Thread, error) {
			return db.UpdateThreadMetadata(ctx, old.ID, func(md map[string]any) error { md["yolo"] = true; return nil })
		}},
	}
	for _, e := range edits {
		got, err := e.do()
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if !got.UpdatedAt.Equal(at(1000)) {
			t.Errorf("%s moved UpdatedAt to %v", e.name, got.UpdatedAt)
		}
		want := []string{"newer", "renamed"}
		if got.Pinned {
			want = []string{"renamed", "newer"} // pinned chats come first
		}
		if order := order(); !reflect.DeepEqual(order, want) {
			t.Errorf("after %s the order is %v, want %v", e.name, order, want)
		}
	}
	if read, _ := db.GetThread(ctx, old.ID); !read.UpdatedAt.Equal(at(1000)) {
		t.Errorf("stored UpdatedAt %v, want %v", read.UpdatedAt, at(1000))
	}

	mustAppend(t, db, agentcore.Message{ThreadID: old.ID, Role: agentcore.RoleUser})
	if got := order(); !reflect.DeepEqual(got, []string{"renamed", "newer"}) {
		t.Errorf("after a message the order is %v, want the thread first", got)
	}
	if read, _ := db.GetThread(ctx, newer.ID); !read.UpdatedAt.Equal(at(2000)) {
		t.Errorf("the other thread's UpdatedAt moved to %v", read.UpdatedAt)
	}
}
