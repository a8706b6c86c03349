package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Backups are consistent copies of the database made with VACUUM INTO,
// which reads one snapshot of the file, so a backup taken while replies
// stream is whole. They go to the "backups" folder beside the database,
// named parley-<UTC time>[-<why>].db; the newest KeepBackups stay.

// KeepBackups is how many backups the backups folder keeps.
const KeepBackups = 7

// BackupDir is the backups folder of the database at dbPath.
func BackupDir(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), "backups") }

// Backup writes a consistent copy of the database to path, which must not
// exist yet.
func (db *DB) Backup(ctx context.Context, path string) error {
	return vacuumInto(ctx, db.writer, path)
}

// BackupNow writes a backup into the backups folder, why naming it (""
// for a routine one), keeps the newest KeepBackups, and returns its path.
func (db *DB) BackupNow(ctx context.Context, why string) (string, error) {
	return backupInto(ctx, db.writer, BackupDir(db.path), why)
}

func backupInto(ctx context.Context, w *sql.DB, dir, why string) (string, error) {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return "", fmt.Errorf("make the backups folder: %w", err)
	}
	name := "parley-" + now().UTC().Format("20060102-150405.000")
	if why != "" {
		name += "-" + why
	}
	path := filepath.Join(dir, name+".db")
	if err := vacuumInto(ctx, w, path); err != nil {
		return "", err
	}
	if err := prune(dir, KeepBackups); err != nil {
		return path, err
	}
	return path, nil
}

func vacuumInto(ctx context.Context, w *sql.DB, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("back up to %s: the file exists", path)
	}
	if _, err := w.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("back up to %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// prune removes all but the newest keep backups in dir (by name, which
// sorts by time).
func prune(dir string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list backups: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "parley-") && strings.HasSuffix(e.Name(), ".db") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var errs []error
	for _, n := range names[:max(0, len(names)-keep)] {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// LatestBackup is when the newest backup in the backups folder of dbPath
// was made (zero when there is none).
func LatestBackup(dbPath string) time.Time {
	entries, err := os.ReadDir(BackupDir(dbPath))
	if err != nil {
		return time.Time{}
	}
	var latest time.Time
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "parley-") && info.ModTime().After(latest) {
			latest = info.ModTime()
		}
	}
	return latest
}

// mainFile is the path of the database file w has open ("" in memory).
func mainFile(ctx context.Context, w *sql.DB) string {
	var seq int
	var name, file string
	if err := w.QueryRowContext(ctx, `SELECT seq, name, file FROM pragma_database_list WHERE name = 'main'`).Scan(&seq, &name, &file); err != nil {
		return ""
	}
	return file
}

// BackupFile writes a consistent copy of the database file at dbPath to
// dst through a read-only connection of its own: it is safe while a
// Parley has the file open, and it changes nothing in it (Open would mark
// that Parley's replies in progress as interrupted).
func BackupFile(ctx context.Context, dbPath, dst string) error {
	_, err := readOnly(dbPath, func(r *sql.DB) (string, error) {
		if err := os.MkdirAll(filepath.Dir(dst), dirPerm); err != nil {
			return "", fmt.Errorf("make the folder of %s: %w", dst, err)
		}
		return dst, vacuumInto(ctx, r, dst)
	})
	return err
}

// BackupFileNow is BackupFile into the backups folder, why naming it.
func BackupFileNow(ctx context.Context, dbPath, why string) (string, error) {
	return readOnly(dbPath, func(r *sql.DB) (string, error) { return backupInto(ctx, r, BackupDir(dbPath), why) })
}

// readOnly runs fn on a read-only connection of its own to the database
// at dbPath, which must exist.
func readOnly(dbPath string, fn func(*sql.DB) (string, error)) (string, error) {
	if _, err := os.Stat(dbPath); err != nil {
		return "", fmt.Errorf("no database to back up: %w", err)
	}
	r, err := sql.Open("sqlite", readOnlyDSN(dbPath))
	if err != nil {
		return "", fmt.Errorf("open %s: %w", dbPath, err)
	}
	defer r.Close()
	return fn(r)
}

// CheckBackup says whether path is a Parley database that SQLite finds
// whole, naming what is wrong when it is not.
func CheckBackup(ctx context.Context, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read the backup: %w", err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	r, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer r.Close()
	var ok string
	if err := r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil {
		return fmt.Errorf("%s is not a SQLite database: %w", path, err)
	}
	if ok != "ok" {
		return fmt.Errorf("%s is damaged: %s", path, ok)
	}
	var tables int
	if err := r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('schema_migrations', 'threads', 'messages')`).Scan(&tables); err != nil || tables != 3 {
		return fmt.Errorf("%s is not a Parley database (no threads and messages)", path)
	}
	all, err := migrations()
	if err != nil {
		return err
	}
	var newest int
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("read its schema version: %w", err)
	}
	if latest := all[len(all)-1].version; newest > latest {
		return fmt.Errorf("%s was made by a newer Parley (schema %d; this one knows %d)", path, newest, latest)
	}
	return nil
}

// readOnlyDSN opens path read-only (VACUUM INTO reads it; query_only
// would refuse to write even the copy).
func readOnlyDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
