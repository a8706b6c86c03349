package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"

	"parley/agentcore"
)

// A thread's messages form a tree (migration 0012): parent_id links each
// message to the one it follows, in the same thread and with a lower seq;
// the active messages are one path from a root down, the branch the chat
// shows. Every write below keeps that in one transaction on the one writer
// connection, so two tabs switching and appending at once cannot interleave
// inside an operation. Since seq grows along every path, the active
// messages above a given active one are exactly those with a lower seq, and
// those below it those with a higher seq: cutting the active path is one
// UPDATE over the messages_active index.

// activeLeaf is the thread t's active leaf, the active message with the
// highest seq; a correlated subquery of a statement that reads threads AS t.
const activeLeaf = `SELECT id FROM messages WHERE thread_id = t.id AND active = 1 ORDER BY seq DESC LIMIT 1`

// SwitchBranch shows the branch through messageID; see
// agentcore.MessageStore.
func (db *DB) SwitchBranch(ctx context.Context, threadID, messageID string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		return activate(ctx, tx, threadID, messageID, true)
	})
	if err != nil {
		return fmt.Errorf("switch thread %s to the branch of message %s: %w", threadID, messageID, err)
	}
	return nil
}

// RewindTo makes messageID the active leaf of the thread, or leaves
// nothing active when it is empty; see agentcore.MessageStore.
func (db *DB) RewindTo(ctx context.Context, threadID, messageID string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		return activate(ctx, tx, threadID, messageID, false)
	})
	if err != nil {
		to := "message " + messageID
		if messageID == "" {
			to = "its start"
		}
		return fmt.Errorf("rewind thread %s to %s: %w", threadID, to, err)
	}
	return nil
}

// activate makes id and its ancestors the active branch of threadID, down
// to id; with descend, the branch goes on below id along the children
// chosen last (the largest chosen_at, then the latest). The messages it
// activates are chosen now. An active id with descend is left as it is: the
// branch already goes through it and follows its chosen children. An empty
// id deactivates the whole thread. ErrNotFound when id is not a message of
// threadID, or the thread is unknown or in the trash.
func activate(ctx context.Context, tx *sql.Tx, threadID, id string, descend bool) error {
	if id == "" {
		var ok bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE id = ? AND deleted_at IS NULL)`,
			threadID).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return agentcore.ErrNotFound
		}
		_, err := tx.ExecContext(ctx, `UPDATE messages SET active = 0 WHERE thread_id = ? AND active = 1`, threadID)
		return err
	}
	var active bool
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT m.active, m.seq FROM messages AS m JOIN threads AS t ON t.id = m.thread_id
		WHERE m.id = ? AND m.thread_id = ? AND t.deleted_at IS NULL`, id, threadID).Scan(&active, &seq)
	if err != nil {
		return notFound(err)
	}
	if active && descend {
		return nil
	}
	chosen := ms(now())
	// Up from id to the first active ancestor, where its path joins the
	// active one (none: it has another root). Below that point the old
	// branch goes; the walked messages come in.
	var join int64
	var walked []string
	if !active {
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE up (id, parent_id, active, seq) AS (
				SELECT id, parent_id, active, seq FROM messages WHERE id = ?
				UNION ALL
				SELECT m.id, m.parent_id, m.active, m.seq FROM up JOIN messages AS m ON m.id = up.parent_id
				WHERE up.active = 0
			)
			SELECT id, active, seq FROM up`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var mid string
			var a bool
			var s int64
			if err := rows.Scan(&mid, &a, &s); err != nil {
				return err
			}
			if a {
				join = s
			} else {
				walked = append(walked, mid)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
	} else {
		join = seq
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET active = 0 WHERE thread_id = ? AND active = 1 AND seq > ?`,
		threadID, join); err != nil {
		return err
	}
	if len(walked) > 0 {
		ids, err := json.Marshal(walked)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET active = 1, chosen_at = ?
			WHERE id IN (SELECT value FROM json_each(?))`, chosen, string(ids)); err != nil {
			return err
		}
	}
	if !descend {
		return nil
	}
	// id was not active, so nothing below it is: the descent only adds.
	_, err = tx.ExecContext(ctx, `WITH RECURSIVE down (id) AS (
			SELECT ?2
			UNION ALL
			SELECT (SELECT c.id FROM messages AS c WHERE c.thread_id = ?1 AND c.parent_id = down.id
					ORDER BY c.chosen_at DESC, c.seq DESC LIMIT 1)
			FROM down WHERE down.id IS NOT NULL
		)
		UPDATE messages SET active = 1, chosen_at = ?3
		WHERE id IN (SELECT id FROM down WHERE id IS NOT NULL AND id <> ?2)`, threadID, id, chosen)
	return err
}

// detach takes the message id of threadID out of the tree: its children
// follow its parent (roots when it was one). Its active child, if any,
// takes its place on the active path, so the path stays whole once it is
// moved or deleted.
func detach(ctx context.Context, tx *sql.Tx, threadID, id string) error {
	var parent sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT parent_id FROM messages WHERE id = ? AND thread_id = ?`, id, threadID).Scan(&parent)
	if err != nil {
		return notFound(err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE messages SET parent_id = ? WHERE thread_id = ? AND parent_id = ?`,
		parent, threadID, id)
	return err
}

// ListTree returns every message of the thread, of every branch, in Seq
// order (parents before their children); see agentcore.MessageStore.
func (db *DB) ListTree(ctx context.Context, threadID string) ([]agentcore.Message, error) {
	out, err := listMessages(db.reader.QueryContext(ctx, `SELECT `+messageCols+` FROM messages
		WHERE thread_id = ? ORDER BY seq`, threadID))
	if err != nil {
		return nil, fmt.Errorf("list the tree of thread %s: %w", threadID, err)
	}
	return out, nil
}

// Siblings answers "version n of m" for the messages ids of threadID; see
// agentcore.MessageStore. One query: each id is found by the id index and
// its siblings by messages_children, so a page costs what it shows.
func (db *DB) Siblings(ctx context.Context, threadID string, ids ...string) (map[string]agentcore.Siblings, error) {
	out := map[string]agentcore.Siblings{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("siblings in thread %s: %w", threadID, err)
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT m.id, s.id
		FROM messages AS m
		JOIN messages AS s ON s.thread_id = m.thread_id AND s.parent_id IS m.parent_id
		WHERE m.id IN (SELECT value FROM json_each(?)) AND m.thread_id = ?
		ORDER BY m.id, s.seq`, string(list), threadID)
	if err != nil {
		return nil, fmt.Errorf("siblings in thread %s: %w", threadID, err)
	}
	defer rows.Close()
	all := map[string][]string{}
	for rows.Next() {
		var id, sib string
		if err := rows.Scan(&id, &sib); err != nil {
			return nil, fmt.Errorf("siblings in thread %s: %w", threadID, err)
		}
		all[id] = append(all[id], sib)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("siblings in thread %s: %w", threadID, err)
	}
	for id, sibs := range all {
		if len(sibs) < 2 {
			continue
		}
		for i, s := range sibs {
			if s == id {
				out[id] = agentcore.Siblings{IDs: sibs, Index: i}
			}
		}
	}
	return out, nil
}

