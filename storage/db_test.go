package storage

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"parley/agentcore"
)

// openAt opens the database at path and closes it when the test ends.
func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openTest(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "parley.db"))
}

func mustThread(t testing.TB, db *DB, th agentcore.Thread) agentcore.Thread {
	t.Helper()
	th, err := db.CreateThread(context.Background(), th)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func mustAppend(t testing.TB, db *DB, m agentcore.Message) agentcore.Message {
	t.Helper()
	m, err := db.AppendMessage(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "parley.db") // Open creates the directories
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}

	applied := func(db *DB) map[int]int64 {
		t.Helper()
		rows, err := db.reader.QueryContext(ctx, `SELECT version, applied_at FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[int]int64{}
		for rows.Next() {
			var v int
			var at int64
			if err := rows.Scan(&v, &at); err != nil {
				t.Fatal(err)
			}
			got[v] = at
		}
		return got
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	first := applied(db)
	if len(first) != len(all) {
		t.Fatalf("applied %d migrations, want %d", len(first), len(all))
	}
	for _, table := range []string{"resources", "threads", "messages", "runs", "messages_fts"} {
		var n int
		if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Errorf("table %s: %v", table, err)
		}
	}
	var mode string
	if err := db.reader.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openAt(t, path)
	if again := applied(db); len(again) != len(first) {
		t.Errorf("after reopen %d migrations recorded, want %d", len(again), len(first))
	} else {
		for v, at := range first {
			if again[v] != at {
				t.Errorf("migration %d re-applied (applied_at %d, then %d)", v, at, again[v])
			}
		}
	}
}

func TestReadersCannotWrite(t *testing.T) {
	db := openTest(t)
	_, err := db.reader.ExecContext(context.Background(),
		`INSERT INTO resources (id, created_at, updated_at) VALUES ('x', 0, 0)`)
	if err == nil {
		t.Fatal("insert through the reader pool succeeded; readers must be query_only")
	}
}

func TestInterruptedAtStartUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	th := mustThread(t, db, agentcore.Thread{})
	streaming := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Content: agentcore.TextContent("half a sen"), Status: agentcore.StatusStreaming, RunID: "run-1"})
	done := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("hi")})
	for _, r := range []agentcore.Run{
		{ID: "run-1", ThreadID: th.ID, AgentID: "a", Model: "m"},
		{ID: "run-2", ThreadID: th.ID, AgentID: "a", Model: "m", Status: agentcore.RunSuspended},
	} {
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.Recovered(); got != (Recovery{}) {
		t.Errorf("fresh database recovered %+v", got)
	}
	if err := db.Close(); err != nil { // as if Parley crashed mid-stream
		t.Fatal(err)
	}

	db = openAt(t, path)
	if got, want := db.Recovered(), (Recovery{Messages: 1, Runs: 1}); got != want {
		t.Errorf("Recovered() = %+v, want %+v", got, want)
	}
	for id, want := range map[string]agentcore.MessageStatus{
		streaming.ID: agentcore.StatusInterrupted,
		done.ID:      agentcore.StatusComplete,
	} {
		m, err := db.GetMessage(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != want {
			t.Errorf("message %s status %q, want %q", id, m.Status, want)
		}
		if id == streaming.ID && m.Content.Text() != "half a sen" {
			t.Errorf("interrupted message lost its text: %q", m.Content.Text())
		}
	}
	if got := search(t, db, "half"); !reflect.DeepEqual(got, []string{streaming.ID}) {
		t.Errorf("search half = %v; want the interrupted message indexed", got)
	}
	r, err := db.GetRun(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != agentcore.RunFailed || r.Error != InterruptedRunError || r.FinishedAt.IsZero() {
		t.Errorf("interrupted run = %+v, want failed with %q and a finish time", r, InterruptedRunError)
	}
	// A suspended run waits for the user across restarts.
	if r, err := db.GetRun(ctx, "run-2"); err != nil || r.Status != agentcore.RunSuspended {
		t.Errorf("suspended run = %+v, %v; want it left suspended", r, err)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	title := "x"
	tests := []struct {
		name string
		call func() error
	}{
		{"GetThread", func() error { _, err := db.GetThread(ctx, "nope"); return err }},
		{"UpdateThread", func() error {
			_, err := db.UpdateThread(ctx, "nope", agentcore.ThreadPatch{Title: &title})
			return err
		}},
		{"DeleteThread", func() error { return db.DeleteThread(ctx, "nope") }},
		{"AppendMessage", func() error {
			_, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: "nope", Role: agentcore.RoleUser})
			return err
		}},
		{"UpdateMessage", func() error {
			return db.UpdateMessage(ctx, "nope", agentcore.TextContent("x"), agentcore.StatusComplete)
		}},
		{"GetMessage", func() error { _, err := db.GetMessage(ctx, "nope"); return err }},
		{"CreateRun on unknown thread", func() error {
			return db.CreateRun(ctx, agentcore.Run{ID: "r", ThreadID: "nope"})
		}},
		{"FinishRun", func() error { return db.FinishRun(ctx, agentcore.Run{ID: "nope", ThreadID: th.ID}) }},
		{"GetRun", func() error { _, err := db.GetRun(ctx, "nope"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, agentcore.ErrNotFound) {
				t.Fatalf("err = %v, want one wrapping agentcore.ErrNotFound", err)
			}
		})
	}
}
