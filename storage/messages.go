package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"parley/agentcore"
)

// insertCols are the columns a new message is given; messageCols those a
// message is read with (scanMessage), from messages, whether it is on the
// active branch looked up in path_segments (onPath); activeCols the same
// read through pathRows, where it is. A message with strings stored in
// pieces (pieces.go) is read with its pk, else 0.
const (
	insertCols = `id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type`
	storedCols = `messages.id, messages.thread_id, messages.resource_id, messages.seq, messages.role,
		messages.content, messages.status, messages.run_id, messages.created_at, messages.type,
		coalesce(messages.parent_id, ''),
		iif(EXISTS (SELECT 1 FROM message_pieces WHERE message_pk = messages.pk), messages.pk, 0)`
	activeCols = storedCols + `, 1`
)

var messageCols = storedCols + `, ` + onPath("messages")

// AppendMessage stores m as the last message of its thread: Seq is one past
// the thread's highest, ID and CreatedAt are filled in when empty, Status
// defaults to complete and ResourceID to the thread's. It becomes the
// active leaf: its parent is the thread's active leaf, or m.ParentID, a
// message of the thread that first becomes the active leaf (see RewindTo).
// The thread's UpdatedAt, its last message activity, is bumped in the same
// transaction.
func (db *DB) AppendMessage(ctx context.Context, m agentcore.Message) (agentcore.Message, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	m.CreatedAt = orNow(m.CreatedAt)
	if m.Status == "" {
		m.Status = agentcore.StatusComplete
	}
	content, err := encodeContent(m.Content)
	if err != nil {
		return agentcore.Message{}, fmt.Errorf("append message to thread %s: encode content: %w", m.ThreadID, err)
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		if m.ParentID != "" {
			if err := activate(ctx, tx, m.ThreadID, m.ParentID, false); err != nil {
				return fmt.Errorf("parent %s: %w", m.ParentID, err)
			}
		}
		// The seq, the parent (the active leaf) and the strand are read and
		// the row inserted inside the writer's transaction, so two appends
		// can never take the same seq nor the same parent.
		err := tx.QueryRowContext(ctx, `SELECT coalesce(nullif(?, ''), t.resource_id),
				coalesce((SELECT max(seq) FROM messages WHERE thread_id = t.id), 0) + 1
			FROM threads AS t WHERE t.id = ?`, m.ResourceID, m.ThreadID).Scan(&m.ResourceID, &m.Seq)
		if err != nil {
			return notFound(err)
		}
		strand, parent, err := place(ctx, tx, m.ThreadID, m.Seq)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (`+insertCols+`, parent_id, chosen_at, strand)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.ThreadID, m.ResourceID, m.Seq, m.Role, string(content), m.Status, m.RunID, ms(m.CreatedAt), m.Type,
			parent, ms(now()), strand); err != nil {
			return err
		}
		m.ParentID, m.Active = parent.String, true
		_, err = tx.ExecContext(ctx, `UPDATE threads SET updated_at = ? WHERE id = ?`, ms(now()), m.ThreadID)
		return err
	})
	if err != nil {
		return agentcore.Message{}, fmt.Errorf("append message to thread %s: %w", m.ThreadID, err)
	}
	return m, nil
}

// UpdateMessage replaces the content and status of a message; an empty
// status means complete. Streaming runs call it many times per message;
// the write that ends the streaming also fills the message's usage columns
// and its search entry (index.go), from c.
func (db *DB) UpdateMessage(ctx context.Context, id string, c agentcore.Content, s agentcore.MessageStatus) error {
	if s == "" {
		s = agentcore.StatusComplete
	}
	row, big := outOfRow(c)
	content, release, err := encodeForWrite(row)
	if err != nil {
		return fmt.Errorf("update message %s: encode content: %w", id, err)
	}
	defer release()
	// The driver copies the text while it executes: the JSON is not copied
	// into a Go string first (a whole reply's worth on every write), and
	// is released once the UPDATE has run.
	text := unsafe.String(unsafe.SliceData(content), len(content))
	trim := false
	if s == agentcore.StatusStreaming && big == nil {
		err = affected(db.writer.ExecContext(ctx, `UPDATE messages SET content = ?, status = ? WHERE id = ?`, text, s, id))
	} else {
		err = db.write(ctx, func(tx *sql.Tx) error {
			var pk int64
			var err error
			if s == agentcore.StatusStreaming {
				err = tx.QueryRowContext(ctx, `UPDATE messages SET content = ?, status = ? WHERE id = ? RETURNING pk`,
					text, s, id).Scan(&pk)
			} else {
				md, merr := json.Marshal(c.Metadata)
				if merr != nil {
					return fmt.Errorf("encode metadata: %w", merr)
				}
				err = tx.QueryRowContext(ctx, `UPDATE messages SET content = ?, status = ?, `+usageSet("?")+`
					WHERE id = ? RETURNING pk`, text, s, string(md), id).Scan(&pk)
			}
			release()
			if err != nil {
				return notFound(err)
			}
			size, err := putPieces(ctx, tx, pk, big)
			if err != nil {
				return err
			}
			if s == agentcore.StatusStreaming {
				// What SQLite freed of the pieces it wrote goes back to the
				// system at every write: its allocator kept MiBs of them while
				// a reply streamed (10 MiB write_file, peak 4.0x -> 3.5x N).
				trim = true
				return nil
			}
			trim = size+len(content) >= trimFrom
			// The search entry is made from c, after the UPDATE: the JSON
			// is not needed beside it.
			return setSearchDoc(ctx, tx, pk, c)
		})
	}
	if trim {
		// What SQLite freed of the reply's pieces and its search entry
		// goes back to the system.
		trimSQLiteMemory()
	}
	if err != nil {
		return fmt.Errorf("update message %s: %w", id, err)
	}
	return nil
}

