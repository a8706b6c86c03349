package storage

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"parley/agentcore"
)

const (
	// maxSearchLimit bounds one search: a search box, not an export.
	maxSearchLimit = 100
	// maxTitleHits: titles rank first (a title names a whole thread), so a
	// common word in many titles must not push every message hit out.
	maxTitleHits = 5
	// maxSearchWords bounds the cost of a query pasted into the box; every
	// word must match, so later words could only narrow the hits further.
	maxSearchWords = 16
	// snippetTokens is about one line of the search box.
	snippetTokens = 14
	// rankWindow bounds the cost of a word that most messages have: bm25
	// ranks only the rankWindow most recent matches (~5 ms on 100,000
	// messages, where ranking all 60,000 matches of a common word takes
	// ~100 ms). Finding the window walks the match list without ranking.
	rankWindow = 2000

	// The markers snippet() and highlight() put around matches. Migration
	// 0005 keeps both out of the indexed text, so they are unambiguous.
	markOpen  = "\x01"
	markClose = "\x02"
)

// Search finds messages by their text and by the names of the tools they
// call, and threads by their title. Thread hits come first (at most
// maxTitleHits), then message hits; each group is ranked by bm25. The
// query's words are quoted before FTS5 sees them (see matchExpr), so no
// input is a syntax error.
func (db *DB) Search(ctx context.Context, q agentcore.SearchQuery) ([]agentcore.SearchHit, error) {
	expr := matchExpr(q.Text)
	if expr == "" {
		return nil, nil
	}
	limit := min(cmp.Or(q.Limit, agentcore.DefaultSearchLimit), maxSearchLimit)
	if limit < 0 {
		return nil, fmt.Errorf("search %q: limit %d is negative", q.Text, q.Limit)
	}
	hits, err := db.searchTitles(ctx, expr, min(limit, maxTitleHits))
	if err != nil {
		return nil, fmt.Errorf("search %q in thread titles: %w", q.Text, err)
	}
	more, err := db.searchMessages(ctx, expr, queryPhrases(q.Text), limit-len(hits))
	if err != nil {
		return nil, fmt.Errorf("search %q in messages: %w", q.Text, err)
	}
	return append(hits, more...), nil
}

func (db *DB) searchTitles(ctx context.Context, expr string, limit int) ([]agentcore.SearchHit, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT t.id, t.title, highlight(threads_fts, 0, char(1), char(2)), t.updated_at
		FROM threads_fts
		JOIN thread_search_keys AS k ON k.n = threads_fts.rowid
		JOIN threads AS t ON t.id = k.thread_id
		WHERE threads_fts MATCH ? AND t.deleted_at IS NULL
		ORDER BY rank LIMIT ?`, expr, limit)
	if err != nil {
		return nil, err
	}
	return collectHits(rows, func(rows *sql.Rows) (agentcore.SearchHit, error) {
		h := agentcore.SearchHit{Field: agentcore.HitTitle}
		var title string
		var at int64
		if err := rows.Scan(&h.ThreadID, &h.ThreadTitle, &title, &at); err != nil {
			return h, err
		}
		h.Snippet, h.At = snippetParts(title), fromMS(at)
		return h, nil
	})
}

// searchMessages ranks with the table's rank (bm25, tool names weighted
// twice, see 0005_search.sql): FTS5 then hands rows over best first, so
// the snippets are made only for the rows returned. When more than
// rankWindow rows match, only the most recent rankWindow are ranked (a
// row's rowid is messages.pk<<chunkBits | chunk, and pk grows with every
// message).
//
// A message over chunkFrom is several rows (index.go), which may all
// match: it is one hit, its best-ranked chunk's, and the query is asked
// again for more rows when those left fewer than limit hits. Such a
// message matches only when every word of the query occurs within one of
// its chunks (about chunkSize), and its chunks count in the rankWindow.
func (db *DB) searchMessages(ctx context.Context, expr string, phrases []phrase, limit int) ([]agentcore.SearchHit, error) {
	if limit <= 0 {
		return nil, nil
	}
	var after int64
	err := db.reader.QueryRowContext(ctx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?
		ORDER BY rowid DESC LIMIT 1 OFFSET ?`, expr, rankWindow).Scan(&after)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	for rowsWanted := limit; ; rowsWanted *= 4 {
		hits, rows, err := db.searchRows(ctx, expr, phrases, after, rowsWanted, limit)
		if err != nil || len(hits) == limit || rows < rowsWanted {
			return hits, err
		}
	}
}

