package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"parley/agentcore"
)

// A thread's messages form a tree (migration 0012): parent_id links each
// message to the one it follows, in the same thread and with a lower seq.
// The active branch, the path from a root down that the chat shows, is the
// thread's rows of active_path (migration 0014), one narrow row per message
// keyed by its seq; a branch taken off it is kept as it was in left_path,
// under the branch_leaf row of its first message. Every write below keeps
// them in one transaction on the one writer connection, so two tabs
// switching and appending at once cannot interleave inside an operation.
// Since seq grows along every path, the active messages above a given
// active one are exactly the rows with a lower seq, and those below it
// those with a higher seq: cutting the active path moves a range of narrow
// rows, and no message row is written for it.

// activeLeaf is the thread t's active leaf, the active message with the
// highest seq; a correlated subquery of a statement that reads threads AS t.
const activeLeaf = `SELECT lm.id FROM active_path AS la JOIN messages AS lm ON lm.pk = la.pk
	WHERE la.thread_id = t.id ORDER BY la.seq DESC LIMIT 1`

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

// node is a message as the tree's writes handle it.
type node struct {
	PK  int64 `json:"pk"`
	Seq int64 `json:"seq"`
}

// activate makes id and its ancestors the active branch of threadID, down
// to id; with descend, the branch goes on below id as it was when it was
// left (left_path), and from its leaf, or from id when that branch is not
// kept, along the children chosen last (the largest chosen_at, then the
// latest). The messages that come onto the path from another branch (id and
// those above it) are chosen now; the ones below id already are their
// siblings' last chosen. An active id with descend is left as it is: the
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
		return leave(ctx, tx, threadID, 0)
	}
	var at node
	var active bool
	err := tx.QueryRowContext(ctx, `SELECT m.pk, m.seq,
			EXISTS (SELECT 1 FROM active_path AS a WHERE a.thread_id = m.thread_id AND a.seq = m.seq)
		FROM messages AS m JOIN threads AS t ON t.id = m.thread_id
		WHERE m.id = ? AND m.thread_id = ? AND t.deleted_at IS NULL`, id, threadID).Scan(&at.PK, &at.Seq, &active)
	if err != nil {
		return notFound(err)
	}
	if active && descend {
		return nil
	}
	// Up from id to the first active ancestor, where its path joins the
	// active one (none: it has another root). Below that point the old
	// branch goes; the walked messages come in.
	join := at.Seq
	var walked []node
	if !active {
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE up (pk, seq, parent_id, active) AS (
				SELECT pk, seq, parent_id, 0 FROM messages WHERE pk = ?1
				UNION ALL
				SELECT m.pk, m.seq, m.parent_id,
					EXISTS (SELECT 1 FROM active_path AS a WHERE a.thread_id = ?2 AND a.seq = m.seq)
				FROM up JOIN messages AS m ON m.id = up.parent_id
				WHERE up.active = 0
			)
			SELECT pk, seq, active FROM up`, at.PK, threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		join = 0
		for rows.Next() {
			var n node
			var a bool
			if err := rows.Scan(&n.PK, &n.Seq, &a); err != nil {
				return err
			}
			if a {
				join = n.Seq
			} else {
				walked = append(walked, n)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	if err := leave(ctx, tx, threadID, join); err != nil {
		return err
	}
	if len(walked) > 0 {
		list, err := json.Marshal(walked)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO active_path (thread_id, seq, pk)
			SELECT ?, value ->> 'seq', value ->> 'pk' FROM json_each(?)`, threadID, string(list)); err != nil {
			return err
		}
		// Only these rows change siblings: the descent below reads chosen_at.
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET chosen_at = ?
			WHERE pk IN (SELECT value ->> 'pk' FROM json_each(?))`, ms(now()), string(list)); err != nil {
			return err
		}
	}
	if descend {
		// id was not active, so nothing below it is: the descent only adds.
		from, err := restore(ctx, tx, threadID, at)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE down (id, pk, seq) AS (
				SELECT id, pk, seq FROM messages WHERE pk = ?2
				UNION ALL
				SELECT c.id, c.pk, c.seq FROM down JOIN messages AS c ON c.pk = (
					SELECT pk FROM messages WHERE thread_id = ?1 AND parent_id = down.id
					ORDER BY chosen_at DESC, seq DESC LIMIT 1)
			)
			INSERT INTO active_path (thread_id, seq, pk) SELECT ?1, seq, pk FROM down WHERE pk <> ?2`,
			threadID, from); err != nil {
			return err
		}
	}
	// A branch whose first message came onto the path is not kept any
	// more: rows of left_path stand only for a branch that has stayed off
	// the path since it was left, so that nothing below it has changed.
	rows, err := tx.QueryContext(ctx, `DELETE FROM branch_leaf WHERE thread_id = ?1 AND seq > ?2
		AND EXISTS (SELECT 1 FROM active_path AS a WHERE a.thread_id = ?1 AND a.seq = branch_leaf.seq)
		RETURNING seq, leaf_seq`, threadID, join)
	if err != nil {
		return err
	}
	var dropped [][2]int64
	for rows.Next() {
		var d [2]int64
		if err := rows.Scan(&d[0], &d[1]); err != nil {
			rows.Close()
			return err
		}
		dropped = append(dropped, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range dropped {
		if err := dropBranch(ctx, tx, threadID, d[0], d[1]); err != nil {
			return err
		}
	}
	return nil
}

// dropBranch deletes the rows of left_path of the branch left at the
// message at seq head, whose leaf was at seq leaf.
func dropBranch(ctx context.Context, tx *sql.Tx, threadID string, head, leaf int64) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM left_path WHERE thread_id = ?1 AND seq >= ?2 AND seq <= ?3 AND head = ?2`,
		threadID, head, leaf)
	return err
}

// leave takes the active path of threadID off below the message at seq
// join (0: all of it) and keeps it in left_path under its first message.
func leave(ctx context.Context, tx *sql.Tx, threadID string, join int64) error {
	var first, firstSeq, leaf sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT f.pk, f.seq,
			(SELECT seq FROM active_path WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq DESC LIMIT 1)
		FROM (SELECT 1) LEFT JOIN (SELECT pk, seq FROM active_path WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq LIMIT 1) AS f`,
		threadID, join).Scan(&first, &firstSeq, &leaf)
	if err != nil {
		return err
	}
	if !first.Valid {
		return nil
	}
	// A branch of one message is found again without being kept.
	if firstSeq.Int64 != leaf.Int64 {
		// The rows taken off are active, so none of them is kept yet (the
		// end of activate drops a branch whose first message comes back):
		// plain inserts, a fifth cheaper than OR REPLACE.
		if _, err := tx.ExecContext(ctx, `INSERT INTO branch_leaf (thread_id, seq, pk, leaf_seq) VALUES (?, ?, ?, ?)`,
			threadID, firstSeq.Int64, first.Int64, leaf.Int64); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO left_path (thread_id, seq, pk, head)
			SELECT thread_id, seq, pk, ?3 FROM active_path WHERE thread_id = ?1 AND seq > ?2`,
			threadID, join, firstSeq.Int64); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM active_path WHERE thread_id = ? AND seq > ?`, threadID, join)
	return err
}

