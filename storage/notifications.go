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

var _ agentcore.NotificationStore = (*DB)(nil)

// dueBatch is how many due records one DueNotifications call returns when
// the caller sets no limit: Mastra's dispatchDueNotifications default.
const dueBatch = 100

// notificationColumns are the notifications table's columns; the key
// (thread_id, id) comes first.
var notificationColumns = []string{"thread_id", "id", "source", "kind", "priority", "status", "summary", "payload",
	"resource_id", "agent_id", "source_id", "dedupe_key", "coalesce_key", "coalesced_count", "attributes",
	"created_at", "updated_at", "delivered_at", "seen_at", "dismissed_at", "archived_at", "discarded_at",
	"deliver_at", "summary_at", "delivery_reason", "delivery_attempts", "last_delivery_attempt_at",
	"last_delivery_error", "delivered_signal_id", "summary_signal_id", "metadata", "snoozed_until"}

var notificationCols = strings.Join(notificationColumns, ", ")

// saveNotificationSQL replaces every column but the key; a NULL created_at
// keeps the stored one.
var saveNotificationSQL = func() string {
	set := make([]string, 0, len(notificationColumns)-2)
	for _, c := range notificationColumns[2:] {
		if c == "created_at" {
			set = append(set, "created_at = coalesce(?, created_at)")
		} else {
			set = append(set, c+" = ?")
		}
	}
	return `UPDATE notifications SET ` + strings.Join(set, ", ") + ` WHERE thread_id = ? AND id = ?`
}()

// dueAt is the earlier of a record's non-null deliver_at and summary_at
// (NULL when both are): SQLite's two-argument min() is NULL when either is.
const dueAt = `min(coalesce(deliver_at, summary_at), coalesce(summary_at, deliver_at))`

// CreateNotification stores n as a new record of its thread. ID, CreatedAt
// and UpdatedAt (CreatedAt's value) are filled in when empty, Status
// defaults to pending, Priority to medium and CoalescedCount to 1. An
// unknown thread is agentcore.ErrNotFound.
func (db *DB) CreateNotification(ctx context.Context, n agentcore.Notification) (agentcore.Notification, error) {
	if n.ID == "" {
		n.ID = NewID()
	}
	n.CreatedAt = orNow(n.CreatedAt)
	if n.UpdatedAt.IsZero() {
		n.UpdatedAt = n.CreatedAt
	}
	n.UpdatedAt = orNow(n.UpdatedAt)
	if n.Status == "" {
		n.Status = agentcore.NotePending
	}
	if n.Priority == "" {
		n.Priority = agentcore.PriorityMedium
	}
	if n.CoalescedCount == 0 {
		n.CoalescedCount = 1
	}
	truncateTimes(&n)
	args, err := notificationArgs(n)
	if err != nil {
		return agentcore.Notification{}, fmt.Errorf("create notification %s on thread %s: %w", n.ID, n.ThreadID, err)
	}
	// Selecting from threads turns an unknown thread into zero rows
	// (ErrNotFound) rather than a foreign key error.
	err = db.write(ctx, func(tx *sql.Tx) error {
		return affected(tx.ExecContext(ctx, `INSERT INTO notifications (`+notificationCols+`)
			SELECT t.id, `+placeholders(len(args)-1)+` FROM threads AS t WHERE t.id = ?`,
			append(args[1:], n.ThreadID)...))
	})
	if err != nil {
		if agentcore.IsNotFound(err) {
			return agentcore.Notification{}, fmt.Errorf("create notification %s: thread %s: %w", n.ID, n.ThreadID, err)
		}
		return agentcore.Notification{}, fmt.Errorf("create notification %s on thread %s: %w", n.ID, n.ThreadID, err)
	}
	return n, nil
}

// GetNotification returns the record id of the thread.
func (db *DB) GetNotification(ctx context.Context, threadID, id string) (agentcore.Notification, error) {
	n, err := scanNotification(db.reader.QueryRowContext(ctx, `SELECT `+notificationCols+`
		FROM notifications WHERE thread_id = ? AND id = ?`, threadID, id))
	if err != nil {
		if err = notFound(err); agentcore.IsNotFound(err) {
			return agentcore.Notification{}, notificationNotFound(threadID, id)
		}
		return agentcore.Notification{}, fmt.Errorf("get notification %s of thread %s: %w", id, threadID, err)
	}
	return n, nil
}

// SaveNotification replaces every field of the existing record (ThreadID,
// ID). A zero CreatedAt keeps the stored one; a zero UpdatedAt is now.
func (db *DB) SaveNotification(ctx context.Context, n agentcore.Notification) error {
	if n.UpdatedAt.IsZero() {
		n.UpdatedAt = now()
	}
	truncateTimes(&n)
	args, err := notificationArgs(n)
	if err != nil {
		return fmt.Errorf("save notification %s of thread %s: %w", n.ID, n.ThreadID, err)
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		return affected(tx.ExecContext(ctx, saveNotificationSQL, append(args[2:], n.ThreadID, n.ID)...))
	})
	if agentcore.IsNotFound(err) {
		return notificationNotFound(n.ThreadID, n.ID)
	}
	if err != nil {
		return fmt.Errorf("save notification %s of thread %s: %w", n.ID, n.ThreadID, err)
	}
	return nil
}

