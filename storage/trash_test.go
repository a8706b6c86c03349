package storage

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"parley/agentcore"
)

// A trashed thread reads as deleted everywhere, comes back whole, and is
// deleted for good by the sweep, or when the store is next opened.
func TestTrashThread(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "parley.db")
	db := openAt(t, path)
	th := mustThread(t, db, agentcore.Thread{Title: "Zebra notes"})
	mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent("striped horses")})
	gone := func(want bool) {
		t.Helper()
		_, err := db.GetThread(ctx, th.ID)
		list, _ := db.ListThreads(ctx, agentcore.ThreadQuery{})
		hits, _ := db.Search(ctx, agentcore.SearchQuery{Text: "zebra"})
		hits2, _ := db.Search(ctx, agentcore.SearchQuery{Text: "striped"})
		_, uerr := db.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{})
		got := [5]bool{errors.Is(err, agentcore.ErrNotFound), len(list) == 0, len(hits) == 0, len(hits2) == 0, errors.Is(uerr, agentcore.ErrNotFound)}
		if got != [5]bool{want, want, want, want, want} {
			t.Fatalf("get, list, search title, search text, update read as gone: %v, want all %v", got, want)
		}
	}
	gone(false)
	at := time.Now()
	if err := db.TrashThread(ctx, th.ID, at); err != nil {
		t.Fatal(err)
	}
	gone(true)
	if err := db.TrashThread(ctx, th.ID, at); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("trashing twice: %v", err)
	}
	if n, err := db.PurgeTrash(ctx, at.Add(-time.Second)); n != 0 || err != nil {
		t.Fatalf("purging what was trashed later: %d, %v", n, err)
	}
	if err := db.RestoreThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	gone(false)
	if ms, _ := db.ListMessages(ctx, th.ID, agentcore.MessageQuery{}); len(ms) != 1 {
		t.Fatalf("restored with %d messages, want 1", len(ms))
	}
	if err := db.RestoreThread(ctx, th.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("restoring a thread not in the trash: %v", err)
	}

	// The sweep.
	if err := db.TrashThread(ctx, th.ID, at); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PurgeTrash(ctx, at.Add(time.Second)); n != 1 || err != nil {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if ms, _ := db.ListMessages(ctx, th.ID, agentcore.MessageQuery{}); len(ms) != 0 {
		t.Fatalf("%d messages left after the purge", len(ms))
	}
	if err := db.RestoreThread(ctx, th.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("restoring a purged thread: %v", err)
	}

	// Opening the store again purges what is in the trash.
	other := mustThread(t, db, agentcore.Thread{})
	if err := db.TrashThread(ctx, other.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path)
	if err := db.RestoreThread(ctx, other.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("a thread trashed before the store was closed is still restorable: %v", err)
	}
}
