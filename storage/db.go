// Package storage keeps Parley's resources, threads, messages and runs in one
// SQLite file and implements agentcore's store interfaces.
//
// Every write goes through a single connection, so SQLite never sees two
// writers from this process and never answers "database is locked"; reads use
// a separate pool of query-only connections, which WAL lets run beside the
// writer. Timestamps are stored as milliseconds and returned as UTC
// time.Time. Lookups of unknown ids return errors wrapping
// agentcore.ErrNotFound.
//
// A thread's messages are a tree with one active branch (tree.go, migrations
// 0012 and 0014): the reads that show the chat read the active branch, a
// narrow table beside the messages, so switching a branch writes no message
// row; usage sums and search cover every branch.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver

	"parley/agentcore"
)

const (
	// busyTimeout only matters when another process holds the file (a second
	// Parley, a sqlite3 shell); inside this process writes are serialised.
	busyTimeout = 10 * time.Second
	// readerConns is enough for the open UI streams plus a search: WAL readers
	// never wait for the writer, and each connection keeps its own page cache.
	readerConns = 4
	// dirPerm: chat history is private to the user.
	dirPerm = 0o700

	// DefaultResourceID owns threads created without a resource.
	DefaultResourceID = "default"
	// InterruptedRunError is the error of a run found running at start-up.
	InterruptedRunError = "interrupted: Parley stopped while this run was in progress"
)

// DB is Parley's SQLite store.
type DB struct {
	path      string
	writer    *sql.DB // exactly one connection: the only writer
	reader    *sql.DB // query_only connections
	recovered Recovery
}

var _ agentcore.Store = (*DB)(nil)

// Recovery is what Open repaired after an unclean stop.
type Recovery struct {
	Messages int // messages left streaming, now interrupted
	Runs     int // runs left running, now failed
	Queued   int // messages left queued, now kept as sent
}

// Open opens (creating it and its directory if needed) the database at path,
// applies pending migrations, and marks what a crash left in progress:
// streaming messages become interrupted, running runs fail with
// InterruptedRunError.
func Open(ctx context.Context, path string) (*DB, error) {
	if strings.Contains(path, "?") {
		// The driver would read everything after it as DSN parameters.
		return nil, fmt.Errorf("open database %q: path must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db := &DB{path: path}
	if err := db.open(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

func (db *DB) open(ctx context.Context) error {
	var err error
	if db.writer, err = sql.Open("sqlite", dsn(db.path, true)); err != nil {
		return err
	}
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	if err := migrate(ctx, db.writer); err != nil {
		return err
	}
	if db.recovered, err = recoverInterrupted(ctx, db.writer); err != nil {
		return err
	}
	// Chats deleted before the last shutdown go for good now: their Undo
	// belonged to that process, whose sweep did not outlive it.
	if _, err := db.PurgeTrash(ctx, now().Add(time.Millisecond)); err != nil {
		return err
	}
	if err := db.dropUnsentFiles(ctx); err != nil {
		return err
	}
	// Readers open after migrating, so none sees a half-made schema.
	if db.reader, err = sql.Open("sqlite", dsn(db.path, false)); err != nil {
		return err
	}
	db.reader.SetMaxOpenConns(readerConns)
	db.reader.SetMaxIdleConns(readerConns)
	return db.reader.PingContext(ctx)
}

// dsn is the driver's name for path. The writer begins transactions with
// BEGIN IMMEDIATE so a transaction that reads before it writes cannot fail
// to upgrade its lock; readers refuse to write.
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)") // WAL keeps NORMAL durable across crashes of Parley
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return path + "?" + q.Encode()
}

// recoverInterrupted marks what was in progress when Parley last stopped.
func recoverInterrupted(ctx context.Context, w *sql.DB) (Recovery, error) {
	var r Recovery
	err := inTx(ctx, w, func(tx *sql.Tx) error {
		// An interrupted reply is indexed as it was stored (index.go).
		pks, err := returnedPKs(tx.QueryContext(ctx, `UPDATE messages SET status = ?, `+usageSet(`content -> '$.metadata'`)+`
			WHERE status = ? RETURNING pk`, agentcore.StatusInterrupted, agentcore.StatusStreaming))
		if err == nil {
			err = indexStored(ctx, tx, pks)
		}
		if err != nil {
			return fmt.Errorf("mark streaming messages interrupted: %w", err)
		}
		r.Messages = len(pks)
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE status = ?`,
			agentcore.RunFailed, InterruptedRunError, ms(now()), agentcore.RunRunning)
		if err != nil {
			return fmt.Errorf("mark running runs failed: %w", err)
		}
		n, _ := res.RowsAffected()
		r.Runs = int(n)
		// A message that waited for a run that never read it stays in
		// the thread as sent: the next run reads it with the rest.
		res, err = tx.ExecContext(ctx, `UPDATE messages SET status = ? WHERE status = ?`,
			agentcore.StatusComplete, agentcore.StatusQueued)
		if err != nil {
			return fmt.Errorf("keep queued messages: %w", err)
		}
		n, _ = res.RowsAffected()
		r.Queued = int(n)
		return nil
	})
	return r, err
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Recovered reports what Open marked as interrupted.
func (db *DB) Recovered() Recovery { return db.recovered }

// Close closes both pools.
func (db *DB) Close() error {
	var errs []error
	for _, p := range []*sql.DB{db.reader, db.writer} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close database %s: %w", db.path, err)
	}
	return nil
}

// write runs fn in one transaction on the writer.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	return inTx(ctx, db.writer, fn)
}

func inTx(ctx context.Context, d *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return full(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return full(err)
	}
	return full(tx.Commit())
}

// sqliteFull is SQLITE_FULL, the primary result code of a write that found
// no room: the disk, or the database's max_page_count.
const sqliteFull = 13

// full wraps an error that says the disk is full with agentcore.ErrDiskFull,
// whichever way it came: SQLite's own result code or the system's ENOSPC.
func full(err error) error {
	if err == nil || errors.Is(err, agentcore.ErrDiskFull) {
		return err
	}
	var se *sqlite.Error
	if (errors.As(err, &se) && se.Code()&0xff == sqliteFull) || errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %w", agentcore.ErrDiskFull, err)
	}
	return err
}

// LimitPages caps the database file at its present size plus room more
// pages (SQLite's max_page_count, on the one writer connection, until the
// process ends or it is called again; room < 0 lifts the cap): writes past
// it fail as a full disk does. Tests fill the disk with it.
func (db *DB) LimitPages(ctx context.Context, room int) error {
	limit := int64(math.MaxUint32 - 1) // SQLite's default cap
	if room >= 0 {
		var n int64
		if err := db.writer.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n); err != nil {
			return fmt.Errorf("limit pages: %w", err)
		}
		limit = n + int64(room)
	}
	if _, err := db.writer.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, limit)); err != nil {
		return fmt.Errorf("limit pages: %w", err)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// notFound turns sql.ErrNoRows into agentcore.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return agentcore.ErrNotFound
	}
	return err
}

// affected returns agentcore.ErrNotFound when an exec touched no row.
func affected(res sql.Result, err error) error {
	if err != nil {
		return full(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return agentcore.ErrNotFound
	}
	return nil
}

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// orNow is t at millisecond precision in UTC, or now when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return fromMS(ms(t))
}
