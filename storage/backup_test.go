package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"parley/agentcore"
)

// A backup taken while a reply is being written is a whole database:
// it opens, passes SQLite's integrity check and holds every thread.
func TestBackupWhileWriting(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	th, err := db.CreateThread(ctx, agentcore.Thread{ResourceID: "r", Title: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: agentcore.TextContent("x"), Status: agentcore.StatusStreaming})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		text := ""
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			text += fmt.Sprintf("word%d ", i)
			_ = db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text), agentcore.StatusStreaming)
		}
	})
	var paths []string
	for range 3 {
		p, err := db.BackupNow(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	close(stop)
	wg.Wait()
	for _, p := range paths {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("backup %s: %v %v", p, info, err)
		}
		b, err := Open(ctx, p)
		if err != nil {
			t.Fatalf("open the backup: %v", err)
		}
		var ok string
		if err := b.writer.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity of %s: %q %v", p, ok, err)
		}
		if _, err := b.GetThread(ctx, th.ID); err != nil {
			t.Fatalf("the thread is not in the backup: %v", err)
		}
		b.Close()
	}
	if err := db.Backup(ctx, paths[0]); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a backup over an existing file: %v", err)
	}
}

// The backups folder keeps the newest KeepBackups.
func TestBackupsArePruned(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var last string
	for i := range KeepBackups + 3 {
		if last, err = db.BackupNow(ctx, fmt.Sprint("n", i)); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(BackupDir(path))
	if len(entries) != KeepBackups {
		t.Fatalf("%d backups kept, want %d", len(entries), KeepBackups)
	}
	if _, err := os.Stat(last); err != nil {
		t.Fatalf("the newest backup is gone: %v", err)
	}
	if LatestBackup(path).IsZero() {
		t.Fatal("no latest backup")
	}
}

// A database made by an older Parley is copied before a migration changes
// it; a new one is not.
func TestBackupBeforeMigrating(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	// The database as the previous release left it: every migration but
	// the last, and a chat.
	raw, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range all[:len(all)-1] {
		if _, err := raw.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 0)`, m.version); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	entries, _ := os.ReadDir(BackupDir(path))
	want := fmt.Sprintf("-before-migration-%d.db", all[len(all)-1].version)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), want) {
		t.Fatalf("backups %v, want one ending %s", entries, want)
	}
	old, err := sql.Open("sqlite", dsn(filepath.Join(BackupDir(path), entries[0].Name()), false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var n int
	if err := old.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(all)-1 {
		t.Fatalf("the backup has %d migrations (%v), want %d: it must be the database before migrating", n, err, len(all)-1)
	}

	// Opening again migrates nothing and copies nothing.
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if entries, _ := os.ReadDir(BackupDir(path)); len(entries) != 1 {
		t.Fatalf("%d backups after an open with nothing to migrate", len(entries))
	}
	fresh := filepath.Join(dir, "new", "parley.db")
	if db, err = Open(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(BackupDir(fresh)); err == nil {
		t.Fatal("a new database was backed up")
	}
}
