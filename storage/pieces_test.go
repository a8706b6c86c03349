package storage

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"parley/agentcore"
)

// pieceRows is what message_pieces holds of the message id: its rows'
// sizes by slot, in order, and the size of the message's row JSON.
func pieceRows(t *testing.T, db *DB, id string) (map[slot][]int, int) {
	t.Helper()
	ctx := context.Background()
	var row int
	if err := db.reader.QueryRowContext(ctx, `SELECT length(CAST(content AS BLOB)) FROM messages WHERE id = ?`, id).Scan(&row); err != nil {
		t.Fatal(err)
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT part, field, at, upto, length(CAST(text AS BLOB)) FROM message_pieces
		WHERE message_pk = (SELECT pk FROM messages WHERE id = ?) ORDER BY part, field, seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[slot][]int{}
	ends := map[slot]int{}
	for rows.Next() {
		var s slot
		var at, upto, n int
		if err := rows.Scan(&s.part, &s.field, &at, &upto, &n); err != nil {
			t.Fatal(err)
		}
		if at != ends[s] || upto-at != n {
			t.Errorf("slot %v: a piece [%d, %d) of %d bytes after %d bytes", s, at, upto, n, ends[s])
		}
		ends[s] = upto
		out[s] = append(out[s], n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, row
}

// streamingReply appends an empty reply, streaming, to the thread.
func streamingReply(t *testing.T, db *DB, threadID string) agentcore.Message {
	t.Helper()
	return mustAppend(t, db, agentcore.Message{ThreadID: threadID, Role: agentcore.RoleAssistant,
		Status: agentcore.StatusStreaming, Content: agentcore.TextContent("")})
}

// mustRead is the message id as GetMessage, ListMessages and ListTree give
// it, which must agree.
func mustRead(t *testing.T, db *DB, threadID, id string) agentcore.Message {
	t.Helper()
	ctx := context.Background()
	got, err := db.GetMessage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for name, list := range map[string]func() ([]agentcore.Message, error){
		"ListMessages": func() ([]agentcore.Message, error) { return db.ListMessages(ctx, threadID, agentcore.MessageQuery{}) },
		"ListTree":     func() ([]agentcore.Message, error) { return db.ListTree(ctx, threadID) },
	} {
		ms, err := list()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			if m.ID == id {
				found = true
				if !reflect.DeepEqual(m.Content, got.Content) {
					t.Errorf("%s's content differs from GetMessage's", name)
				}
			}
		}
		if !found {
			t.Fatalf("%s has no message %s", name, id)
		}
	}
	return got
}

// A streaming reply past pieceFrom is stored in pieces as it grows: each
// write adds what it gained, the last piece is filled before a new one is
// begun, no piece is over pieceSize nor cuts a UTF-8 sequence, the row
// keeps a marker, and every read gives the reply back whole, with its
// plain text.
func TestPiecesStreamingReply(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := streamingReply(t, db, th.ID)
	// Runes of 1 to 4 bytes, so that cuts fall inside sequences; a quote,
	// a backslash and control bytes, which JSON escapes.
	unit := "word é 日本 😀 \"q\" \\ \x01\x02\t\n"
	full := strings.Repeat(unit, (3<<20)/len(unit)+7)
	for _, n := range []int{1000, pieceFrom - 1, pieceFrom, pieceFrom + 5, pieceFrom + pieceSize/2, 2*pieceFrom + 3, len(full) - 11, len(full)} {
		for n < len(full) && !utf8.RuneStart(full[n]) {
			n++
		}
		text := full[:n]
		if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text), agentcore.StatusStreaming); err != nil {
			t.Fatal(err)
		}
		got := mustRead(t, db, th.ID, m.ID)
		if got.Content.Parts[0].Text != text || got.Content.Content != text {
			t.Fatalf("after a write of %d bytes: read %d bytes of text, %d of plain text", n,
				len(got.Content.Parts[0].Text), len(got.Content.Content))
		}
		pieces, row := pieceRows(t, db, m.ID)
		if n < pieceFrom {
			if len(pieces) != 0 {
				t.Errorf("%d bytes: stored in pieces %v", n, pieces)
			}
			continue
		}
		if row > 4<<10 {
			t.Errorf("%d bytes: the row's JSON is %d bytes; it should hold a marker", n, row)
		}
		sizes := pieces[slot{0, fieldText}]
		for i, size := range sizes {
			if size > pieceSize || i < len(sizes)-1 && size < pieceSize-utf8.UTFMax {
				t.Errorf("%d bytes: piece %d of %d is %d bytes", n, i, len(sizes), size)
			}
		}
	}
	if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(full), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, db, th.ID, m.ID); got.Content.Parts[0].Text != full || got.Status != agentcore.StatusComplete {
		t.Fatalf("after the final write: %d bytes, status %s", len(got.Content.Parts[0].Text), got.Status)
	}
}

