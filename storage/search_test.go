package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"parley/agentcore"
)

func mustSearch(t *testing.T, db *DB, text string) []agentcore.SearchHit {
	t.Helper()
	hits, err := db.Search(context.Background(), agentcore.SearchQuery{Text: text})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return hits
}

// hitKey names a hit for comparisons: "title:<thread>" or "<field>:<message>".
func hitKey(h agentcore.SearchHit) string {
	if h.MessageID == "" {
		return h.Field + ":" + h.ThreadID
	}
	return h.Field + ":" + h.MessageID
}

func hitKeys(hs []agentcore.SearchHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, hitKey(h))
	}
	return out
}

// snippetText shows a snippet with its matches in [brackets].
func snippetText(ps []agentcore.SnippetPart) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Match {
			b.WriteString("[" + p.Text + "]")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func toolMessage(threadID, text string, tools ...string) agentcore.Message {
	c := agentcore.Content{Format: 2}
	for i, name := range tools {
		c.Parts = append(c.Parts, agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
			State: "result", ToolCallID: "call-" + name + string(rune('a'+i)), ToolName: name,
			Args: json.RawMessage(`{"pattern":"haystack"}`), Result: json.RawMessage(`"needle found"`)}})
	}
	if text != "" {
		c.Parts = append(c.Parts, agentcore.Part{Type: "text", Text: text})
	}
	return agentcore.Message{ThreadID: threadID, Role: agentcore.RoleAssistant, Content: c}
}

func TestSearchRanking(t *testing.T) {
	db := openTest(t)
	titled := mustThread(t, db, agentcore.Thread{Title: "Kubernetes migration plan"})
	other := mustThread(t, db, agentcore.Thread{Title: "Groceries"})
	once := mustAppend(t, db, agentcore.Message{ThreadID: other.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("We talked about many things today, the weather, the garden, a film, and kubernetes once, briefly, before dinner.")})
	dense := mustAppend(t, db, agentcore.Message{ThreadID: other.ID, Role: agentcore.RoleAssistant,
		Content: agentcore.TextContent("Kubernetes: kubernetes pods, kubernetes services.")})
	tool := mustAppend(t, db, toolMessage(titled.ID, "Done, I looked through the files.", "search_content", "view"))
	mustAppend(t, db, agentcore.Message{ThreadID: titled.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("nothing to see here")})

	// A title names the whole thread: it comes before message hits, which
	// rank by bm25 (the denser, shorter message first).
	got := hitKeys(mustSearch(t, db, "kubernetes"))
	want := []string{"title:" + titled.ID, "text:" + dense.ID, "text:" + once.ID}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kubernetes: hits %v, want %v", got, want)
	}

	// Tool names are searched, by their whole name or a word of it; the
	// snippet then shows the tool names. Arguments and results are not.
	for _, q := range []string{"search_content", "search content", "content"} {
		hits := mustSearch(t, db, q)
		if got := hitKeys(hits); !reflect.DeepEqual(got, []string{"tool:" + tool.ID}) {
			t.Errorf("%q: hits %v, want the tool call", q, got)
			continue
		}
		if s := snippetText(hits[0].Snippet); !strings.Contains(s, "[") || !strings.Contains(s, "view") {
			t.Errorf("%q: tool snippet %q", q, s)
		}
		if hits[0].ThreadTitle != titled.Title || hits[0].Role != agentcore.RoleAssistant {
			t.Errorf("%q: hit %+v", q, hits[0])
		}
	}
	for _, q := range []string{"haystack", "needle"} {
		if got := mustSearch(t, db, q); len(got) != 0 {
			t.Errorf("%q matched tool arguments or results: %v", q, hitKeys(got))
		}
	}

	// Every word must match; the last one as a prefix while it is typed.
	if got := hitKeys(mustSearch(t, db, "kubernetes ser")); !reflect.DeepEqual(got, []string{"text:" + dense.ID}) {
		t.Errorf("kubernetes ser: %v", got)
	}
	if got := mustSearch(t, db, "kubernetes ser "); len(got) != 0 {
		t.Errorf("a finished word is not a prefix: %v", hitKeys(got))
	}

	hits := mustSearch(t, db, "kubern")
	if len(hits) != 3 || snippetText(hits[0].Snippet) != "[Kubernetes] migration plan" {
		t.Fatalf("kubern: %v, title snippet %q", hitKeys(hits), snippetText(hits[0].Snippet))
	}
	if s := snippetText(hits[2].Snippet); !strings.Contains(s, "and [kubernetes]") {
		t.Errorf("text snippet %q", s)
	}
	if hits[1].At.IsZero() || hits[0].At.IsZero() {
		t.Errorf("hits without a time: %+v", hits)
	}
}

