package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"parley/agentcore"
)

const runCols = `id, thread_id, agent_id, model, status, error, usage, started_at, finished_at`

// CreateRun stores a new run of an existing thread. r.ID is required (the
// caller names the run before it starts); Status defaults to running and
// StartedAt to now.
func (db *DB) CreateRun(ctx context.Context, r agentcore.Run) error {
	if r.ID == "" {
		return fmt.Errorf("create run on thread %s: empty run id", r.ThreadID)
	}
	if r.Status == "" {
		r.Status = agentcore.RunRunning
	}
	usage, err := json.Marshal(r.Usage)
	if err != nil {
		return fmt.Errorf("create run %s: encode usage: %w", r.ID, err)
	}
	// Selecting from threads turns an unknown thread into zero rows
	// (ErrNotFound) rather than a foreign key error.
	err = affected(db.writer.ExecContext(ctx, `INSERT INTO runs (`+runCols+`)
		SELECT ?, id, ?, ?, ?, ?, ?, ?, ? FROM threads WHERE id = ?`,
		r.ID, r.AgentID, r.Model, r.Status, r.Error, string(usage), ms(orNow(r.StartedAt)),
		nullMS(r.FinishedAt), r.ThreadID))
	if err != nil {
		return fmt.Errorf("create run %s on thread %s: %w", r.ID, r.ThreadID, err)
	}
	return nil
}

// FinishRun writes the Status (default done), Error, Usage and FinishedAt
// (default now) of a run.
func (db *DB) FinishRun(ctx context.Context, r agentcore.Run) error {
	if r.Status == "" {
		r.Status = agentcore.RunDone
	}
	usage, err := json.Marshal(r.Usage)
	if err != nil {
		return fmt.Errorf("finish run %s: encode usage: %w", r.ID, err)
	}
	err = affected(db.writer.ExecContext(ctx,
		`UPDATE runs SET status = ?, error = ?, usage = ?, finished_at = ? WHERE id = ?`,
		r.Status, r.Error, string(usage), ms(orNow(r.FinishedAt)), r.ID))
	if err != nil {
		return fmt.Errorf("finish run %s: %w", r.ID, err)
	}
	return nil
}

// GetRun returns the run with id.
func (db *DB) GetRun(ctx context.Context, id string) (agentcore.Run, error) {
	var r agentcore.Run
	var usage []byte
	var started int64
	var finished sql.NullInt64
	err := db.reader.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id).Scan(
		&r.ID, &r.ThreadID, &r.AgentID, &r.Model, &r.Status, &r.Error, &usage, &started, &finished)
	err = notFound(err)
	if err == nil {
		err = json.Unmarshal(usage, &r.Usage)
	}
	if err != nil {
		return agentcore.Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	r.StartedAt = fromMS(started)
	if finished.Valid {
		r.FinishedAt = fromMS(finished.Int64)
	}
	return r, nil
}

// nullMS stores a zero time as NULL.
func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ms(t)
}

// ListRuns returns runs with one of the statuses, newest first; limit 0 is
// no limit.
func (db *DB) ListRuns(ctx context.Context, q agentcore.RunQuery) ([]agentcore.Run, error) {
	if len(q.Statuses) == 0 {
		return nil, nil
	}
	marks := strings.Repeat("?,", len(q.Statuses))
	args := make([]any, 0, len(q.Statuses)+1)
	for _, s := range q.Statuses {
		args = append(args, string(s))
	}
	args = append(args, sqlLimit(q.Limit))
	rows, err := db.reader.QueryContext(ctx, `SELECT `+runCols+` FROM runs
		WHERE status IN (`+marks[:len(marks)-1]+`) ORDER BY started_at DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []agentcore.Run
	for rows.Next() {
		var r agentcore.Run
		var usage []byte
		var started int64
		var finished sql.NullInt64
		if err := rows.Scan(&r.ID, &r.ThreadID, &r.AgentID, &r.Model, &r.Status, &r.Error, &usage, &started, &finished); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if err := json.Unmarshal(usage, &r.Usage); err != nil {
			return nil, fmt.Errorf("list runs: run %s usage: %w", r.ID, err)
		}
		r.StartedAt = fromMS(started)
		if finished.Valid {
			r.FinishedAt = fromMS(finished.Int64)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