// A stored string that is not a prefix of the new one (an edit, a repair,
// a shorter string) is stored again from its start; one that falls under
// pieceFrom goes back into the row, and its pieces go.
func TestPiecesRewritten(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := streamingReply(t, db, th.ID)
	a := strings.Repeat("a", 2*pieceFrom)
	edited := "b" + a[1:]
	cut := a[:pieceFrom+pieceSize+9]
	grown := cut + strings.Repeat("c", pieceSize)
	changedEnd := a[:pieceFrom+pieceSize+8] + "X" + strings.Repeat("c", 100)
	for _, text := range []string{a, edited, cut, grown, changedEnd, "small again", a} {
		if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text), agentcore.StatusStreaming); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, db, th.ID, m.ID).Content.Parts[0].Text; got != text {
			t.Fatalf("wrote %d bytes (%.8q…), read %d (%.8q…)", len(text), text, len(got), got)
		}
	}
	if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent("done"), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if pieces, _ := pieceRows(t, db, m.ID); len(pieces) != 0 {
		t.Errorf("a reply of 4 bytes kept pieces %v", pieces)
	}
	if got := mustRead(t, db, th.ID, m.ID).Content; !reflect.DeepEqual(got, agentcore.TextContent("done")) {
		t.Errorf("read %+v", got)
	}
}

// The marker is only ever read as one where the message has pieces for
// that very string: a model that writes the marker itself, as a whole text
// or argument, small or beside a big part, gets its text back as written.
func TestPiecesHostileMarker(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	big := strings.Repeat("big ", pieceFrom/4+1)
	for _, c := range []agentcore.Content{
		agentcore.TextContent(pieceMark),
		{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: pieceMark}, {Type: "text", Text: big}, {Type: "text", Text: pieceMark}}},
		{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: big}, {Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
			State: "call", ToolCallID: "c", ToolName: "t", ArgsText: pieceMark, Args: quotedPieceMark}}}},
	} {
		m := streamingReply(t, db, th.ID)
		want := c
		want.Content = partsText(c, "")
		for _, s := range []agentcore.MessageStatus{agentcore.StatusStreaming, agentcore.StatusComplete} {
			if err := db.UpdateMessage(ctx, m.ID, c, s); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, db, th.ID, m.ID).Content; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back differently: %d parts, plain text of %d bytes", s, len(got.Parts), len(got.Content))
			}
		}
	}
}

