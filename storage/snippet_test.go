package storage

import (
	"strings"
	"testing"

	"parley/agentcore"
)

// A snippet is about n tokens around the query's words, the window with
// the most different words first, an ellipsis where the text goes on:
// words are found as FTS5 finds them (any case, without diacritics, the
// last word as a prefix while it is typed, a word of several tokens as a
// phrase), and markup and runes of several bytes are cut only between
// words.
func TestSnippetOf(t *testing.T) {
	for _, c := range []struct{ query, text, want string }{
		{"zebra", "no match at all here or there", "no match at all here…"},
		{"one", "One", "[One]"},
		{"f ", "a b c d e F g h i j k l m n o p", "…e [F] g h i…"},
		{"a ", "a b c d e f g h i j k l m n o p", "[a] b c d e…"},
		{"o ", "a b c d e f g h i j k l m n o p.", "…l m n [o] p."},
		// The window with both words beats the first match alone.
		{"x y ", "x q q q q q q q q x r y s t u v w", "…q [x] r [y] s…"},
		{"SS ", "<b>é</b> ü ö ß ss ñ ç à", "…ß [ss] ñ ç à"},
		{"cafe", "un café crème", "un [café] crème"},
		{"Über", "über alles", "[über] alles"},
		{"語", "日本 語 テキスト", "日本 [語] テキスト"},
		{"foo-bar", "a foo bar b foo c", "a [foo] [bar] b foo…"},
		{"kube", "run kubernetes now", "run [kubernetes] now"},
		{"kube ", "run kubernetes now", "run kubernetes now"},
	} {
		got, matched := snippetOf(c.text, queryPhrases(c.query), 5)
		got = strings.NewReplacer(markOpen, "[", markClose, "]").Replace(got)
		if got != c.want || matched != strings.Contains(c.want, "[") {
			t.Errorf("snippetOf(%q, %q) = %q, %v; want %q", c.text, c.query, got, matched, c.want)
		}
	}
}

// One word a model repeated over a whole chunk: one short snippet, read
// no further than its first matches.
func TestSnippetOfRepeatedWord(t *testing.T) {
	big := strings.Repeat("lemur ", chunkSize/6)
	got, _ := snippetOf(big, queryPhrases("lemur"), snippetTokens)
	if strings.Count(got, markOpen) != snippetTokens || len(got) > 200 {
		t.Errorf("a chunk of one word: snippet of %d bytes with %d matches", len(got), strings.Count(got, markOpen))
	}
	toks, whole := matchTokens(big, queryPhrases("lemur"), snippetTokens)
	if whole || len(toks) != maxSnippetMatches+snippetTokens {
		t.Errorf("read %d tokens (whole %v), want %d", len(toks), whole, maxSnippetMatches+snippetTokens)
	}
}

// Search cuts its snippets itself, never with FTS5's snippet() or
// highlight() of a message's text, whose cost grows with the square of a
// row's matches (a 256 KiB chunk of one word took 20 s to search, the
// highlight of a 1 MiB row 7.8 s).
func TestSearchCutsItsOwnSnippets(t *testing.T) {
	if strings.Contains(messageHitsQuery, "snippet(") || strings.Contains(messageHitsQuery, "highlight(messages_fts, 1") {
		t.Fatalf("messageHitsQuery has FTS5 cut the text: %s", messageHitsQuery)
	}
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Content: agentcore.TextContent(strings.Repeat("lemur ", chunkSize/6)), Status: agentcore.StatusComplete})
	hits := mustSearch(t, db, "lemur")
	if len(hits) != 1 || strings.Count(snippetText(hits[0].Snippet), "[lemur]") != snippetTokens {
		t.Fatalf("hits %v, snippet %q", hitKeys(hits), snippetText(hits[0].Snippet))
	}
}