// restore puts back on the active path, below at (just made active), the
// messages that were below it when its branch was left, if that branch is
// kept (left_path), and returns the pk of the message the descent goes on
// from: the last one put back, or at.
func restore(ctx context.Context, tx *sql.Tx, threadID string, at node) (int64, error) {
	var head, leaf int64
	err := tx.QueryRowContext(ctx, `SELECT b.seq, b.leaf_seq FROM left_path AS l
		JOIN branch_leaf AS b ON b.thread_id = l.thread_id AND b.seq = l.head
		WHERE l.thread_id = ? AND l.seq = ? AND l.pk = ?`, threadID, at.Seq, at.PK).Scan(&head, &leaf)
	if errors.Is(err, sql.ErrNoRows) {
		return at.PK, nil
	}
	if err != nil {
		return 0, err
	}
	// The branch's head came onto the path with at (it is at or above
	// it), so the end of activate drops the branch's rows.
	if _, err := tx.ExecContext(ctx, `INSERT INTO active_path (thread_id, seq, pk)
		SELECT thread_id, seq, pk FROM left_path WHERE thread_id = ?1 AND seq > ?2 AND seq <= ?3 AND head = ?4`,
		threadID, at.Seq, leaf, head); err != nil {
		return 0, err
	}
	var last int64
	err = tx.QueryRowContext(ctx, `SELECT pk FROM active_path WHERE thread_id = ? ORDER BY seq DESC LIMIT 1`, threadID).Scan(&last)
	return last, err
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
		copyMessage, err := tx.PrepareContext(ctx, `INSERT INTO messages (`+insertCols+`, parent_id, chosen_at)
			SELECT ?, ?, ?, ?, role, content,
				CASE status WHEN 'streaming' THEN 'interrupted' WHEN 'queued' THEN 'complete' ELSE status END,
				run_id, created_at, type, nullif(?, ''), ?
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
		// The copy is one branch, all of it active.
		_, err = tx.ExecContext(ctx, `INSERT INTO active_path (thread_id, seq, pk)
			SELECT thread_id, seq, pk FROM messages WHERE thread_id = ?`, t.ID)
		return err
	})
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("fork thread %s at message %s: %w", fromThreadID, atMessageID, err)
	}
	return t, nil
}

// unlink takes the message at out of threadID's active path and out of a
// branch kept in left_path, before it is deleted or given another seq; a
// branch that it heads is not kept any more.
func unlink(ctx context.Context, tx *sql.Tx, threadID string, at node) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM active_path WHERE thread_id = ? AND seq = ? AND pk = ?`,
		threadID, at.Seq, at.PK); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM left_path WHERE thread_id = ? AND seq = ? AND pk = ?`,
		threadID, at.Seq, at.PK); err != nil {
		return err
	}
	var leaf int64
	err := tx.QueryRowContext(ctx, `DELETE FROM branch_leaf WHERE thread_id = ? AND seq = ? AND pk = ? RETURNING leaf_seq`,
		threadID, at.Seq, at.PK).Scan(&leaf)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return dropBranch(ctx, tx, threadID, at.Seq, leaf)
}
