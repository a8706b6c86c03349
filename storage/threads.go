package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"parley/agentcore"
)

const threadCols = `id, resource_id, title, metadata, pinned, created_at, updated_at`

// CreateThread stores t, filling in an empty ID, ResourceID
// (DefaultResourceID) and timestamps, and creates its resource if needed.
func (db *DB) CreateThread(ctx context.Context, t agentcore.Thread) (agentcore.Thread, error) {
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = createThread(ctx, tx, t)
		return err
	})
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("create thread %s: %w", t.ID, err)
	}
	return t, nil
}

// createThread is CreateThread inside tx.
func createThread(ctx context.Context, tx *sql.Tx, t agentcore.Thread) (agentcore.Thread, error) {
	if t.ID == "" {
		t.ID = NewID()
	}
	if t.ResourceID == "" {
		t.ResourceID = DefaultResourceID
	}
	t.CreatedAt = orNow(t.CreatedAt)
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.UpdatedAt = orNow(t.UpdatedAt)
	meta, err := marshalMap(t.Metadata)
	if err != nil {
		return t, err
	}
	n := ms(now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO resources (id, created_at, updated_at)
		VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`, t.ResourceID, n, n); err != nil {
		return t, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO threads (`+threadCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ResourceID, t.Title, meta, t.Pinned, ms(t.CreatedAt), ms(t.UpdatedAt))
	return t, err
}

// GetThread returns the thread with id.
func (db *DB) GetThread(ctx context.Context, id string) (agentcore.Thread, error) {
	t, err := scanThread(db.reader.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE id = ? AND deleted_at IS NULL`, id))
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("get thread %s: %w", id, notFound(err))
	}
	return t, nil
}

// ListThreads returns threads pinned first, then by their last message
// activity (UpdatedAt), newest first.
func (db *DB) ListThreads(ctx context.Context, q agentcore.ThreadQuery) ([]agentcore.Thread, error) {
	query := `SELECT ` + threadCols + ` FROM threads WHERE deleted_at IS NULL`
	var args []any
	if q.ResourceID != "" {
		query += ` AND resource_id = ?`
		args = append(args, q.ResourceID)
	}
	query += ` ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ? OFFSET ?`
	args = append(args, sqlLimit(q.Limit), max(q.Offset, 0))
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer rows.Close()
	var out []agentcore.Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}

// UpdateThread applies the non-nil fields of p. UpdatedAt is left alone:
// it is the thread's last message activity (see AppendMessage), which a
// rename, a pin or a change of settings is not.
func (db *DB) UpdateThread(ctx context.Context, id string, p agentcore.ThreadPatch) (agentcore.Thread, error) {
	var title, pinned, meta any // nil leaves the column alone
	if p.Title != nil {
		title = *p.Title
	}
	if p.Pinned != nil {
		pinned = *p.Pinned
	}
	if p.Metadata != nil {
		var err error
		if meta, err = marshalMap(p.Metadata); err != nil {
			return agentcore.Thread{}, fmt.Errorf("update thread %s: %w", id, err)
		}
	}
	t, err := scanThread(db.writer.QueryRowContext(ctx, `UPDATE threads SET
			title = coalesce(?, title),
			pinned = coalesce(?, pinned),
			metadata = coalesce(?, metadata)
		WHERE id = ? AND deleted_at IS NULL RETURNING `+threadCols,
		title, pinned, meta, id))
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("update thread %s: %w", id, notFound(err))
	}
	return t, nil
}

// UpdateThreadMetadata changes a thread's metadata with fn in one write
// transaction: fn gets the stored map (never nil) and changes it in place;
// the map is written back only when fn returns nil. The single writer
// connection serialises these transactions, so two callers that each
// change their own keys never undo each other. UpdatedAt is left alone,
// as by UpdateThread.
func (db *DB) UpdateThreadMetadata(ctx context.Context, id string, fn func(meta map[string]any) error) (agentcore.Thread, error) {
	var t agentcore.Thread
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := scanThread(tx.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE id = ? AND deleted_at IS NULL`, id))
		if err != nil {
			return notFound(err)
		}
		meta := cur.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		if err := fn(meta); err != nil {
			return err
		}
		enc, err := marshalMap(meta)
		if err != nil {
			return err
		}
		t, err = scanThread(tx.QueryRowContext(ctx, `UPDATE threads SET metadata = ?
			WHERE id = ? RETURNING `+threadCols, enc, id))
		return err
	})
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("update thread %s metadata: %w", id, err)
	}
	return t, nil
}

// DeleteThread deletes the thread with its messages and runs.
func (db *DB) DeleteThread(ctx context.Context, id string) error {
	err := affected(db.writer.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, id))
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", id, err)
	}
	return nil
}

// TrashThread puts the thread in the trash at at: every read treats it as
// deleted (ErrNotFound), RestoreThread brings it back whole, PurgeTrash
// deletes it for good. ErrNotFound when there is no such thread or it is in the trash already.
func (db *DB) TrashThread(ctx context.Context, id string, at time.Time) error {
	err := affected(db.writer.ExecContext(ctx, `UPDATE threads SET deleted_at = ?
		WHERE id = ? AND deleted_at IS NULL`, ms(at), id))
	if err != nil {
		return fmt.Errorf("trash thread %s: %w", id, err)
	}
	return nil
}

// RestoreThread takes the thread out of the trash; ErrNotFound when it is
// not there (never trashed, or already purged).
func (db *DB) RestoreThread(ctx context.Context, id string) error {
	err := affected(db.writer.ExecContext(ctx, `UPDATE threads SET deleted_at = NULL
		WHERE id = ? AND deleted_at IS NOT NULL`, id))
	if err != nil {
		return fmt.Errorf("restore thread %s: %w", id, err)
	}
	return nil
}

// PurgeTrash deletes, with their messages and runs, the threads put in the
// trash before before, and returns how many.
func (db *DB) PurgeTrash(ctx context.Context, before time.Time) (int, error) {
	res, err := db.writer.ExecContext(ctx, `DELETE FROM threads WHERE deleted_at IS NOT NULL AND deleted_at < ?`, ms(before))
	if err != nil {
		return 0, fmt.Errorf("purge trash: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("purge trash: %w", err)
	}
	return int(n), nil
}

func scanThread(s scanner) (agentcore.Thread, error) {
	var t agentcore.Thread
	var meta []byte
	var created, updated int64
	if err := s.Scan(&t.ID, &t.ResourceID, &t.Title, &meta, &t.Pinned, &created, &updated); err != nil {
		return agentcore.Thread{}, err
	}
	if meta != nil {
		if err := json.Unmarshal(meta, &t.Metadata); err != nil {
			return agentcore.Thread{}, fmt.Errorf("thread %s metadata: %w", t.ID, err)
		}
	}
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return t, nil
}

// marshalMap stores a nil map as NULL, so it reads back nil.
func marshalMap(m map[string]any) (any, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return string(b), nil
}

// sqlLimit maps "0: no limit" to SQLite's -1.
func sqlLimit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