// MarkMessage sets the status of a message and the given keys of its
// content's metadata; the rest of the content stays as stored. It writes a
// few bytes where UpdateMessage writes the whole reply, so it can still land
// when the disk had no room for that.
func (db *DB) MarkMessage(ctx context.Context, id string, s agentcore.MessageStatus, meta map[string]string) error {
	set, args := "content", []any(nil)
	if len(meta) > 0 {
		set = "json_set(content"
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			set += ", ?, ?"
			args = append(args, "$.metadata."+strconv.Quote(k), meta[k])
		}
		set += ")"
	}
	// The usage columns come from the metadata as marked: its arguments
	// twice, once for the content and once for the columns.
	all := append(append(append([]any{s}, args...), args...), id)
	err := db.write(ctx, func(tx *sql.Tx) error {
		pks, err := returnedPKs(tx.QueryContext(ctx, `UPDATE messages SET status = ?, content = `+set+`, `+
			usageSet(set+` -> '$.metadata'`)+` WHERE id = ? RETURNING pk`, all...))
		if err != nil {
			return err
		}
		if len(pks) == 0 {
			return agentcore.ErrNotFound
		}
		if s == agentcore.StatusStreaming {
			return nil
		}
		return indexStored(ctx, tx, pks)
	})
	if err != nil {
		return fmt.Errorf("mark message %s %s: %w", id, s, err)
	}
	return nil
}

// MoveMessages puts the messages ids, in that order, at the end of their
// thread: a signal delivered into a running reply goes after what the reply
// had written so far. Every id must belong to the thread. In the tree, each
// is taken out (its children follow its parent) and appended below the
// active leaf, active, so the active branch stays one path.
func (db *DB) MoveMessages(ctx context.Context, threadID string, ids ...string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if err := detach(ctx, tx, threadID, id); err != nil {
				return fmt.Errorf("message %s: %w", id, err)
			}
			// Out of its strand where it was (strand -1 is none) with its new
			// seq, then on the path again at its end.
			var at node
			if err := tx.QueryRowContext(ctx, `SELECT pk, seq FROM messages WHERE id = ?`, id).Scan(&at.PK, &at.Seq); err != nil {
				return fmt.Errorf("message %s: %w", id, notFound(err))
			}
			if err := unlink(ctx, tx, threadID, at); err != nil {
				return fmt.Errorf("message %s: %w", id, err)
			}
			err := tx.QueryRowContext(ctx, `UPDATE messages
				SET seq = (SELECT max(seq) FROM messages WHERE thread_id = ?1) + 1, strand = -1, chosen_at = ?3
				WHERE pk = ?2 RETURNING seq`, threadID, at.PK, ms(now())).Scan(&at.Seq)
			if err != nil {
				return fmt.Errorf("message %s: %w", id, notFound(err))
			}
			strand, parent, err := place(ctx, tx, threadID, at.Seq)
			if err != nil {
				return fmt.Errorf("message %s: %w", id, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET parent_id = ?, strand = ? WHERE pk = ?`,
				parent, strand, at.PK); err != nil {
				return fmt.Errorf("message %s: %w", id, err)
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE threads SET updated_at = ? WHERE id = ?`, ms(now()), threadID)
		return err
	})
	if err != nil {
		return fmt.Errorf("move messages of thread %s: %w", threadID, err)
	}
	return nil
}

// DeleteMessage removes the message with id (a queued message taken back
// before any model read it). Its children follow its parent.
func (db *DB) DeleteMessage(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		var threadID string
		var at node
		if err := tx.QueryRowContext(ctx, `SELECT thread_id, pk, seq FROM messages WHERE id = ?`, id).Scan(&threadID, &at.PK, &at.Seq); err != nil {
			return notFound(err)
		}
		if err := detach(ctx, tx, threadID, id); err != nil {
			return err
		}
		if err := unlink(ctx, tx, threadID, at); err != nil {
			return err
		}
		return affected(tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, id))
	})
	if err != nil {
		return fmt.Errorf("delete message %s: %w", id, err)
	}
	return nil
}

