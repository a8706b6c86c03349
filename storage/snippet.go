package storage

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A message hit's snippet is cut here, in Go, from its row's text: FTS5's
// snippet() scores a window at every match against every other match of
// the row, and highlight() rebuilds its whole result string at every
// match, both quadratic in a row's matches. A 256 KiB chunk of one word
// repeated (what a model may write) took 20 s to search with snippet(),
// and highlight() took 7.8 s for a 1 MiB row, which an import or an
// older database still holds whole. FTS5 still decides what matches and
// ranks it; here the query's words are found again in the text the way
// the unicode61 tokenizer (remove_diacritics 2) reads it, closely enough
// to mark them: a word missed here leaves the snippet unmarked, never the
// hit lost.

// maxSnippetMatches bounds the matches whose windows a snippet is chosen
// from: the first ones of the row. The text is read no further than the
// window after the last of them.
const maxSnippetMatches = 256

// phrase is a query word as snippetOf looks for it: its tokens, folded;
// the last may be a prefix.
type phrase struct {
	toks   []string
	prefix bool
}

// queryWords is what the user typed as search words: control characters
// are spaces, at most maxSearchWords words, and whether the last is a
// prefix (the text does not end in a space, and was not cut).
func queryWords(text string) (words []string, prefix bool) {
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)
	words = strings.Fields(text)
	prefix = len(words) > 0 && !unicode.IsSpace(lastRune(text))
	if len(words) > maxSearchWords {
		words, prefix = words[:maxSearchWords], false
	}
	return words, prefix
}

// queryPhrases is the query text's words as phrases of folded tokens.
func queryPhrases(text string) []phrase {
	words, prefix := queryWords(text)
	var out []phrase
	for i, w := range words {
		var p phrase
		for _, t := range tokens(w, 0) {
			p.toks = append(p.toks, fold(w[t.from:t.to]))
		}
		if len(p.toks) > 0 {
			p.prefix = prefix && i == len(words)-1
			out = append(out, p)
		}
	}
	return out
}

// fold is a token as unicode61 with remove_diacritics 2 indexes it,
// closely: lower case, without the marks of its decomposed letters.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s))
	}
	return strings.ToLower(s)
}

// token is a word of a text: bytes [from, to), folded (when read by
// matchTokens), and the number of the phrase that matched it, -1 for none.
type token struct {
	from, to int
	folded   string
	phrase   int
}

// tokens splits text into words as FTS5's unicode61 tokenizer does,
// closely (letters, digits, marks and private-use runes), stopping once
// it has limit words (0: all of them).
func tokens(text string, limit int) []token {
	var out []token
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isTokenRune(r) {
				break
			}
			j += size
		}
		out = append(out, token{from: i, to: j, phrase: -1})
		if len(out) == limit {
			break
		}
		i = j
	}
	return out
}

func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// snippetOf cuts a snippet of about n tokens from text, the query's
// phrases marked (markOpen, markClose), as snippet() would: the window
// with the most different phrases, then the most matches, an ellipsis
// where the text goes on. A text with no match gives its first n tokens
// and false.
func snippetOf(text string, phrases []phrase, n int) (string, bool) {
	toks, whole := matchTokens(text, phrases, n)
	if len(toks) == 0 {
		return text, false
	}
	start, matched := bestWindow(toks, n)
	end := min(start+n, len(toks))
	from, to := toks[start].from, toks[end-1].to
	if start == 0 {
		from = 0
	}
	last := whole && end == len(toks)
	if last {
		to = len(text)
	}
	var b strings.Builder
	b.Grow(to - from + 32)
	if start > 0 {
		b.WriteString("…")
	}
	at := from
	for _, t := range toks[start:end] {
		if t.phrase < 0 {
			continue
		}
		b.WriteString(text[at:t.from])
		b.WriteString(markOpen)
		b.WriteString(text[t.from:t.to])
		b.WriteString(markClose)
		at = t.to
	}
	b.WriteString(text[at:to])
	if !last {
		b.WriteString("…")
	}
	return b.String(), matched
}

// matchTokens reads text's tokens, each phrase's matches marked, as far
// as the window after the maxSnippetMatches-th match; whole says it read
// all of text.
func matchTokens(text string, phrases []phrase, n int) (toks []token, whole bool) {
	matches, stopAt := 0, -1
	for at := 0; at < len(text); {
		next := tokens(text[at:], 1)
		if len(next) == 0 {
			return toks, true
		}
		t := next[0]
		t.from += at
		t.to += at
		t.folded = fold(text[t.from:t.to])
		at = t.to
		toks = append(toks, t)
		if stopAt >= 0 && len(toks) >= stopAt {
			return toks, tokens(text[at:], 1) == nil
		}
		// A phrase ending at this token marks all of its tokens.
		for pi, p := range phrases {
			k := len(p.toks)
			if k > len(toks) || !phraseAt(toks[len(toks)-k:], p) {
				continue
			}
			for i := len(toks) - k; i < len(toks); i++ {
				if toks[i].phrase < 0 {
					toks[i].phrase = pi
				}
			}
			if matches++; matches == maxSnippetMatches {
				stopAt = len(toks) + n
			}
			break
		}
	}
	return toks, true
}

// phraseAt reports whether toks, as long as p, are p's tokens.
func phraseAt(toks []token, p phrase) bool {
	for i, want := range p.toks {
		got := toks[i].folded
		if p.prefix && i == len(p.toks)-1 {
			if !strings.HasPrefix(got, want) {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}

// bestWindow is the first token of the n-token window to show, and
// whether any token matched: among the windows that put a match at their
// second token (or at the text's start), the one with the most different
// phrases, then the most matched tokens.
func bestWindow(toks []token, n int) (int, bool) {
	best, bestScore := 0, -1
	var seen []int
	for i, t := range toks {
		if t.phrase < 0 {
			continue
		}
		start := max(0, min(i-1, len(toks)-n))
		seen = seen[:0]
		score := 0
		for _, w := range toks[start:min(start+n, len(toks))] {
			if w.phrase < 0 {
				continue
			}
			score++
			if !containsInt(seen, w.phrase) {
				seen = append(seen, w.phrase)
				score += 1000
			}
		}
		if score > bestScore {
			best, bestScore = start, score
		}
	}
	return best, bestScore >= 0
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
