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
// Each message also lies on one strand (migration 0017), a chain of
// messages each the parent of the next, as appending made it; a strand
// forks from its parent strand at fork_seq. The active branch, the path
// from a root down that the chat shows, is the chain of its leaf: one row
// of path_segments per strand it passes, the strand's messages in a range
// of seq. Switching versions rewrites the rows below the branch point, one
// per strand, and no message row; a branch taken off the path is kept as
// the leaf it had (branch_leaf), under its first message. Every write below
// keeps these in one transaction on the one writer connection, so two tabs
// switching and appending at once cannot interleave inside an operation.

// onPath is the SQL truth of "the message m (an alias of messages) is on
// its thread's active branch": the segment holding m's seq, the one with
// the largest lo below it, is m's strand's and reaches m. One probe of
// path_segments' key.
func onPath(m string) string {
	return `coalesce((SELECT g.strand = ` + m + `.strand AND g.hi >= ` + m + `.seq FROM path_segments AS g
		WHERE g.thread_id = ` + m + `.thread_id AND g.lo < ` + m + `.seq ORDER BY g.lo DESC LIMIT 1), 0)`
}

// pathRows joins the active branch's segments g of a thread to its
// messages: the rows of each segment's range of its strand. Ordered by
// g.lo, then messages.seq, they are the branch from the root down, and
// SQLite reads them in that order without sorting. The index is named: on
// a database without statistics the planner would rather walk
// (thread_id, seq), every branch's rows of the range.
const pathRows = `path_segments AS g CROSS JOIN messages INDEXED BY messages_strand ON messages.thread_id = g.thread_id
	AND messages.strand = g.strand AND messages.seq > g.lo AND messages.seq <= g.hi`

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
	PK, Seq, Strand int64
	ID              string // only where it is read: the active leaf
}

// leafOf returns the active leaf of threadID, the message of its branch
// with the highest seq; ok is false when nothing is active.
func leafOf(ctx context.Context, tx *sql.Tx, threadID string) (n node, ok bool, err error) {
	err = tx.QueryRowContext(ctx, `SELECT messages.pk, messages.seq, messages.strand, messages.id FROM `+pathRows+`
		WHERE g.thread_id = ? ORDER BY g.lo DESC, messages.seq DESC LIMIT 1`, threadID).Scan(&n.PK, &n.Seq, &n.Strand, &n.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return node{}, false, nil
	}
	return n, err == nil, err
}

// moveAtMost is how many messages below a branch point place moves to a
// strand of their own so that a new message goes on along its parent's
// strand: a regenerated reply or an edited recent message keeps the active
// branch one strand long, and moving a reply's few rows costs less than the
// segment every later switch would read. Past it (an edit near the start of
// a long chat), the new message starts a strand.
const moveAtMost = 64

// place puts a new message with seq on threadID's active branch, below the
// active leaf, and returns its strand and its parent, that leaf (none: it
// is a root). The strand is the leaf's when the leaf is the last message of
// its strand, or when at most moveAtMost messages follow it there, which
// then move to a strand of their own; else a new one forking there. The
// caller writes the message with that seq, strand and parent.
func place(ctx context.Context, tx *sql.Tx, threadID string, seq int64) (strand int64, parent sql.NullString, err error) {
	leaf, ok, err := leafOf(ctx, tx, threadID)
	if err != nil {
		return 0, parent, err
	}
	parent = sql.NullString{String: leaf.ID, Valid: ok}
	if !ok {
		if err := cut(ctx, tx, threadID, 0); err != nil {
			return 0, parent, err
		}
		strand, err = newStrand(ctx, tx, threadID, sql.NullInt64{}, 0)
	} else {
		var after int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages
			WHERE thread_id = ? AND strand = ? AND seq > ? LIMIT ?)`, threadID, leaf.Strand, leaf.Seq, moveAtMost+1).Scan(&after); err != nil {
			return 0, parent, err
		}
		// Segments above the leaf hold no message (one deleted left them).
		if err := cut(ctx, tx, threadID, leaf.Seq); err != nil {
			return 0, parent, err
		}
		if after <= moveAtMost {
			if after > 0 {
				if err := moveTail(ctx, tx, threadID, leaf); err != nil {
					return 0, parent, err
				}
			}
			_, err := tx.ExecContext(ctx, `UPDATE path_segments SET hi = ?2 WHERE thread_id = ?1
				AND lo = (SELECT max(lo) FROM path_segments WHERE thread_id = ?1)`, threadID, seq)
			return leaf.Strand, parent, err
		}
		strand, err = newStrand(ctx, tx, threadID, sql.NullInt64{Int64: leaf.Strand, Valid: true}, leaf.Seq)
	}
	if err != nil {
		return 0, parent, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO path_segments (thread_id, lo, hi, strand) VALUES (?, ?, ?, ?)`,
		threadID, leaf.Seq, seq, strand)
	return strand, parent, err
}

