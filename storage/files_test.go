package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/agentcore"
)

func fileCount(t testing.TB, db *DB) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), `SELECT count(*) FROM files`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A file is stored once however often it is added; it goes with the last
// message that uses it, whether that message is deleted alone, its chat is
// deleted or purged from the trash; a fork keeps it; one never sent goes
// at the next start once it is an hour old.
func TestFilesFollowTheirMessages(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/p.db"
	db := openAt(t, path)
	ref, err := db.PutFile(ctx, "image/png", []byte("png bytes"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.PutFile(ctx, "image/png", []byte("png bytes"))
	if err != nil || again != ref || len(ref) != 64 || fileCount(t, db) != 1 {
		t.Fatalf("the same bytes twice: %s, %s, %v, %d files", ref, again, err, fileCount(t, db))
	}
	f, err := db.GetFile(ctx, ref)
	if err != nil || string(f.Data) != "png bytes" || f.MediaType != "image/png" {
		t.Fatalf("GetFile = %+v, %v", f, err)
	}
	if _, err := db.GetFile(ctx, "nope"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("an unknown file: %v", err)
	}
	withFile := func(threadID string) agentcore.Message {
		m := say(threadID, agentcore.RoleUser, "look")
		m.Content.Parts = append(m.Content.Parts, agentcore.Part{Type: "file", Data: agentcore.FileURL(ref), MimeType: "image/png",
			Filename: "a.png", Size: 9})
		return mustAppend(t, db, m)
	}
	one, two := mustThread(t, db, agentcore.Thread{}), mustThread(t, db, agentcore.Thread{})
	m1 := withFile(one.ID)
	withFile(two.ID)
	if err := db.DeleteMessage(ctx, m1.ID); err != nil {
		t.Fatal(err)
	}
	if fileCount(t, db) != 1 {
		t.Fatal("the file went while another chat still uses it")
	}
	fork, err := db.ForkThread(ctx, two.ID, mustList(t, db, two.ID)[0].ID, agentcore.Thread{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteThread(ctx, two.ID); err != nil {
		t.Fatal(err)
	}
	if fileCount(t, db) != 1 {
		t.Fatal("the file went while the fork still uses it")
	}
	if err := db.TrashThread(ctx, fork.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeTrash(ctx, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := fileCount(t, db); n != 0 {
		t.Errorf("%d files after the last chat using it was purged", n)
	}

	// Never sent: kept for an hour, then dropped when Parley starts.
	if _, err := db.PutFile(ctx, "text/plain; charset=utf-8", []byte("draft")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path)
	if fileCount(t, db) != 1 {
		t.Fatal("a file added a moment ago went at the start")
	}
	if _, err := db.writer.ExecContext(ctx, `UPDATE files SET created_at = created_at - ?`, (2 * time.Hour).Milliseconds()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path)
	if n := fileCount(t, db); n != 0 {
		t.Errorf("%d files never sent and two hours old after a start", n)
	}
}
