package storage

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"parley/agentcore"
)

func mustGetState(t *testing.T, db *DB, threadID, typ string) (string, bool) {
	t.Helper()
	v, ok, err := db.GetState(context.Background(), threadID, typ)
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func TestStateRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	other := mustThread(t, db, agentcore.Thread{})

	if v, ok := mustGetState(t, db, th.ID, "task"); ok || v != "" {
		t.Errorf("missing state = %q, %v; want \"\", false", v, ok)
	}
	if _, ok := mustGetState(t, db, "no-such-thread", "task"); ok {
		t.Error("state of an unknown thread reported ok")
	}

	tasks := `[{"id":"task_a","content":"Do é ✓ 𝄞","status":"pending","activeForm":"Doing"}]`
	if err := db.SetState(ctx, th.ID, "task", json.RawMessage(tasks)); err != nil {
		t.Fatal(err)
	}
	if v, ok := mustGetState(t, db, th.ID, "task"); !ok || v != tasks {
		t.Errorf("GetState = %q, %v; want %q, true", v, ok, tasks)
	}
	// Keys are (thread, type): neither another type nor another thread sees it.
	if _, ok := mustGetState(t, db, th.ID, "task-signals"); ok {
		t.Error("another type of the same thread reported ok")
	}
	if _, ok := mustGetState(t, db, other.ID, "task"); ok {
		t.Error("the same type of another thread reported ok")
	}
}

func TestStateUpsert(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	if err := db.SetState(ctx, th.ID, "task", json.RawMessage(`[1]`)); err != nil {
		t.Fatal(err)
	}
	var created, updated int64
	if err := db.reader.QueryRowContext(ctx, `SELECT created_at, updated_at FROM thread_state WHERE thread_id = ?`,
		th.ID).Scan(&created, &updated); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // timestamps are milliseconds
	if err := db.SetState(ctx, th.ID, "task", json.RawMessage(`[2]`)); err != nil {
		t.Fatal(err)
	}
	if v, _ := mustGetState(t, db, th.ID, "task"); v != `[2]` {
		t.Errorf("after upsert GetState = %q, want [2]", v)
	}
	var n int
	var created2, updated2 int64
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*), min(created_at), max(updated_at) FROM thread_state WHERE thread_id = ?`,
		th.ID).Scan(&n, &created2, &updated2); err != nil {
		t.Fatal(err)
	}
	if n != 1 || created2 != created || updated2 <= updated {
		t.Errorf("after upsert: %d rows, created %d→%d, updated %d→%d; want 1 row, created kept, updated later",
			n, created, created2, updated, updated2)
	}
	// State changes are not conversation activity: the thread list order stays.
	if got, _ := db.GetThread(ctx, th.ID); !got.UpdatedAt.Equal(th.UpdatedAt) {
		t.Errorf("thread UpdatedAt moved from %v to %v", th.UpdatedAt, got.UpdatedAt)
	}
}

func TestStateCascadesOnThreadDelete(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	kept := mustThread(t, db, agentcore.Thread{})
	for _, id := range []string{th.ID, kept.ID} {
		for _, typ := range []string{"task", "task-signals"} {
			if err := db.SetState(ctx, id, typ, json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM thread_state WHERE thread_id = ?`,
		th.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("state rows of the deleted thread = %d, %v; want 0", n, err)
	}
	if _, ok := mustGetState(t, db, kept.ID, "task-signals"); !ok {
		t.Error("deleting one thread removed another thread's state")
	}
}

func TestSetStateRefuses(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	if err := db.SetState(ctx, "no-such-thread", "task", json.RawMessage(`[]`)); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("SetState on an unknown thread = %v, want ErrNotFound", err)
	}
	if err := db.SetState(ctx, th.ID, "task", json.RawMessage(`{not json`)); err == nil {
		t.Error("SetState stored a value that is not JSON")
	}
	if _, ok := mustGetState(t, db, th.ID, "task"); ok {
		t.Error("a refused value was stored")
	}
}
