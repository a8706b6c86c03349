package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// GetState returns the value of type typ kept for the thread; ok is false
// when there is none, also when the thread does not exist.
func (db *DB) GetState(ctx context.Context, threadID, typ string) (json.RawMessage, bool, error) {
	var s string
	err := db.reader.QueryRowContext(ctx, `SELECT value FROM thread_state WHERE thread_id = ? AND type = ?`,
		threadID, typ).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get %s state of thread %s: %w", typ, threadID, err)
	}
	return json.RawMessage(s), true, nil
}

// SetState stores value as the thread's state of type typ, replacing any
// earlier value. value must be JSON; an unknown thread is
// agentcore.ErrNotFound. The thread's UpdatedAt is left alone: state changes
// (a task ticked off) are not conversation activity and must not reorder the
// thread list.
func (db *DB) SetState(ctx context.Context, threadID, typ string, value json.RawMessage) error {
	if !json.Valid(value) {
		return fmt.Errorf("set %s state of thread %s: value is not JSON", typ, threadID)
	}
	n := ms(now())
	// Selecting from threads turns an unknown thread into zero rows
	// (ErrNotFound) rather than a foreign key error. The WHERE clause also
	// keeps SQLite from reading ON CONFLICT as a join constraint.
	err := affected(db.writer.ExecContext(ctx, `INSERT INTO thread_state (thread_id, type, value, created_at, updated_at)
		SELECT id, ?, ?, ?, ? FROM threads WHERE id = ?
		ON CONFLICT (thread_id, type) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		typ, string(value), n, n, threadID))
	if err != nil {
		return fmt.Errorf("set %s state of thread %s: %w", typ, threadID, err)
	}
	return nil
}