// newStrand stores a new strand of threadID, forking from parent (none: it
// starts at a root) at seq fork, and returns its label, one past the
// thread's largest: labels are never reused.
func newStrand(ctx context.Context, tx *sql.Tx, threadID string, parent sql.NullInt64, fork int64) (int64, error) {
	var strand int64
	err := tx.QueryRowContext(ctx, `INSERT INTO strands (thread_id, strand, parent, fork_seq)
		SELECT ?1, coalesce(max(strand), -1) + 1, ?2, ?3 FROM strands WHERE thread_id = ?1 RETURNING strand`,
		threadID, parent, fork).Scan(&strand)
	return strand, err
}

// moveTail moves the messages that follow at on its strand, none of them on
// the active branch, to a new strand forking at at; the strands that forked
// from them fork from the new one. They stay one chain, and every path
// through them the same messages.
func moveTail(ctx context.Context, tx *sql.Tx, threadID string, at node) error {
	tail, err := newStrand(ctx, tx, threadID, sql.NullInt64{Int64: at.Strand, Valid: true}, at.Seq)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET strand = ?4 WHERE thread_id = ?1 AND strand = ?2 AND seq > ?3`,
		threadID, at.Strand, at.Seq, tail); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE strands SET parent = ?4 WHERE thread_id = ?1 AND parent = ?2 AND fork_seq > ?3`,
		threadID, at.Strand, at.Seq, tail)
	return err
}

// activate makes id and its ancestors the active branch of threadID, down
// to id; with descend, the branch goes on below id to the leaf it had when
// it was left (branch_leaf), and from that leaf, or from id when that
// branch is not kept, along the children chosen last (the largest
// chosen_at, then the latest). The messages that come onto the path from
// another branch (id and those above it) are chosen now; the ones below id
// already are their siblings' last chosen. An active id with descend is
// left as it is: the branch already goes through it and follows its chosen
// children. An empty id deactivates the whole thread. ErrNotFound when id
// is not a message of threadID, or the thread is unknown or in the trash.
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
	err := tx.QueryRowContext(ctx, `SELECT m.pk, m.seq, m.strand, `+onPath("m")+`
		FROM messages AS m JOIN threads AS t ON t.id = m.thread_id
		WHERE m.id = ? AND m.thread_id = ? AND t.deleted_at IS NULL`, id, threadID).Scan(&at.PK, &at.Seq, &at.Strand, &active)
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
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE up (pk, seq, strand, parent_id, active) AS (
				SELECT pk, seq, strand, parent_id, 0 FROM messages WHERE pk = ?1
				UNION ALL
				SELECT m.pk, m.seq, m.strand, m.parent_id, `+onPath("m")+`
				FROM up JOIN messages AS m ON m.id = up.parent_id
				WHERE up.active = 0
			)
			SELECT pk, seq, strand, active FROM up`, at.PK)
		if err != nil {
			return err
		}
		defer rows.Close()
		join = 0
		for rows.Next() {
			var n node
			var a bool
			if err := rows.Scan(&n.PK, &n.Seq, &n.Strand, &a); err != nil {
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
		list, err := json.Marshal(pksOf(walked))
		if err != nil {
			return err
		}
		// Only these rows change siblings: the descent below reads chosen_at.
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET chosen_at = ?
			WHERE pk IN (SELECT value FROM json_each(?))`, ms(now()), string(list)); err != nil {
			return err
		}
	}
	leaf := at
	if descend {
		// id was not active: its branch's first message, the last walked.
		if leaf, err = keptLeaf(ctx, tx, threadID, walked[len(walked)-1], at, len(walked) == 1); err != nil {
			return err
		}
		if leaf, err = descendFrom(ctx, tx, threadID, leaf); err != nil {
			return err
		}
	}
	if leaf.Seq != join {
		if err := extend(ctx, tx, threadID, join, leaf); err != nil {
			return err
		}
	}
	// A branch whose first message came onto the path is not kept any
	// more: a branch_leaf row stands only for a branch that has stayed off
	// the path since it was left, so that nothing below it has changed.
	_, err = tx.ExecContext(ctx, `DELETE FROM branch_leaf WHERE thread_id = ?1 AND seq > ?2
		AND (SELECT `+onPath("m")+` FROM messages AS m WHERE m.pk = branch_leaf.pk)`, threadID, join)
	return err
}

func pksOf(ns []node) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.PK
	}
	return out
}

