package storage

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"parley/agentcore"
)

// Chunks are pieces of the text, in order, each valid UTF-8 where the text
// is, of about chunkSize bytes, cut after whitespace where there is some
// near the end, and at a rune's start where there is none.
func TestSearchChunksCut(t *testing.T) {
	spaced := strings.Repeat("word ", (3<<20)/5)
	// A word that would straddle a chunk's end is cut before, not inside.
	straddle := strings.Repeat("x", chunkSize-3) + " straddling " + strings.Repeat("y ", (2<<20)/2)
	for _, tc := range []struct {
		name     string
		text     string
		chunks   int
		atSpaces bool // every chunk but the last ends in whitespace
	}{
		{"empty", "", 1, false},
		{"small", "a few words", 1, false},
		{"1 MiB exactly", strings.Repeat("a", chunkFrom), 1, false},
		{"1 MiB and a byte", strings.Repeat("a", chunkFrom+1), 5, false},
		{"spaced 3 MiB", spaced, 13, true}, // cut a few bytes short of chunkSize each
		{"straddling word", straddle, 0, true},
		{"2-byte runes, no space", strings.Repeat("é", (3<<20)/2), 12, false},
		{"3-byte runes, no space", strings.Repeat("日", (3<<20)/3), 13, false},
		{"4-byte runes, no space", strings.Repeat("😀", (3<<20)/4), 12, false},
		{"runes offset by one byte", "a" + strings.Repeat("日", (3<<20)/3), 0, false},
		{"space only too far back", strings.Repeat("z ", 100) + strings.Repeat("日", (2<<20)/3), 0, false},
		{"markers", strings.Repeat("\x01\x02 ", (2<<20)/3), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := searchChunks(tc.text)
			if tc.chunks > 0 && len(chunks) != tc.chunks {
				t.Errorf("%d chunks, want %d", len(chunks), tc.chunks)
			}
			if got := strings.Join(chunks, ""); got != tc.text {
				t.Fatalf("the chunks are not the text (%d bytes, want %d)", len(got), len(tc.text))
			}
			for i, c := range chunks {
				if len(c) > chunkSize && i < len(chunks)-1 || len(chunks) > 1 && len(c) == 0 {
					t.Errorf("chunk %d is %d bytes", i, len(c))
				}
				if i < len(chunks)-1 && len(c) < chunkSize-chunkCutWithin {
					t.Errorf("chunk %d is only %d bytes", i, len(c))
				}
				if utf8.ValidString(tc.text) && !utf8.ValidString(c) {
					t.Errorf("chunk %d cuts a UTF-8 sequence: ends % x", i, c[len(c)-4:])
				}
				if tc.atSpaces && i < len(chunks)-1 && !strings.ContainsAny(c[len(c)-1:], " \n") {
					t.Errorf("chunk %d ends inside a word: %q", i, c[len(c)-10:])
				}
			}
		})
	}
}

// finalReply streams a message, then stores text as its final content, as a
// run does.
func finalReply(t *testing.T, db *DB, threadID, text string) agentcore.Message {
	t.Helper()
	m := mustAppend(t, db, agentcore.Message{ThreadID: threadID, Role: agentcore.RoleAssistant,
		Status: agentcore.StatusStreaming, Content: agentcore.TextContent("")})
	c := agentcore.TextContent(text)
	c.Parts = append([]agentcore.Part{{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
		State: "result", ToolCallID: "c1", ToolName: "read_file"}}}, c.Parts...)
	if err := db.UpdateMessage(context.Background(), m.ID, c, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	return m
}

// ftsRows counts the rows of messages_fts of the message id: chunk numbers
// in order.
func ftsRows(t *testing.T, db *DB, id string) []int64 {
	t.Helper()
	pk := int64(-1)
	err := db.reader.QueryRowContext(context.Background(), `SELECT pk FROM messages WHERE id = ?`, id).Scan(&pk)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if pk < 0 { // gone: pk was id's; look for rows of no message at all
		var orphans int64
		if err := db.reader.QueryRowContext(context.Background(), `SELECT count(*) FROM messages_fts
			WHERE NOT EXISTS (SELECT 1 FROM messages WHERE pk = messages_fts.rowid >> 12)`).Scan(&orphans); err != nil {
			t.Fatal(err)
		}
		return make([]int64, orphans)
	}
	lo, hi := ftsRange(pk)
	rows, err := db.reader.QueryContext(context.Background(), `SELECT rowid - ? FROM messages_fts WHERE rowid BETWEEN ? AND ? ORDER BY rowid`, lo, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var c int64
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// filler is n bytes of words no test searches for.
func filler(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "filler%d ", i%97)
	}
	return b.String()[:n]
}

