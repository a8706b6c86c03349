package markdown

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// hostileCode tries to end the span, the <code> and the page around it.
const hostileCode = "x := \"</span></code><script>alert(1)</script>\" // <img src=x onerror=alert(1)>\n" +
	"y := `<!-- \n --> ]]> &amp; &lt;` /* </pre><iframe src=javascript:alert(1)> */\n"

// tokenSpans writes what chroma's own HTML formatter (classes, no <pre>)
// wrote, sanitised by the page's policy, which it replaces: for every
// language the corpus has, and for code written to break out of its span.
func TestTokenSpansAreChromaSanitised(t *testing.T) {
	formatter := chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true))
	policy := pipelineOnce().policy
	samples := map[string]string{
		"go":         hostileCode + "func main() {\n\tprintln(\"hi\") // done\n}\n",
		"python":     "def f(x):\n    '''doc\n    <b>'''\n    return x  # </span>\n",
		"javascript": "const a = `<script>${b}</script>`;\n/* multi\nline */ let c = /re<g>/g;\n",
		"html":       "<div onclick=\"alert(1)\">&amp;</div>\n<!-- </span> -->\n",
		"bash":       "cat <<EOF\n</span>\nEOF\necho \"$HOME\" 2>&1\n",
		"sql":        "SELECT '<b>' FROM t WHERE a = \"x\"; -- </code>\n",
		"rust":       "fn main() { let r = r#\"</span>\"#; }\n",
		"json":       "{\"a\": \"</span><script>\", \"b\": [1, 2.5, true, null]}\n",
		"yaml":       "key: \"<img src=x>\"\nlist:\n  - a # c\n",
		"diff":       "--- a\n+++ b\n@@ -1 +1 @@\n-<old>\n+<new>\n",
	}
	for lang, code := range samples {
		lexer := lexers.Get(lang)
		if lexer == nil || lexerFor(lang) == nil {
			t.Fatalf("no lexer for %s", lang)
		}
		// chroma's own lexing, not quickLexer's
		tokens, err := chroma.Coalesce(lexer).Tokenise(nil, code)
		if err != nil {
			t.Fatal(err)
		}
		plain := func() chroma.Token {
			tok := tokens()
			if tok.Type == chroma.TextWhitespace || plainClasses()[tokenClass(tok.Type)] {
				tok.Type = chroma.Text
			}
			return tok
		}
		var b strings.Builder
		if err := formatter.Format(&b, styles.Fallback, plain); err != nil {
			t.Fatal(err)
		}
		want := policy.Sanitize(b.String())
		if got := highlight(lang, code); got != want {
			t.Errorf("%s:\n got %q\nwant %q", lang, got, want)
		}
		for _, tag := range []string{"<script", "<img", "<iframe", "</code", "</pre", "<div", "<!--"} {
			if strings.Contains(highlight(lang, code), tag) {
				t.Errorf("%s: %s reaches the page as a tag", lang, tag)
			}
		}
	}
	if got := HighlightFile("evil.go", hostileCode); strings.Contains(got, "<script") || !strings.Contains(got, "&lt;script&gt;") {
		t.Errorf("HighlightFile let the code out of its spans: %q", got)
	}
}
