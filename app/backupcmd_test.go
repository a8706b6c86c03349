package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/storage"
)

func threadTitles(t *testing.T, dbPath string) []string {
	t.Helper()
	db, err := storage.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts, err := db.ListThreads(context.Background(), agentcore.ThreadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, th := range ts {
		out = append(out, th.Title)
	}
	return out
}

func addThread(t *testing.T, dbPath, title string) {
	t.Helper()
	db, err := storage.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	th, err := db.CreateThread(context.Background(), agentcore.Thread{ResourceID: "default", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessage(context.Background(), agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent("hi " + title)}); err != nil {
		t.Fatal(err)
	}
}

// A backup made with `parley backup` goes back with `parley restore`: the
// chats are those of the backup, and the database it replaced is kept.
func TestBackupAndRestore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "parley.db")
	addThread(t, db, "before")
	var out, errs bytes.Buffer
	if code := Main([]string{"backup", "--data", dir}, &out, &errs); code != 0 {
		t.Fatalf("backup: %d %s", code, errs.String())
	}
	backup := strings.TrimSpace(out.String())
	if filepath.Dir(backup) != filepath.Join(dir, "backups") {
		t.Fatalf("backup at %s", backup)
	}
	to := filepath.Join(t.TempDir(), "copy.db")
	if code := Main([]string{"backup", "--data", dir, "--to", to}, &out, &errs); code != 0 {
		t.Fatalf("backup --to: %d %s", code, errs.String())
	}
	addThread(t, db, "after")
	out.Reset()
	if code := Main([]string{"restore", "--data", dir, to}, &out, &errs); code != 0 {
		t.Fatalf("restore: %d %s", code, errs.String())
	}
	if got := threadTitles(t, db); len(got) != 1 || got[0] != "before" {
		t.Fatalf("after the restore: %v", got)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "backups", "*before-restore.db"))
	if len(kept) != 1 {
		t.Fatalf("the replaced database was not kept: %v (%s)", kept, out.String())
	}
	if got := threadTitles(t, kept[0]); len(got) != 2 {
		t.Fatalf("the kept database has %v", got)
	}
}

// Restore refuses while a Parley runs on the folder, and refuses a file
// that is not a whole Parley database; either way the database is left
// as it was.
func TestRestoreRefuses(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "parley.db")
	addThread(t, db, "mine")
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte("<html>not a database</html>"), 0o600)
	var out, errs bytes.Buffer
	if code := Main([]string{"restore", "--data", dir, junk}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "not restored") {
		t.Fatalf("junk: %d %s", code, errs.String())
	}
	lock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.write(lockRecord{PID: os.Getpid(), URL: "http://127.0.0.1:7777"}); err != nil {
		t.Fatal(err)
	}
	errs.Reset()
	backup := filepath.Join(t.TempDir(), "b.db")
	if err := storage.BackupFile(context.Background(), db, backup); err != nil {
		t.Fatalf("a backup while Parley runs: %v", err)
	}
	if code := Main([]string{"restore", "--data", dir, backup}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "quit it before restoring") {
		t.Fatalf("while running: %d %s", code, errs.String())
	}
	lock.release()
	if got := threadTitles(t, db); len(got) != 1 || got[0] != "mine" {
		t.Fatalf("the database changed: %v", got)
	}
}

// A running Parley backs the database up when the newest backup is a day
// old, and stops when it closes.
func TestDailyBackups(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.db")
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stop := dailyBackupsEvery(db, path, nil, 10*time.Millisecond, 10*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for storage.LatestBackup(path).IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no backup was made")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	n, _ := os.ReadDir(storage.BackupDir(path))
	time.Sleep(50 * time.Millisecond)
	if m, _ := os.ReadDir(storage.BackupDir(path)); len(m) != len(n) || len(n) != 1 {
		t.Fatalf("backups: %d then %d, want one: a fresh one is less than a day old", len(n), len(m))
	}
}