// ForkThread stores a new thread holding a copy of the branch of
// fromThreadID down to atMessageID; see agentcore.MessageStore. The copies
// are made by SQL from the stored rows, so no content passes through Go, and
// are indexed for search and usage by the insert triggers, as any new
// message.
func (db *DB) ForkThread(ctx context.Context, fromThreadID, atMessageID string, t agentcore.Thread) (agentcore.Thread, error) {
	if t.ID == "" {
		t.ID = NewID()
	}
	t.Metadata = maps.Clone(t.Metadata)
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	t.Metadata[agentcore.MetaForkedFrom] = map[string]any{"threadId": fromThreadID, "messageId": atMessageID}
	err := db.write(ctx, func(tx *sql.Tx) error {
		var resource string
		err := tx.QueryRowContext(ctx, `SELECT t.resource_id FROM messages AS m JOIN threads AS t ON t.id = m.thread_id
			WHERE m.id = ? AND m.thread_id = ? AND t.deleted_at IS NULL`, atMessageID, fromThreadID).Scan(&resource)
		if err != nil {
			return fmt.Errorf("message %s: %w", atMessageID, notFound(err))
		}
		if t.ResourceID == "" {
			t.ResourceID = resource
		}
		if t, err = createThread(ctx, tx, t); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE up (pk, parent_id, seq) AS (
				SELECT pk, parent_id, seq FROM messages WHERE id = ?
				UNION ALL
				SELECT m.pk, m.parent_id, m.seq FROM up JOIN messages AS m ON m.id = up.parent_id
			)
			SELECT pk FROM up ORDER BY seq`, atMessageID)
		path, err := returnedPKs(rows, err)
		if err != nil {
			return err
		}
		copyMessage, err := tx.PrepareContext(ctx, `INSERT INTO messages (`+insertCols+`, parent_id, active, chosen_at)
			SELECT ?, ?, ?, ?, role, content,
				CASE status WHEN 'streaming' THEN 'interrupted' WHEN 'queued' THEN 'complete' ELSE status END,
				run_id, created_at, type, nullif(?, ''), 1, ?
			FROM messages WHERE pk = ?`)
		if err != nil {
			return err
		}
		defer copyMessage.Close()
		parent, chosen := "", ms(now())
		for i, pk := range path {
			id := NewID()
			if err := affected(copyMessage.ExecContext(ctx, id, t.ID, t.ResourceID, i+1, parent, chosen, pk)); err != nil {
				return err
			}
			parent = id
		}
		return nil
	})
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("fork thread %s at message %s: %w", fromThreadID, atMessageID, err)
	}
	return t, nil
}