// FindCoalescable returns the newest pending record of n's thread with n's
// source, kind, agent and resource (an empty one matching only empty) and
// n's DedupeKey when that is set, else n's CoalesceKey. A record with
// neither key coalesces with nothing.
func (db *DB) FindCoalescable(ctx context.Context, n agentcore.Notification) (agentcore.Notification, bool, error) {
	keyCol, key := "dedupe_key", n.DedupeKey
	if key == "" {
		keyCol, key = "coalesce_key", n.CoalesceKey
	}
	if key == "" {
		return agentcore.Notification{}, false, nil
	}
	// IS compares NULL with NULL as equal, and a value like =.
	found, err := scanNotification(db.reader.QueryRowContext(ctx, `SELECT `+notificationCols+`
		FROM notifications
		WHERE thread_id = ? AND source = ? AND kind = ? AND status = ?
			AND agent_id IS ? AND resource_id IS ? AND `+keyCol+` = ?
		ORDER BY updated_at DESC, id LIMIT 1`,
		n.ThreadID, n.Source, n.Kind, agentcore.NotePending, nullString(n.AgentID), nullString(n.ResourceID), key))
	if err != nil {
		if err = notFound(err); agentcore.IsNotFound(err) {
			return agentcore.Notification{}, false, nil
		}
		return agentcore.Notification{}, false, fmt.Errorf("find notification to coalesce with on thread %s: %w",
			n.ThreadID, err)
	}
	return found, true, nil
}

