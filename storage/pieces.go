package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"unicode/utf8"
	"unsafe"

	"parley/agentcore"
)

// A message's texts and tool arguments of pieceFrom bytes or more are kept
// out of its row, in message_pieces (0021_message_pieces.sql), each cut in
// pieces of about pieceSize bytes; the row's JSON holds pieceMark in their
// place. A streaming reply is written many times: each write adds only
// what its strings gained since the last one (and rewrites the last piece
// while it is not full), so no write, the final one included, hands SQLite
// a reply's size in one value. Written whole, a 10 MiB reply cost SQLite
// a bound copy and a record of its size at every write.
//
// Whether a stored string is a prefix of the new one is told by the CRC of
// the stored bytes: a string that changed other than at its end (an edit,
// a repair) is stored again from its start.
const (
	pieceFrom = 1 << 20
	pieceSize = 256 << 10
)

// pieceMark stands in a row's JSON for a string stored in pieces. It is
// only read as one where the message has pieces for that very string: a
// text that happens to be the marker, with none, stays itself.
const pieceMark = "\x00parley-pieces\x00"

// quotedPieceMark is pieceMark as a JSON string: what stands for arguments
// (a raw JSON value) stored in pieces.
var quotedPieceMark, _ = json.Marshal(pieceMark)

// The strings of a part that may be stored in pieces.
const (
	fieldText = iota
	fieldArgsText
	fieldArgs
)

// slot names one string of a message: its part and which of its strings.
type slot struct{ part, field int }

// castagnoli is the CRC-32C table (hardware-accelerated where the CPU has it).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// outOfRow is c with its strings of pieceFrom bytes or more replaced by
// pieceMark, and those strings by slot. c itself is not changed.
//
// c.Content, when it is the text of the parts, is left out too (encodeContent
// leaves it out only when it is the text of the parts as stored, and those
// now hold markers) and made again on read (withPieces).
func outOfRow(c agentcore.Content) (agentcore.Content, map[slot]string) {
	var big map[slot]string
	derived := c.Content != "" && c.Content == partsText(c, c.Content)
	var parts []agentcore.Part
	for i, p := range c.Parts {
		q := p
		if len(p.Text) >= pieceFrom {
			big = setSlot(big, slot{i, fieldText}, p.Text)
			q.Text = pieceMark
		}
		if ti := p.ToolInvocation; ti != nil && (len(ti.ArgsText) >= pieceFrom || len(ti.Args) >= pieceFrom) {
			t := *ti
			if len(t.ArgsText) >= pieceFrom {
				big = setSlot(big, slot{i, fieldArgsText}, t.ArgsText)
				t.ArgsText = pieceMark
			}
			if len(t.Args) >= pieceFrom {
				big = setSlot(big, slot{i, fieldArgs}, unsafe.String(unsafe.SliceData(t.Args), len(t.Args)))
				t.Args = quotedPieceMark
			}
			q.ToolInvocation = &t
		}
		if big == nil {
			continue
		}
		if parts == nil {
			parts = make([]agentcore.Part, len(c.Parts))
			copy(parts, c.Parts)
		}
		parts[i] = q
	}
	if parts != nil {
		c.Parts = parts
	}
	if big != nil && derived {
		c.Content = ""
	}
	return c, big
}

func setSlot(m map[slot]string, s slot, v string) map[slot]string {
	if m == nil {
		m = map[slot]string{}
	}
	m[s] = v
	return m
}

// storedPiece is the last stored piece of a slot.
type storedPiece struct {
	seq, at, upto int
	crc           uint32
}