// searchRows returns the first limit messages of the rowsWanted
// best-ranked rows that match, and how many rows there were.
func (db *DB) searchRows(ctx context.Context, expr string, phrases []phrase, after int64, rowsWanted, limit int) ([]agentcore.SearchHit, int, error) {
	rows, err := db.reader.QueryContext(ctx, messageHitsQuery+` ORDER BY rank LIMIT ?`, expr, after, rowsWanted)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	seen := map[string]bool{}
	hits, err := collectHits(rows, func(rows *sql.Rows) (agentcore.SearchHit, error) {
		var h agentcore.SearchHit
		var text, tools string
		var at int64
		if err := rows.Scan(&h.MessageID, &h.ThreadID, &h.ThreadTitle, &h.Role, &at, &text, &tools); err != nil {
			return h, err
		}
		n++
		if seen[h.MessageID] || len(seen) == limit {
			return agentcore.SearchHit{}, errSkip
		}
		seen[h.MessageID] = true
		h.At = fromMS(at)
		// The text shows where it matched; when only a tool name did,
		// the names of the message's tools show instead.
		snippet, matched := snippetOf(text, phrases, snippetTokens)
		h.Field, h.Snippet = agentcore.HitText, snippetParts(snippet)
		if !matched && strings.Contains(tools, markOpen) {
			h.Field, h.Snippet = agentcore.HitTool, snippetParts(tools)
		}
		return h, nil
	})
	return hits, n, err
}

// messageHitsQuery finds the best-ranked rows of messages_fts that match
// ?1 above rowid ?2, with the message of each (looked up by its primary
// key), its text (snippetOf cuts the snippet from it) and its tools
// highlighted; ORDER BY rank LIMIT follows.
var messageHitsQuery = `SELECT m.id, m.thread_id, t.title, m.role, m.created_at,
		messages_fts.text, highlight(messages_fts, 0, char(1), char(2))
	FROM messages_fts
	JOIN messages AS m ON m.pk = messages_fts.rowid >> ` + strconv.Itoa(chunkBits) + `
	JOIN threads AS t ON t.id = m.thread_id
	WHERE messages_fts MATCH ? AND messages_fts.rowid > ? AND t.deleted_at IS NULL`

// errSkip, from a collectHits scan, leaves the row out.
var errSkip = errors.New("skip")

func collectHits(rows *sql.Rows, scan func(*sql.Rows) (agentcore.SearchHit, error)) ([]agentcore.SearchHit, error) {
	defer rows.Close()
	var out []agentcore.SearchHit
	for rows.Next() {
		h, err := scan(rows)
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// matchExpr turns what the user typed into an FTS5 query that every word
// must match. Each word is a quoted FTS5 string (its own quotes doubled), so
// operators, column filters, parentheses and stars in it are plain text;
// the last word is also a prefix unless the text ends in a space. Control
// characters are dropped. No words: "".
func matchExpr(text string) string {
	words, prefix := queryWords(text)
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + strings.ReplaceAll(w, `"`, `""`) + `"`)
		if prefix && i == len(words)-1 {
			b.WriteByte('*')
		}
	}
	return b.String()
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// snippetParts splits a snippet marked by snippet() or highlight() into
// plain pieces.
func snippetParts(s string) []agentcore.SnippetPart {
	var out []agentcore.SnippetPart
	for s != "" {
		before, rest, found := strings.Cut(s, markOpen)
		if before != "" {
			out = append(out, agentcore.SnippetPart{Text: before})
		}
		if !found {
			break
		}
		match, after, _ := strings.Cut(rest, markClose)
		if match != "" {
			out = append(out, agentcore.SnippetPart{Text: match, Match: true})
		}
		s = after
	}
	return out
}