// ListNotifications returns the records matching q, most recently updated
// first. Text matches summary, kind or source as a substring, ignoring the
// case of ASCII letters (SQLite's LIKE); % and _ in it match themselves.
func (db *DB) ListNotifications(ctx context.Context, q agentcore.NotificationQuery) ([]agentcore.Notification, error) {
	var where []string
	var args []any
	if q.ThreadID != "" {
		where = append(where, `thread_id = ?`)
		args = append(args, q.ThreadID)
	}
	in := func(col string, values []any) {
		if len(values) > 0 {
			where = append(where, col+` IN (`+placeholders(len(values))+`)`)
			args = append(args, values...)
		}
	}
	in("status", anys(q.Statuses))
	in("priority", anys(q.Priorities))
	in("source", anys(q.Sources))
	if q.Text != "" {
		where = append(where, `(summary LIKE ? ESCAPE '\' OR kind LIKE ? ESCAPE '\' OR source LIKE ? ESCAPE '\')`)
		p := "%" + likeEscaper.Replace(q.Text) + "%"
		args = append(args, p, p, p)
	}
	query := `SELECT ` + notificationCols + ` FROM notifications`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY updated_at DESC, id LIMIT ?`
	args = append(args, sqlLimit(q.Limit))
	out, err := db.queryNotifications(ctx, query, args...)
	if err != nil {
		if q.ThreadID == "" {
			return nil, fmt.Errorf("list notifications: %w", err)
		}
		return nil, fmt.Errorf("list notifications of thread %s: %w", q.ThreadID, err)
	}
	return out, nil
}

// DueNotifications returns up to limit (dueBatch when limit <= 0) pending
// records whose deliverAt or summaryAt is at or before now, earliest due
// first, then least recently updated.
func (db *DB) DueNotifications(ctx context.Context, at time.Time, limit int) ([]agentcore.Notification, error) {
	if limit <= 0 {
		limit = dueBatch
	}
	t := ms(at)
	out, err := db.queryNotifications(ctx, `SELECT `+notificationCols+` FROM notifications
		WHERE status = ? AND (deliver_at <= ? OR summary_at <= ?)
		ORDER BY `+dueAt+`, updated_at, id LIMIT ?`,
		agentcore.NotePending, t, t, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications due at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	return out, nil
}

// NextDue returns the earliest deliverAt or summaryAt of a pending record;
// ok is false when no pending record has either.
func (db *DB) NextDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := db.reader.QueryRowContext(ctx, `SELECT min(`+dueAt+`) FROM notifications WHERE status = ?`,
		agentcore.NotePending).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find the next due notification: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return fromMS(next.Int64), true, nil
}

func (db *DB) queryNotifications(ctx context.Context, query string, args ...any) ([]agentcore.Notification, error) {
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentcore.Notification
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// notificationNotFound is Mastra's text for a missing record.
func notificationNotFound(threadID, id string) error {
	return fmt.Errorf("Notification %s was not found for thread %s: %w", id, threadID, agentcore.ErrNotFound)
}

// notificationArgs are n's values in notificationColumns order. Empty
// optional strings, nil or zero times and empty JSON values are NULL.
func notificationArgs(n agentcore.Notification) ([]any, error) {
	var payload any
	if len(n.Payload) > 0 {
		if !json.Valid(n.Payload) {
			return nil, fmt.Errorf("payload is not JSON")
		}
		payload = string(n.Payload)
	}
	var attrs any
	if len(n.Attributes) > 0 {
		b, err := json.Marshal(n.Attributes)
		if err != nil {
			return nil, fmt.Errorf("encode attributes: %w", err)
		}
		attrs = string(b)
	}
	meta, err := marshalMap(n.Metadata)
	if err != nil {
		return nil, err
	}
	return []any{
		n.ThreadID, n.ID, n.Source, n.Kind, n.Priority, n.Status, n.Summary, payload,
		nullString(n.ResourceID), nullString(n.AgentID), nullString(n.SourceID),
		nullString(n.DedupeKey), nullString(n.CoalesceKey), n.CoalescedCount, attrs,
		nullMS(n.CreatedAt), ms(n.UpdatedAt), nullTime(n.DeliveredAt), nullTime(n.SeenAt),
		nullTime(n.DismissedAt), nullTime(n.ArchivedAt), nullTime(n.DiscardedAt),
		nullTime(n.DeliverAt), nullTime(n.SummaryAt), nullString(n.DeliveryReason), n.DeliveryAttempts,
		nullTime(n.LastDeliveryAttemptAt), nullString(n.LastDeliveryError),
		nullString(n.DeliveredSignalID), nullString(n.SummarySignalID), meta, nullTime(n.SnoozedUntil),
	}, nil
}

func scanNotification(s scanner) (agentcore.Notification, error) {
	var n agentcore.Notification
	var payload, resource, agent, sourceID, dedupe, coalesce, attrs, reason, lastErr, delivered, summarised,
		meta sql.NullString
	var created, updated int64
	var deliveredAt, seen, dismissed, archived, discarded, deliverAt, summaryAt, lastAttempt, snoozed sql.NullInt64
	if err := s.Scan(&n.ThreadID, &n.ID, &n.Source, &n.Kind, &n.Priority, &n.Status, &n.Summary, &payload,
		&resource, &agent, &sourceID, &dedupe, &coalesce, &n.CoalescedCount, &attrs,
		&created, &updated, &deliveredAt, &seen, &dismissed, &archived, &discarded,
		&deliverAt, &summaryAt, &reason, &n.DeliveryAttempts, &lastAttempt,
		&lastErr, &delivered, &summarised, &meta, &snoozed); err != nil {
		return agentcore.Notification{}, err
	}
	if payload.Valid {
		n.Payload = json.RawMessage(payload.String)
	}
	if attrs.Valid {
		if err := json.Unmarshal([]byte(attrs.String), &n.Attributes); err != nil {
			return agentcore.Notification{}, fmt.Errorf("notification %s attributes: %w", n.ID, err)
		}
	}
	if meta.Valid {
		if err := json.Unmarshal([]byte(meta.String), &n.Metadata); err != nil {
			return agentcore.Notification{}, fmt.Errorf("notification %s metadata: %w", n.ID, err)
		}
	}
	n.ResourceID, n.AgentID, n.SourceID = resource.String, agent.String, sourceID.String
	n.DedupeKey, n.CoalesceKey, n.DeliveryReason = dedupe.String, coalesce.String, reason.String
	n.LastDeliveryError, n.DeliveredSignalID, n.SummarySignalID = lastErr.String, delivered.String, summarised.String
	n.CreatedAt, n.UpdatedAt = fromMS(created), fromMS(updated)
	n.DeliveredAt, n.SeenAt, n.DismissedAt = timePtr(deliveredAt), timePtr(seen), timePtr(dismissed)
	n.ArchivedAt, n.DiscardedAt = timePtr(archived), timePtr(discarded)
	n.DeliverAt, n.SummaryAt = timePtr(deliverAt), timePtr(summaryAt)
	n.LastDeliveryAttemptAt, n.SnoozedUntil = timePtr(lastAttempt), timePtr(snoozed)
	return n, nil
}

// truncateTimes gives n's times the precision and zone they read back
// with. Pointers are replaced, not written through: they may be the
// caller's.
func truncateTimes(n *agentcore.Notification) {
	if !n.CreatedAt.IsZero() {
		n.CreatedAt = fromMS(ms(n.CreatedAt))
	}
	if !n.UpdatedAt.IsZero() {
		n.UpdatedAt = fromMS(ms(n.UpdatedAt))
	}
	for _, p := range []**time.Time{&n.DeliveredAt, &n.SeenAt, &n.DismissedAt, &n.ArchivedAt, &n.DiscardedAt,
		&n.DeliverAt, &n.SummaryAt, &n.LastDeliveryAttemptAt, &n.SnoozedUntil} {
		if *p != nil {
			t := fromMS(ms(**p))
			*p = &t
		}
	}
}

// likeEscaper makes text match itself in a LIKE pattern with ESCAPE '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullTime stores a nil time as NULL.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}