// keptLeaf returns the leaf the branch headed by head had when it was
// left, if it is kept and goes through at (always, when at is its head:
// direct), else at.
func keptLeaf(ctx context.Context, tx *sql.Tx, threadID string, head, at node, direct bool) (node, error) {
	var leaf node
	err := tx.QueryRowContext(ctx, `SELECT m.pk, m.seq, m.strand FROM branch_leaf AS b
		JOIN messages AS m ON m.thread_id = b.thread_id AND m.seq = b.leaf_seq
		WHERE b.thread_id = ? AND b.seq = ? AND b.pk = ?`, threadID, head.Seq, head.PK).Scan(&leaf.PK, &leaf.Seq, &leaf.Strand)
	if errors.Is(err, sql.ErrNoRows) {
		return at, nil
	}
	if err != nil || direct {
		return leaf, err
	}
	// at is on the leaf's path when the chain of the leaf, walked up until
	// it holds at's seq, passes at's strand there.
	var through bool
	err = tx.QueryRowContext(ctx, `WITH RECURSIVE up (strand, parent, lo, hi) AS (
			SELECT strand, parent, fork_seq, ?3 FROM strands WHERE thread_id = ?1 AND strand = ?2
			UNION ALL
			SELECT s.strand, s.parent, s.fork_seq, up.lo FROM up JOIN strands AS s ON s.thread_id = ?1 AND s.strand = up.parent
			WHERE up.lo >= ?4
		)
		SELECT EXISTS (SELECT 1 FROM up WHERE strand = ?5 AND lo < ?4 AND hi >= ?4)`,
		threadID, leaf.Strand, leaf.Seq, at.Seq, at.Strand).Scan(&through)
	if err != nil || !through {
		return at, err
	}
	return leaf, nil
}

// descendFrom returns the leaf reached from n down the children chosen
// last (n itself when it has none).
func descendFrom(ctx context.Context, tx *sql.Tx, threadID string, n node) (node, error) {
	var leaf node
	err := tx.QueryRowContext(ctx, `WITH RECURSIVE down (id, pk, seq, strand) AS (
			SELECT id, pk, seq, strand FROM messages WHERE pk = ?2
			UNION ALL
			SELECT c.id, c.pk, c.seq, c.strand FROM down JOIN messages AS c ON c.pk = (
				SELECT pk FROM messages WHERE thread_id = ?1 AND parent_id = down.id
				ORDER BY chosen_at DESC, seq DESC LIMIT 1)
		)
		SELECT pk, seq, strand FROM down ORDER BY seq DESC LIMIT 1`, threadID, n.PK).Scan(&leaf.PK, &leaf.Seq, &leaf.Strand)
	return leaf, err
}

// extend makes the active branch of threadID, which ends at the message at
// seq join (0: nothing is active), go on down to leaf, a descendant of it:
// the segments of leaf's chain below join are added and the one holding
// join is stretched to where the chain leaves its strand, in one statement
// that walks the chain up from leaf only as far as join.
func extend(ctx context.Context, tx *sql.Tx, threadID string, join int64, leaf node) error {
	_, err := tx.ExecContext(ctx, `WITH RECURSIVE up (strand, parent, lo, hi) AS (
			SELECT strand, parent, fork_seq, ?3 FROM strands WHERE thread_id = ?1 AND strand = ?2
			UNION ALL
			SELECT s.strand, s.parent, s.fork_seq, up.lo FROM up JOIN strands AS s ON s.thread_id = ?1 AND s.strand = up.parent
			WHERE up.lo >= ?4
		)
		INSERT INTO path_segments (thread_id, lo, hi, strand) SELECT ?1, lo, hi, strand FROM up WHERE true
		ON CONFLICT (thread_id, lo) DO UPDATE SET hi = excluded.hi`, threadID, leaf.Strand, leaf.Seq, join)
	return err
}

// cut ends threadID's active branch at seq join (0: nothing stays active):
// the segments below it go and the one holding it stops there.
func cut(ctx context.Context, tx *sql.Tx, threadID string, join int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM path_segments WHERE thread_id = ? AND lo >= ?`, threadID, join); err != nil {
		return err
	}
	if join == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE path_segments SET hi = ?2 WHERE thread_id = ?1
		AND lo = (SELECT max(lo) FROM path_segments WHERE thread_id = ?1)`, threadID, join)
	return err
}