// putPieces stores the strings big of the message pk in pieces, and drops
// the pieces of its other strings. It returns how many bytes big holds.
func putPieces(ctx context.Context, tx *sql.Tx, pk int64, big map[slot]string) (int, error) {
	last := map[slot]storedPiece{}
	rows, err := tx.QueryContext(ctx, `SELECT part, field, max(seq), at, upto, crc FROM message_pieces
		WHERE message_pk = ? GROUP BY part, field`, pk)
	if err != nil {
		return 0, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	for rows.Next() {
		var s slot
		var p storedPiece
		var crc int64
		if err := rows.Scan(&s.part, &s.field, &p.seq, &p.at, &p.upto, &crc); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read the pieces of message %d: %w", pk, err)
		}
		p.crc = uint32(crc)
		last[s] = p
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	for s := range last {
		if _, ok := big[s]; !ok {
			if err := dropSlot(ctx, tx, pk, s); err != nil {
				return 0, err
			}
		}
	}
	total := 0
	for s, v := range big {
		total += len(v)
		if err := putSlot(ctx, tx, pk, s, v, last); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// putSlot stores v as the string s of the message pk, given the last
// stored piece of each of its strings.
func putSlot(ctx context.Context, tx *sql.Tx, pk int64, s slot, v string, last map[slot]storedPiece) error {
	at, seq, crc := 0, 0, uint32(0)
	if p, ok := last[s]; ok {
		if p.upto > len(v) || crc32.Checksum(bytesOf(v[:p.upto]), castagnoli) != p.crc {
			// Not a prefix of v: v is stored again from its start.
			if err := dropSlot(ctx, tx, pk, s); err != nil {
				return err
			}
		} else {
			at, seq, crc = p.upto, p.seq+1, p.crc
			if p.upto-p.at < pieceSize && p.upto < len(v) {
				// The last piece is not full: it is written again, longer.
				end := max(cutPiece(v, p.at), p.upto)
				crc = crc32.Update(crc, castagnoli, bytesOf(v[p.upto:end]))
				if _, err := tx.ExecContext(ctx, `UPDATE message_pieces SET upto = ?, crc = ?, text = ?
					WHERE message_pk = ? AND part = ? AND field = ? AND seq = ?`,
					end, int64(crc), v[p.at:end], pk, s.part, s.field, p.seq); err != nil {
					return fmt.Errorf("store message %d part %d: %w", pk, s.part, err)
				}
				at = end
			}
		}
	}
	for at < len(v) {
		end := cutPiece(v, at)
		crc = crc32.Update(crc, castagnoli, bytesOf(v[at:end]))
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_pieces (message_pk, part, field, seq, at, upto, crc, text)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, pk, s.part, s.field, seq, at, end, int64(crc), v[at:end]); err != nil {
			return fmt.Errorf("store message %d part %d: %w", pk, s.part, err)
		}
		at, seq = end, seq+1
	}
	return nil
}

func dropSlot(ctx context.Context, tx *sql.Tx, pk int64, s slot) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM message_pieces WHERE message_pk = ? AND part = ? AND field = ?`,
		pk, s.part, s.field)
	if err != nil {
		return fmt.Errorf("drop the pieces of message %d part %d: %w", pk, s.part, err)
	}
	return nil
}

// cutPiece is where the piece of v that begins at at ends: pieceSize bytes
// on, moved back to the start of a UTF-8 sequence (where there is one
// within utf8.UTFMax), or v's end.
func cutPiece(v string, at int) int {
	end := at + pieceSize
	if end >= len(v) {
		return len(v)
	}
	for cut := end; cut > end-utf8.UTFMax; cut-- {
		if utf8.RuneStart(v[cut]) {
			return cut
		}
	}
	return end
}

// bytesOf is s's bytes, not a copy; they must not be changed.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// readPieces reads the strings stored in pieces of the message pk, each in
// one allocation of its final size, by slot.
func readPieces(ctx context.Context, q *sql.DB, pk int64) (map[slot][]byte, error) {
	out := map[slot][]byte{}
	// Sized first: the last piece's upto is its string's size. A piece
	// added between the two reads only grows a string once more.
	sizes, err := q.QueryContext(ctx, `SELECT part, field, max(upto) FROM message_pieces
		WHERE message_pk = ? GROUP BY part, field`, pk)
	if err != nil {
		return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	for sizes.Next() {
		var s slot
		var size int
		if err := sizes.Scan(&s.part, &s.field, &size); err != nil {
			sizes.Close()
			return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
		}
		out[s] = make([]byte, 0, size)
	}
	if err := sizes.Close(); err != nil {
		return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	rows, err := q.QueryContext(ctx, `SELECT part, field, text FROM message_pieces
		WHERE message_pk = ? ORDER BY part, field, seq`, pk)
	if err != nil {
		return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	defer rows.Close()
	var total int
	for rows.Next() {
		var s slot
		var text string // the driver's own copy, not one more
		if err := rows.Scan(&s.part, &s.field, &text); err != nil {
			return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
		}
		out[s] = append(out[s], text...)
		total += len(text)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the pieces of message %d: %w", pk, err)
	}
	for s, b := range out {
		if len(b) == 0 {
			delete(out, s) // dropped between the reads: its marker stays
		}
	}
	if total >= trimFrom {
		bigRead.Store(true)
	}
	return out, nil
}

// intoRow puts the strings stored in pieces back in place of their markers
// in c. A marker with no pieces for its string stays: it is the text as
// written.
func intoRow(c *agentcore.Content, pieces map[slot][]byte) {
	for s, b := range pieces {
		if s.part >= len(c.Parts) {
			continue
		}
		p := &c.Parts[s.part]
		str := unsafe.String(unsafe.SliceData(b), len(b))
		switch ti := p.ToolInvocation; {
		case s.field == fieldText && p.Text == pieceMark:
			p.Text = str
		case s.field == fieldArgsText && ti != nil && ti.ArgsText == pieceMark:
			ti.ArgsText = str
		case s.field == fieldArgs && ti != nil && string(ti.Args) == string(quotedPieceMark):
			ti.Args = b
		}
	}
}

// copyPieces gives the message to, a copy of the message from, the pieces
// of from, and indexes it again: the insert trigger indexed it before they
// were there.
func copyPieces(ctx context.Context, tx *sql.Tx, from, to int64) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO message_pieces (message_pk, part, field, seq, at, upto, crc, text)
		SELECT ?, part, field, seq, at, upto, crc, text FROM message_pieces WHERE message_pk = ?`, to, from)
	if err != nil {
		return fmt.Errorf("copy the pieces of message %d: %w", from, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return indexStored(ctx, tx, []int64{to})
}