func TestSearchFollowsChanges(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{Title: "Alpha"})
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent("bravo")})

	title := "Charlie"
	if _, err := db.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, db, "alpha"); len(got) != 0 {
		t.Errorf("old title still found: %v", hitKeys(got))
	}
	if got := hitKeys(mustSearch(t, db, "charlie")); !reflect.DeepEqual(got, []string{"title:" + th.ID}) {
		t.Errorf("new title: %v", got)
	}
	if got := mustSearch(t, db, "bravo"); len(got) != 1 || got[0].ThreadTitle != "Charlie" {
		t.Errorf("message hit after rename: %+v", got)
	}

	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"charlie", "bravo"} {
		if got := mustSearch(t, db, q); len(got) != 0 {
			t.Errorf("%q found after the thread was deleted: %v", q, hitKeys(got))
		}
	}
	var keys int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM thread_search_keys`).Scan(&keys); err != nil || keys != 0 {
		t.Errorf("search keys left behind: %d (%v)", keys, err)
	}
	if _, err := db.GetMessage(ctx, m.ID); err == nil {
		t.Error("message outlived its thread")
	}
}

// Snippets are plain pieces: markup in a message stays text, and the
// characters the markers are made of cannot fake a match.
func TestSearchSnippetEscaping(t *testing.T) {
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{Title: "<b>bold</b> \x01title\x02"})
	text := "before <script>alert('x')</script> & \x01fake\x02 marker, then the real walrus & <i>after</i>"
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent(text)})

	hits := mustSearch(t, db, "walrus")
	if len(hits) != 1 || hits[0].MessageID != m.ID {
		t.Fatalf("walrus: %v", hitKeys(hits))
	}
	var matches []string
	var all strings.Builder
	for _, p := range hits[0].Snippet {
		if p.Match {
			matches = append(matches, p.Text)
		}
		all.WriteString(p.Text)
		if strings.ContainsAny(p.Text, "\x01\x02") {
			t.Errorf("a marker leaked into the snippet: %q", p.Text)
		}
	}
	if !reflect.DeepEqual(matches, []string{"walrus"}) {
		t.Errorf("matches %q, want only walrus", matches)
	}
	if s := all.String(); !strings.Contains(s, "<script>alert('x')</script>") || !strings.Contains(s, "fake marker") {
		t.Errorf("snippet text %q does not keep the message's text as text", s)
	}
	if got := mustSearch(t, db, "fake"); len(got) != 1 || snippetText(got[0].Snippet) == "" ||
		!strings.Contains(snippetText(got[0].Snippet), "[fake]") {
		t.Errorf("fake: %+v", got)
	}
	// The title's markup is text too.
	hits = mustSearch(t, db, "bold")
	if len(hits) != 1 || snippetText(hits[0].Snippet) != "<b>[bold]</b> title" {
		t.Errorf("title snippet: %+v", hits)
	}
}

// Whatever is typed, search answers: FTS5 syntax is plain text.
func TestSearchHostileQueries(t *testing.T) {
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{Title: "Quotes and stars"})
	mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent(`He said "hello world" AND left; NEAR the end: a*b (c) -d +e ^f title:g`)})
	for _, q := range []string{
		``, ` `, "\t\n", `"`, `""`, `"""`, `'`, `*`, `**`, `"*`, `*"`, `-`, `+`, `^`, `:`, `(`, `)`, `()`,
		`AND`, `OR`, `NOT`, `NEAR`, `NEAR(`, `NEAR(a b, 2)`, `hello OR`, `OR hello`, `NOT hello`, `hello AND`,
		`title:hello`, `text:hello`, `{text}: hello`, `tools : x`, `hello"`, `"hello`, `he"llo`, `hello*`,
		`a*b`, `\`, `\"`, "\x00", "hello\x00world", "\x01", "\x02walrus\x01", `%`, `_`, `;DROP TABLE messages;--`,
		`'); DELETE FROM messages; --`, "émoji 😀", "日本語", strings.Repeat("x", 10000), strings.Repeat("a ", 500),
		strings.Repeat(`"`, 101), strings.Repeat("(", 300),
	} {
		if _, err := db.Search(context.Background(), agentcore.SearchQuery{Text: q}); err != nil {
			t.Errorf("search %.40q: %v", q, err)
		}
	}
	// Syntax characters are plain text: the quoted phrase, the operators
	// and the column filter match as the words they are.
	for q, want := range map[string]int{
		`"hello world"`: 1, `hello AND`: 1, `NEAR`: 1, `title:g`: 1, `a*b`: 1, `(c)`: 1, `-d`: 1, `quotes`: 1,
		`hello OR nothinglikethis`: 0, `NOT`: 0, `*`: 0, ``: 0,
	} {
		if got := mustSearch(t, db, q+" "); len(got) != want {
			t.Errorf("%q: %d hits, want %d", q, len(got), want)
		}
	}
	if _, err := db.Search(context.Background(), agentcore.SearchQuery{Text: "hello", Limit: -1}); err == nil {
		t.Error("a negative limit is not refused")
	}
}