// leave takes the active branch of threadID off below the message at seq
// join (0: all of it) and keeps what it took as the leaf it had, under its
// first message.
func leave(ctx context.Context, tx *sql.Tx, threadID string, join int64) error {
	var first node
	err := tx.QueryRowContext(ctx, `SELECT messages.pk, messages.seq FROM `+pathRows+`
		WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
			AND messages.seq > ?2
		ORDER BY g.lo, messages.seq LIMIT 1`, threadID, join).Scan(&first.PK, &first.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return cut(ctx, tx, threadID, join)
	}
	if err != nil {
		return err
	}
	leaf, _, err := leafOf(ctx, tx, threadID)
	if err != nil {
		return err
	}
	// A branch of one message is found again without being kept. The
	// first message is active, so it heads no kept branch (the end of
	// activate drops one whose head comes back): a plain insert.
	if first.Seq != leaf.Seq {
		if _, err := tx.ExecContext(ctx, `INSERT INTO branch_leaf (thread_id, seq, pk, leaf_seq) VALUES (?, ?, ?, ?)`,
			threadID, first.Seq, first.PK, leaf.Seq); err != nil {
			return err
		}
	}
	return cut(ctx, tx, threadID, join)
}

// strandsOf places a whole tree on strands: parents[i] is the index of
// message i's parent, before it, or -1 for a root, and message i has seq
// i+1. A message goes on along its parent's strand when it is the child on
// the active branch (active), or else the first child: the active branch is
// one strand from its root, the shortest chain to read and switch. It
// returns each message's strand and, by strand, where it forks: -1 and 0
// for a root.
func strandsOf(parents []int, active []bool) (of []int64, forks [][2]int64) {
	next := make([]int, len(parents)) // by parent, the child that goes on along its strand
	for i := range next {
		next[i] = -1
	}
	for i, p := range parents {
		if p >= 0 && (next[p] < 0 || active[i]) {
			next[p] = i
		}
	}
	of = make([]int64, len(parents))
	for i, p := range parents {
		if p >= 0 && next[p] == i {
			of[i] = of[p]
			continue
		}
		fork := [2]int64{-1, 0}
		if p >= 0 {
			fork = [2]int64{of[p], int64(p + 1)}
		}
		of[i], forks = int64(len(forks)), append(forks, fork)
	}
	return of, forks
}

// writeStrands stores the strands of a thread written whole (strandsOf)
// and makes the path down to message leaf, by index (-1: none), its
// active branch.
func writeStrands(ctx context.Context, tx *sql.Tx, threadID string, of []int64, forks [][2]int64, leaf int) error {
	for s, f := range forks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO strands (thread_id, strand, parent, fork_seq) VALUES (?, ?, ?, ?)`,
			threadID, s, sql.NullInt64{Int64: f[0], Valid: f[0] >= 0}, f[1]); err != nil {
			return err
		}
	}
	if leaf < 0 {
		return nil
	}
	for s, hi := of[leaf], int64(leaf+1); s >= 0; s, hi = forks[s][0], forks[s][1] {
		if _, err := tx.ExecContext(ctx, `INSERT INTO path_segments (thread_id, lo, hi, strand) VALUES (?, ?, ?, ?)`,
			threadID, forks[s][1], hi, s); err != nil {
			return err
		}
	}
	return nil
}

// detach takes the message id of threadID out of the tree: its children
// follow its parent (roots when it was one). The strands stay chains: the
// child that followed it on its strand now follows its parent there, and a
// strand that forked at it forks at the range below its seq, which ends at
// its parent.
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
	out, err := db.listMessages(ctx, `SELECT `+messageCols+` FROM messages
		WHERE thread_id = ? ORDER BY seq`, threadID)
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
			FROM messages WHERE pk = ? RETURNING pk`)
		if err != nil {
			return err
		}
		defer copyMessage.Close()
		parent, chosen := "", ms(now())
		for i, pk := range path {
			id := NewID()
			var copied int64
			if err := copyMessage.QueryRowContext(ctx, id, t.ID, t.ResourceID, i+1, parent, chosen, pk).Scan(&copied); err != nil {
				return notFound(err)
			}
			if err := copyPieces(ctx, tx, pk, copied); err != nil {
				return err
			}
			parent = id
		}
		// The copy is one branch, all of it active: strand 0 from its root.
		if _, err := tx.ExecContext(ctx, `INSERT INTO strands (thread_id, strand, parent, fork_seq) VALUES (?, 0, NULL, 0)`,
			t.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO path_segments (thread_id, lo, hi, strand) VALUES (?, 0, ?, 0)`, t.ID, len(path))
		return err
	})
	if err != nil {
		return agentcore.Thread{}, fmt.Errorf("fork thread %s at message %s: %w", fromThreadID, atMessageID, err)
	}
	return t, nil
}

// unlink forgets the message at of threadID as a kept branch's head or
// leaf, before it is deleted or given another seq: a branch it headed is
// not kept any more, and one that ended at it is found again by the
// descent.
func unlink(ctx context.Context, tx *sql.Tx, threadID string, at node) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM branch_leaf WHERE thread_id = ?1 AND (seq = ?2 AND pk = ?3 OR leaf_seq = ?2)`,
		threadID, at.Seq, at.PK)
	return err
}