// A big tool call's streamed argument text and its arguments are stored in
// pieces of their own and read back as written, with the rest of the call.
func TestPiecesToolArguments(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := streamingReply(t, db, th.ID)
	args, _ := json.Marshal(map[string]string{"path": "big.go", "content": strings.Repeat("x := \"日\"\n", (2<<20)/12)})
	call := func(ti agentcore.ToolInvocation) agentcore.Content {
		ti.ToolCallID, ti.ToolName = "call-1", "write_file"
		return agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: "writing"},
			{Type: "tool-invocation", ToolInvocation: &ti}}}
	}
	for _, w := range []struct {
		c agentcore.Content
		s agentcore.MessageStatus
	}{
		{call(agentcore.ToolInvocation{State: "partial-call", ArgsText: string(args[:pieceFrom+3])}), agentcore.StatusStreaming},
		{call(agentcore.ToolInvocation{State: "partial-call", ArgsText: string(args)}), agentcore.StatusStreaming},
		{call(agentcore.ToolInvocation{State: "call", Args: args}), agentcore.StatusStreaming},
		{call(agentcore.ToolInvocation{State: "result", Args: args, Result: json.RawMessage(`"written"`)}), agentcore.StatusComplete},
	} {
		if err := db.UpdateMessage(ctx, m.ID, w.c, w.s); err != nil {
			t.Fatal(err)
		}
		got := mustRead(t, db, th.ID, m.ID).Content
		want := w.c
		want.Content = "writing"
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read back differently", w.c.Parts[1].ToolInvocation.State)
		}
		pieces, _ := pieceRows(t, db, m.ID)
		if ti := w.c.Parts[1].ToolInvocation; (ti.ArgsText != "") != (pieces[slot{1, fieldArgsText}] != nil) ||
			(ti.Args != nil) != (pieces[slot{1, fieldArgs}] != nil) {
			t.Errorf("%s: pieces %v", ti.State, pieces)
		}
	}
}

// A reply in pieces is found by search after every write that indexes it:
// its final write, a stop (MarkMessage, from the stored content), and a
// fork, whose copy has pieces of its own; a deleted thread's pieces go.
func TestPiecesSearchForkDelete(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := streamingReply(t, db, th.ID)
	text := strings.Repeat("filler words ", (2<<20)/13) + " zanzibar"
	if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text), agentcore.StatusStreaming); err != nil {
		t.Fatal(err)
	}
	if got := search(t, db, "zanzibar"); len(got) != 0 {
		t.Fatalf("a streaming reply is found: %v", got)
	}
	if err := db.MarkMessage(ctx, m.ID, agentcore.StatusInterrupted, nil); err != nil {
		t.Fatal(err)
	}
	if got := search(t, db, "zanzibar"); !reflect.DeepEqual(got, []string{m.ID}) {
		t.Fatalf("after a stop, search finds %v, want [%s]", got, m.ID)
	}
	if got := mustRead(t, db, th.ID, m.ID); got.Content.Parts[0].Text != text || got.Status != agentcore.StatusInterrupted {
		t.Fatalf("after a stop: %d bytes, %s", len(got.Content.Parts[0].Text), got.Status)
	}
	fork, err := db.ForkThread(ctx, th.ID, m.ID, agentcore.Thread{})
	if err != nil {
		t.Fatal(err)
	}
	copies, err := db.ListMessages(ctx, fork.ID, agentcore.MessageQuery{})
	if err != nil || len(copies) != 1 {
		t.Fatalf("the fork has %d messages: %v", len(copies), err)
	}
	if copies[0].Content.Parts[0].Text != text {
		t.Fatalf("the fork's copy has %d bytes", len(copies[0].Content.Parts[0].Text))
	}
	if got := search(t, db, "zanzibar"); !reflect.DeepEqual(got, []string{m.ID, copies[0].ID}) {
		t.Fatalf("after the fork, search finds %v", got)
	}
	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeTrash(ctx, now().Add(1<<40)); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM message_pieces AS x
		WHERE NOT EXISTS (SELECT 1 FROM messages WHERE pk = x.message_pk)`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d pieces of deleted messages are left (%v)", left, err)
	}
	if got := mustRead(t, db, fork.ID, copies[0].ID); got.Content.Parts[0].Text != text {
		t.Errorf("the fork lost its copy with its source: %d bytes", len(got.Content.Parts[0].Text))
	}
}
