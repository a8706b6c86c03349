package markdown

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// chromaTestdata is chroma's own lexer test files (lexers/testdata/*.actual)
// in the module cache: go test runs with go at hand, so not finding them
// fails the test rather than letting quickLexer go unchecked.
func chromaTestdata(t testing.TB) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	if err != nil {
		t.Fatalf("cannot find chroma's module (go list -m): %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "lexers", "testdata")
}

// tokensOf lists what it yields; a panic is a token of its own, so that
// both lexers must panic alike.
func tokensOf(it func() (chroma.Iterator, error)) (tokens []chroma.Token) {
	defer func() {
		if p := recover(); p != nil {
			tokens = append(tokens, chroma.Token{Type: chroma.Error, Value: "panic"})
		}
	}()
	iter, err := it()
	if err != nil {
		return []chroma.Token{{Type: chroma.Error, Value: "error: " + err.Error()}}
	}
	for t := iter(); t != chroma.EOF; t = iter() {
		tokens = append(tokens, t)
	}
	return tokens
}

// sameTokens checks that quickLexer lexes text as chroma does, token for
// token, as they come and, when coalesced is set, also coalesced as
// highlight takes them.
func sameTokens(t *testing.T, name string, l chroma.Lexer, q *quickLexer, text string, coalesced bool) {
	t.Helper()
	pairs := []struct {
		how       string
		want, got func() (chroma.Iterator, error)
	}{
		{"raw", func() (chroma.Iterator, error) { return l.Tokenise(nil, text) },
			func() (chroma.Iterator, error) { return q.Tokenise(text), nil }},
		{"coalesced", func() (chroma.Iterator, error) { return chroma.Coalesce(l).Tokenise(nil, text) },
			func() (chroma.Iterator, error) { return coalesce(q.Tokenise(text)), nil }},
	}
	if !coalesced {
		pairs = pairs[:1]
	}
	for _, p := range pairs {
		want, got := tokensOf(p.want), tokensOf(p.got)
		if len(want) != len(got) {
			t.Errorf("%s (%s): %d tokens, chroma makes %d", name, p.how, len(got), len(want))
		}
		for i := range min(len(want), len(got)) {
			if want[i] != got[i] {
				t.Errorf("%s (%s): token %d is %v, chroma's is %v", name, p.how, i, got[i], want[i])
				break
			}
		}
	}
}

// Every lexer chroma tests, on its own test file and on pieces of it (a
// code block is often cut short while it streams): the same tokens.
func TestQuickLexerAsChroma(t *testing.T) {
	dir := chromaTestdata(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.actual"))
	if err != nil || len(files) < 100 {
		t.Fatalf("chroma's test files: %d, %v", len(files), err)
	}
	quick := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".actual")
		l := lexers.Get(name)
		if l == nil {
			continue
		}
		q, ok := newQuickLexer(l)
		if !ok {
			continue
		}
		quick++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Some files run to tens of KiB, which chroma takes a while over,
		// and ten times that under the race detector.
		text := strings.ToValidUTF8(string(data[:min(len(data), 4<<10)]), "")
		sameTokens(t, name, l, q, text, false)
		sameTokens(t, name+" cut", l, q, strings.ToValidUTF8(text[:len(text)*2/3], ""), false)
	}
	if quick < 100 {
		t.Errorf("quickLexer ran %d of chroma's lexers, want most of them", quick)
	}
	t.Logf("%d lexers compared", quick)
}

// The code samples of the other tests and hostile code, in every language
// they name, and a few oddities (no final newline, \r line ends, tabs,
// non-ASCII runes).
func TestQuickLexerSamples(t *testing.T) {
	samples := []string{hostileCode, "", "\n", "x", "a\r\nb\rc", "\t\tfunc é(ü string) {}\n", "/* open comment", "\"open string\nnext",
		"ǅ := 'λ' // ☃\n", "SELECT * FROM t WHERE x = 'y';\n", "sElEcT İ, ı, \u212A FrOm ǅ;\nBEGİN ſelect\n", "#!/bin/sh\necho $((1+2))\n"}
	for _, lang := range []string{"go", "python", "javascript", "typescript", "html", "bash", "sql", "rust", "json", "yaml", "diff", "c", "cpp", "java", "ruby", "php", "css", "markdown", "toml", "dockerfile", "kotlin", "swift", "haskell", "lua", "perl"} {
		l := lexers.Get(lang)
		if l == nil {
			t.Fatalf("no lexer for %s", lang)
		}
		q, ok := newQuickLexer(l)
		if !ok {
			continue
		}
		for _, s := range samples {
			sameTokens(t, lang, l, q, s, true)
		}
	}
}

// A rule whose matches all begin with one of a few words is not tried
// where none of them begins the text: Go's keyword rules at an identifier
// that starts like a keyword. Without the start filter every rule whose
// first runes allow the identifier's first one was tried there.
func TestStartFilterSkipsRules(t *testing.T) {
	q, ok := newQuickLexer(lexers.Get("go"))
	if !ok {
		t.Fatal("no quickLexer for Go")
	}
	var keywords *startFilter
	for i, r := range q.states["root"].rules {
		if strings.Contains(r.Pattern, "continue") {
			keywords = q.states["root"].starts[i]
		}
	}
	if keywords == nil {
		t.Fatal("Go's root state has no start filter for its keyword rule")
	}
	for text, want := range map[string]bool{"compute(1)": false, "cases": true, "continue\n": true, "x": false, "c": false, "é": false} {
		if got := keywords.allows([]rune(text), 0); got != want {
			t.Errorf("keyword rule at %q: tried %v, want %v", text, got, want)
		}
	}
	if !(*startFilter)(nil).allows([]rune("x"), 0) {
		t.Error("a rule with no filter is not tried")
	}
}

// fuzzLangs are the languages FuzzQuickLexer picks from: those models
// write most, and a few with lexers of many states.
var fuzzLangs = []string{"go", "python", "javascript", "typescript", "rust", "bash", "c", "cpp", "java", "ruby", "php", "sql", "html", "css", "json", "yaml", "markdown", "diff", "haskell", "perl"}

func FuzzQuickLexer(f *testing.F) {
	f.Add(uint8(0), hostileCode)
	f.Add(uint8(1), "def f(x):\n    '''doc\n    <b>'''\n    return x  # </span>\n")
	f.Add(uint8(2), "const a = `<script>${b}</script>`;\n/* multi\nline */ let c = /re<g>/g;\n")
	f.Add(uint8(4), "fn main() { let r = r#\"</span>\"#; }\n")
	f.Fuzz(func(t *testing.T, which uint8, code string) {
		lang := fuzzLangs[int(which)%len(fuzzLangs)]
		l := lexers.Get(lang)
		cl := lexerFor(lang) // compiled once
		if cl == nil || cl.quick == nil {
			t.Skipf("%s: no quickLexer", lang)
		}
		sameTokens(t, lang, l, cl.quick, code, true)
	})
}