// A 3 MiB reply is indexed in chunks: a word in its eighth chunk is found,
// once, with a snippet around it; a word in every chunk finds the reply
// once; a word cut across a chunk's end is found whole; tool names are in
// chunk 0 only; two words in different chunks do not match together.
func TestSearchBigReplyInChunks(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{Title: "Big"})
	text := []byte(filler(3 << 20))
	put := func(at int, w string) {
		copy(text[at:], " "+w+" ")
	}
	put(7*chunkSize+1000, "aardvark")
	put(chunkSize-4, "boundaryword") // across chunk 0's end
	put(100, "firstchunkword")
	// Markers are not text.
	copy(text[2*chunkSize+500:], " \x01\x02mark\x01ed\x02 ")
	big := finalReply(t, db, th.ID, string(text))
	small := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("a small message about filler1 and filler2 and the aardvark")})

	if got, n := ftsRows(t, db, big.ID), len(searchChunks(string(text))); len(got) < 12 || len(got) != n || got[0] != 0 || got[n-1] != int64(n-1) {
		t.Errorf("the 3 MiB reply has rows %v, want chunks 0 to %d", got, n-1)
	}
	var at int64
	if err := db.reader.QueryRowContext(ctx, `SELECT rowid & 4095 FROM messages_fts WHERE messages_fts MATCH 'aardvark' AND rowid >> 12 <> (SELECT pk FROM messages WHERE id = ?)`, small.ID).Scan(&at); err != nil || at != 7 {
		t.Errorf("aardvark is in chunk %d (%v), want 7", at, err)
	}
	hits := mustSearch(t, db, "aardvark ")
	if got := hitKeys(hits); len(got) != 2 || !reflect.DeepEqual(got[0:1], []string{"text:" + small.ID}) && !reflect.DeepEqual(got[1:], []string{"text:" + small.ID}) {
		t.Fatalf("aardvark: %v, want the reply and the small message once each", got)
	}
	for _, h := range hits {
		if s := snippetText(h.Snippet); h.MessageID == big.ID && (!strings.Contains(s, "[aardvark]") || len(s) > 400) {
			t.Errorf("the reply's snippet %q is not the words around its match", s)
		}
	}
	for q, want := range map[string][]string{
		"boundaryword ":           {"text:" + big.ID},
		"firstchunkword ":         {"text:" + big.ID},
		"marked ":                 {"text:" + big.ID},
		"read_file ":              {"tool:" + big.ID},
		"filler5 ":                {"text:" + big.ID}, // in every chunk
		"firstchunkword aardvark": {},                 // chunks 0 and 7: not within one chunk
	} {
		if got := hitKeys(mustSearch(t, db, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
	var tools int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'tools : read_file'`).Scan(&tools); err != nil || tools != 1 {
		t.Errorf("the tool name is in %d rows (%v), want chunk 0's only", tools, err)
	}

	// The reply's final content written again, smaller: no chunk stays.
	if err := db.UpdateMessage(ctx, big.ID, agentcore.TextContent("now short"), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if got := ftsRows(t, db, big.ID); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("after a shorter final write, rows %v, want chunk 0", got)
	}
	if got := mustSearch(t, db, "aardvark "); len(got) != 1 {
		t.Errorf("aardvark after the reply was replaced: %v", hitKeys(got))
	}
}

// Writes that index a message again from its stored content (MarkMessage,
// the recovery at Open: indexStored) leave one row, chunk 0, and no chunk
// of before; deleting a message, a thread, or the trash, takes every chunk.
func TestSearchChunksGoWithTheirMessage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	text := filler(2<<20) + " zebu"
	marked := finalReply(t, db, th.ID, text)
	if got := ftsRows(t, db, marked.ID); len(got) < 8 || len(got) != len(searchChunks(text)) {
		t.Fatalf("rows %v, want %d chunks", got, len(searchChunks(text)))
	}
	if err := db.MarkMessage(ctx, marked.ID, agentcore.StatusError, map[string]string{"error": "boom"}); err != nil {
		t.Fatal(err)
	}
	if got := ftsRows(t, db, marked.ID); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("after MarkMessage, rows %v, want chunk 0 only", got)
	}
	if got := hitKeys(mustSearch(t, db, "zebu")); !reflect.DeepEqual(got, []string{"text:" + marked.ID}) {
		t.Errorf("zebu after MarkMessage: %v", got)
	}

	deleted := finalReply(t, db, th.ID, text)
	if err := db.DeleteMessage(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(ftsRows(t, db, deleted.ID)); n != 0 {
		t.Errorf("%d rows of no message after DeleteMessage", n)
	}

	trashed := mustThread(t, db, agentcore.Thread{})
	inTrash := finalReply(t, db, trashed.ID, filler(2<<20)+" gnu")
	at := time.Now()
	if err := db.TrashThread(ctx, trashed.ID, at); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, db, "gnu"); len(got) != 0 {
		t.Errorf("a trashed chat's reply is found: %v", hitKeys(got))
	}
	if _, err := db.PurgeTrash(ctx, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := len(ftsRows(t, db, inTrash.ID)); n != 0 {
		t.Errorf("%d rows of no message after the trash was emptied", n)
	}
	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "messages_fts"); n != 0 {
		t.Errorf("%d rows in messages_fts with no message left", n)
	}
}

// One reply whose many chunks all rank above every other match is one hit:
// the search asks for more rows until it has limit messages.
func TestSearchDedupesChunks(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	var small []string
	for i := range 5 {
		m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
			Content: agentcore.TextContent(fmt.Sprintf("the lemur number %d sleeps among many other words of a longer message", i))})
		small = append(small, m.ID)
	}
	// The word once in every 1 KiB: each chunk ranks above the small
	// messages, and makes its snippet quickly (FTS5's snippet() weighs
	// every match of the chunk against every other).
	big := finalReply(t, db, th.ID, strings.Repeat(filler(1000)+" lemur ", 3<<10))
	for _, limit := range []int{1, 2, 3, 6, 20} {
		hits, err := db.Search(ctx, agentcore.SearchQuery{Text: "lemur ", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := min(limit, 6)
		seen := map[string]bool{}
		for _, h := range hits {
			if seen[h.MessageID] {
				t.Errorf("limit %d: %s found twice", limit, h.MessageID)
			}
			seen[h.MessageID] = true
		}
		for _, id := range small {
			if limit >= 6 && !seen[id] {
				t.Errorf("limit %d: the small message %s is not found", limit, id)
			}
		}
		if len(hits) != want || hits[0].MessageID != big.ID {
			t.Errorf("limit %d: %v, want %d hits, the reply first (%s)", limit, hitKeys(hits), want, big.ID)
		}
	}
}

// The message of a row is found by its primary key, and the rows by FTS5's
// index, with no scan of messages or threads.
func TestSearchQueryPlan(t *testing.T) {
	db := openTest(t)
	rows, err := db.reader.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+messageHitsQuery+` ORDER BY rank LIMIT ?`,
		snippetTokens, `"x"`, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	all := strings.Join(plan, "; ")
	for _, want := range []string{"SCAN messages_fts VIRTUAL TABLE INDEX", "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)",
		"SEARCH t USING INDEX"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan %q, want %q", all, want)
		}
	}
	if strings.Contains(all, "TEMP B-TREE") || strings.Contains(all+";", "SCAN m;") || strings.Contains(all+";", "SCAN t;") {
		t.Errorf("plan %q sorts or scans", all)
	}
}

// A database of 0019 (messages_fts rowid = messages.pk) opens on chunked
// rows with every message found as before: text, tool names weighted
// twice, a reply cut short, and neither a deleted message nor a trashed
// chat's.
func TestSearchMigrationChunks(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := databaseAsOf(t, 19)
	exec(`INSERT INTO resources (id, created_at, updated_at) VALUES ('r', 0, 0)`)
	exec(`INSERT INTO threads (id, resource_id, title, created_at, updated_at) VALUES ('th', 'r', 'Old chat', 0, 0),
		('trashed', 'r', 'Trashed chat', 0, 0)`)
	for i, m := range []struct {
		id, thread string
		c          agentcore.Content
		status     agentcore.MessageStatus
	}{
		{"u1", "th", agentcore.TextContent("where is the okapi now"), agentcore.StatusComplete},
		{"a1", "th", toolMessage("", "the okapi is in the forest", "search_content").Content, agentcore.StatusComplete},
		{"a2", "th", agentcore.TextContent("an okapi cut sh"), agentcore.StatusInterrupted},
		{"gone", "th", agentcore.TextContent("a deleted okapi"), agentcore.StatusComplete},
		{"x1", "trashed", agentcore.TextContent("a trashed okapi"), agentcore.StatusComplete},
	} {
		c, err := encodeContent(m.c)
		if err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type, chosen_at)
			VALUES (?, ?, 'r', ?, 'user', ?, ?, '', ?, '', 0)`, m.id, m.thread, i+1, string(c), m.status, i)
	}
	exec(`DELETE FROM messages WHERE id = 'gone'`)
	exec(`UPDATE threads SET deleted_at = ? WHERE id = 'trashed'`, ms(time.Now().Add(time.Hour)))
	var before int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts`).Scan(&before); err != nil || before != 4 {
		t.Fatalf("%d rows in 0019's messages_fts (%v), want 4", before, err)
	}
	// The ranking as 0019's search made it.
	var ranked []string
	rows, err := raw.QueryContext(ctx, `SELECT 'text:' || m.id FROM messages_fts JOIN messages AS m ON m.pk = messages_fts.rowid
		JOIN threads AS t ON t.id = m.thread_id WHERE messages_fts MATCH 'okapi' AND t.deleted_at IS NULL ORDER BY rank`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		ranked = append(ranked, k)
	}
	rows.Close()
	raw.Close()

	db := openAt(t, path)
	if got := hitKeys(mustSearch(t, db, "okapi")); len(got) != 3 || !reflect.DeepEqual(got, ranked) {
		t.Errorf("okapi after the migration: %v, want %v as before", got, ranked)
	}
	if got := hitKeys(mustSearch(t, db, "search")); !reflect.DeepEqual(got, []string{"tool:a1"}) {
		t.Errorf("a tool name after the migration: %v", got)
	}
	for _, id := range []string{"u1", "a1", "a2", "x1"} {
		if got := ftsRows(t, db, id); !reflect.DeepEqual(got, []int64{0}) {
			t.Errorf("%s: rows %v after the migration, want chunk 0", id, got)
		}
	}
	if n := count(t, db, "messages_fts"); n != 4 {
		t.Errorf("%d rows after the migration, want 4", n)
	}
	var rank string
	if err := db.reader.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'rank'`).Scan(&rank); err != nil || rank != "bm25(2.0, 1.0)" {
		t.Errorf("rank %q (%v)", rank, err)
	}
	var old int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name LIKE 'messages_fts_0005%'`).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d of 0019's tables left (%v)", old, err)
	}
	// The triggers: a new message is chunk 0, a deleted one goes whole.
	m := mustAppend(t, db, agentcore.Message{ThreadID: "th", Role: agentcore.RoleUser, Content: agentcore.TextContent("a new okapi")})
	if got := ftsRows(t, db, m.ID); !reflect.DeepEqual(got, []int64{0}) {
		t.Errorf("a new message's rows %v", got)
	}
	if err := db.DeleteThread(ctx, "th"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "messages_fts"); n != 1 { // x1's, until its chat's trash is emptied
		t.Errorf("%d rows after the chat was deleted, want 1", n)
	}
	if got := mustSearch(t, db, "okapi"); len(got) != 0 {
		t.Errorf("okapi after deleting: %v", hitKeys(got))
	}
}