func TestMatchExpr(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"   ":             "",
		"foo":             `"foo"*`,
		"foo ":            `"foo"`,
		"foo bar":         `"foo" "bar"*`,
		`say "hi" OR bye`: `"say" """hi""" "OR" "bye"*`,
		"a\x00b":          `"a" "b"*`,
		"title:x\x01":     `"title:x"`,
		"NEAR(a b)":       `"NEAR(a" "b)"*`,
	} {
		if got := matchExpr(in); got != want {
			t.Errorf("matchExpr(%q) = %s, want %s", in, got, want)
		}
	}
	if got := strings.Count(matchExpr(strings.Repeat("w ", 40)+"x"), `"`); got != 2*maxSearchWords {
		t.Errorf("%d quotes: words beyond %d are not dropped", got, maxSearchWords)
	}
}

func TestSearchLimit(t *testing.T) {
	db := openTest(t)
	for i := range 8 {
		th := mustThread(t, db, agentcore.Thread{Title: "lemur " + string(rune('a'+i))})
		for range 15 {
			mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent("a lemur")})
		}
	}
	hits := mustSearch(t, db, "lemur")
	titles := 0
	for _, h := range hits {
		if h.Field == agentcore.HitTitle {
			titles++
		}
	}
	if len(hits) != agentcore.DefaultSearchLimit || titles != maxTitleHits {
		t.Errorf("%d hits (%d titles), want %d (%d titles)", len(hits), titles, agentcore.DefaultSearchLimit, maxTitleHits)
	}
	hits, err := db.Search(context.Background(), agentcore.SearchQuery{Text: "lemur", Limit: 1000})
	if err != nil || len(hits) != maxSearchLimit {
		t.Errorf("limit 1000: %d hits, %v; want %d", len(hits), err, maxSearchLimit)
	}
}

// A database made before search covered titles and tool names gets them
// indexed by the migration.
func TestSearchMigrationIndexesExisting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.version >= 5 {
			break
		}
		if _, err := raw.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := raw.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 0)`, m.version); err != nil {
			t.Fatal(err)
		}
	}
	content, _ := json.Marshal(toolMessage("", "the old ocelot", "execute_command").Content)
	for _, q := range []string{
		`INSERT INTO resources (id, created_at, updated_at) VALUES ('r', 0, 0)`,
		`INSERT INTO threads (id, resource_id, title, created_at, updated_at) VALUES ('t1', 'r', 'Ancient tapir', 0, 0)`,
		`INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, created_at)
			VALUES ('m1', 't1', 'r', 1, 'assistant', '` + string(content) + `', 'complete', 0)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := openAt(t, path)
	for q, want := range map[string][]string{
		"tapir":   {"title:t1"},
		"ocelot":  {"text:m1"},
		"execute": {"tool:m1"},
	} {
		if got := hitKeys(mustSearch(t, db, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	// New threads after the migration are indexed by the triggers.
	th := mustThread(t, db, agentcore.Thread{Title: "Young tapir"})
	if got := hitKeys(mustSearch(t, db, "tapir")); len(got) != 2 || !strings.Contains(strings.Join(got, " "), th.ID) {
		t.Errorf("tapir after a new thread: %v", got)
	}
}

// A word most messages have is ranked among its rankWindow most recent
// matches only; a rarer word is ranked over the whole history.
func TestSearchRankWindow(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	// The first message is the best match for "ubiquitous" by far, and the
	// only one for "rare".
	first := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("ubiquitous ubiquitous ubiquitous rare")})
	err := db.write(ctx, func(tx *sql.Tx) error {
		for i := range rankWindow + 10 {
			c, _ := json.Marshal(agentcore.TextContent("a long message where the word ubiquitous appears only once among many other words"))
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, created_at)
				VALUES (?, ?, ?, ?, 'user', ?, 'complete', 0)`, NewID(), th.ID, th.ResourceID, i+2, string(c)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hits := mustSearch(t, db, "ubiquitous")
	if len(hits) != agentcore.DefaultSearchLimit {
		t.Fatalf("%d hits", len(hits))
	}
	for _, h := range hits {
		if h.MessageID == first.ID {
			t.Errorf("a match older than the %d most recent was ranked", rankWindow)
		}
	}
	if got := hitKeys(mustSearch(t, db, "rare")); !reflect.DeepEqual(got, []string{"text:" + first.ID}) {
		t.Errorf("rare: %v", got)
	}
	// One fewer match than the window: the oldest is ranked, and wins.
	if _, err := db.writer.ExecContext(ctx, `DELETE FROM messages WHERE thread_id = ? AND seq > ?`, th.ID, rankWindow); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, db, "ubiquitous"); hits[0].MessageID != first.ID {
		t.Errorf("with %d matches the best one is not first: %v", rankWindow, hitKeys(hits[:3]))
	}
}