// GetMessage returns the message with id.
func (db *DB) GetMessage(ctx context.Context, id string) (agentcore.Message, error) {
	defer trimIfRead()
	m, pk, err := scanMessage(db.reader.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ?`, id))
	if err == nil && pk != 0 {
		err = db.withPieces(ctx, &m, pk)
	}
	if err != nil {
		return agentcore.Message{}, fmt.Errorf("get message %s: %w", id, notFound(err))
	}
	return m, nil
}

// ListMessages returns the messages of a thread's active branch (the chat
// as shown, and as the model reads it) in Seq order. An unknown thread has
// no messages (it is not an error: callers that care ask GetThread).
func (db *DB) ListMessages(ctx context.Context, threadID string, q agentcore.MessageQuery) ([]agentcore.Message, error) {
	// The segments are read by their key from the one holding the first
	// seq wanted, each range by messages_strand: a page of a long thread
	// costs what a page of a short one does, however many branches it has.
	query := `SELECT ` + activeCols + ` FROM ` + pathRows + `
		WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
			AND g.lo < ?3 AND messages.seq > ?2 AND messages.seq < ?3
		ORDER BY g.lo, messages.seq LIMIT ?4`
	if q.Last && q.Limit > 0 {
		// The last Limit, still returned in ascending order.
		query = `SELECT * FROM (SELECT ` + activeCols + ` FROM ` + pathRows + `
			WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
				AND g.lo < ?3 AND messages.seq > ?2 AND messages.seq < ?3
			ORDER BY g.lo DESC, messages.seq DESC LIMIT ?4) ORDER BY seq`
	}
	before := int64(math.MaxInt64)
	if q.BeforeSeq > 0 {
		before = q.BeforeSeq
	}
	defer trimIfRead() // once the rows are closed
	out, err := db.listMessages(ctx, query, threadID, q.AfterSeq, before, sqlLimit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("list messages of thread %s: %w", threadID, err)
	}
	return out, nil
}

// listMessages scans the rows of a query of messageCols, then reads the
// strings stored in pieces of the messages that have some.
func (db *DB) listMessages(ctx context.Context, query string, args ...any) ([]agentcore.Message, error) {
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentcore.Message
	var pieced map[int]int64 // index in out: pk
	for rows.Next() {
		m, pk, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		if pk != 0 {
			if pieced == nil {
				pieced = map[int]int64{}
			}
			pieced[len(out)] = pk
		}
		out = append(out, m)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for i, pk := range pieced {
		if err := db.withPieces(ctx, &out[i], pk); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// scanMessage scans a row of messageCols; pk is the message's when it has
// strings stored in pieces, its content then holding their markers and no
// plain text (withPieces puts them in).
func scanMessage(s scanner) (m agentcore.Message, pk int64, err error) {
	// Scanned into a string, the content is the driver's own copy of it;
	// into a []byte, database/sql would copy it once more. It is only
	// read while it is decoded.
	var content string
	var created int64
	if err := s.Scan(&m.ID, &m.ThreadID, &m.ResourceID, &m.Seq, &m.Role, &content, &m.Status, &m.RunID,
		&created, &m.Type, &m.ParentID, &pk, &m.Active); err != nil {
		return agentcore.Message{}, 0, err
	}
	if len(content) >= trimFrom {
		bigRead.Store(true)
	}
	b := unsafe.Slice(unsafe.StringData(content), len(content))
	if pk != 0 {
		err = decodeSpliced(b, &m.Content, spliceFrom)
	} else {
		err = decodeContent(b, &m.Content)
	}
	if err != nil {
		return agentcore.Message{}, 0, fmt.Errorf("message %s content: %w", m.ID, err)
	}
	m.CreatedAt = fromMS(created)
	return m, pk, nil
}

// withPieces puts the strings of m (the message pk) stored in pieces in
// place of their markers, then its plain text, as decodeContent does.
func (db *DB) withPieces(ctx context.Context, m *agentcore.Message, pk int64) error {
	pieces, err := readPieces(ctx, db.reader, pk)
	if err != nil {
		return fmt.Errorf("message %s: %w", m.ID, err)
	}
	intoRow(&m.Content, pieces)
	if m.Content.Content == "" {
		m.Content.Content = partsText(m.Content, "")
	}
	return nil
}

// decodeContent reads stored content into c (encodeContent); b is not
// changed nor kept.
func decodeContent(b []byte, c *agentcore.Content) error {
	if err := decodeSpliced(b, c, spliceFrom); err != nil {
		return err
	}
	if c.Content == "" {
		c.Content = partsText(*c, "")
	}
	return nil
}

// partsText is the text of c's text parts, one after the other: like, a
// string that may already be it (then it is returned, not a copy), or "".
func partsText(c agentcore.Content, like string) string {
	var n, parts int
	var one string
	rest, same := like, true
	for _, p := range c.Parts {
		if p.Type != "text" || p.Text == "" {
			continue
		}
		n, parts, one = n+len(p.Text), parts+1, p.Text
		if same = same && strings.HasPrefix(rest, p.Text); same {
			rest = rest[len(p.Text):]
		}
	}
	switch {
	case same && rest == "":
		return like
	case parts == 1:
		return one
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range c.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
