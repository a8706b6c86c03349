package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
