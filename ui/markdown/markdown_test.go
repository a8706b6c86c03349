package markdown

import (
	"errors"
	"flag"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestRender(t *testing.T) {
	const wrapGo = `<div class="code"><div class="code-bar"><span class="code-lang">go</span>` +
		`<button type="button" class="copy" aria-label="Copy code">Copy</button></div>` +
		`<pre class="chroma"><code class="language-go">`
	const link = `<a href="https://example.com/a?b=c&amp;d=e" rel="nofollow noopener noreferrer" target="_blank">site</a>`

	tests := []struct {
		name string
		src  string
		want []string // substrings of the output
		not  []string // must not appear
	}{
		{"heading", "# Title\n\n### Sub", []string{"<h1>Title</h1>", "<h3>Sub</h3>"}, nil},
		{"bullet list", "- a\n- b", []string{"<ul>\n<li>a</li>\n<li>b</li>\n</ul>"}, nil},
		{"ordered list keeps start", "3. x\n4. y", []string{`<ol start="3">`}, nil},
		{"task list", "- [x] done\n- [ ] todo", []string{
			`<li><input checked="" disabled="" type="checkbox"> done</li>`,
			`<li><input disabled="" type="checkbox"> todo</li>`,
		}, nil},
		{"table with alignment", "| a | b |\n|:--|--:|\n| 1 | 2 |", []string{
			"<table>", `<th align="left">a</th>`, `<td align="right">2</td>`, "</tbody>\n</table>",
		}, nil},
		{"half a table is a paragraph", "| a | b |\n|:-", []string{"<p>| a | b |"}, []string{"<table"}},
		{"strikethrough", "~~gone~~", []string{"<del>gone</del>"}, nil},
		{"newline is a line break", "one\ntwo", []string{"<p>one<br>\ntwo</p>"}, nil},
		{"code with language", "```go\nfunc main() {}\n```", []string{
			wrapGo, `<span class="kd">func</span>`, `<span class="nf">main</span>`, "</code></pre></div>",
		}, nil},
		{"code without language", "```\nx := <b>\n```", []string{
			`<span class="code-lang"></span><button`, `<pre class="chroma"><code>x := &lt;b&gt;` + "\n</code></pre></div>",
		}, []string{"language-"}},
		{"unknown language is plain", "```nosuchlang\na < b\n```", []string{
			`<span class="code-lang">nosuchlang</span>`, `<code class="language-nosuchlang">a &lt; b` + "\n</code>",
		}, nil},
		{"hostile info string", "```\"><script>x\nok\n```", []string{`<span class="code-lang"></span>`, "<code>ok\n</code>"}, []string{"<script"}},
		{"indented code gets a copy button too", "    x = 1", []string{`<button type="button" class="copy"`, "<code>x = 1\n</code>"}, nil},
		{"unclosed fence while streaming", "text\n\n```python\ndef f():\n    return 1", []string{
			`<code class="language-python"><span class="k">def</span>`, "</code></pre></div>",
		}, nil},
		{"link", "[site](https://example.com/a?b=c&d=e)", []string{link}, nil},
		{"bare url and email", "see www.example.com or me@example.com", []string{
			`<a href="http://www.example.com" rel="nofollow noopener noreferrer" target="_blank">www.example.com</a>`,
			`<a href="mailto:me@example.com" rel="nofollow noopener noreferrer" target="_blank">me@example.com</a>`,
		}, nil},
		{"javascript link dropped", "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1))", []string{"<p>x y</p>"}, []string{"href", "javascript"}},
		{"javascript autolink dropped", "<javascript:alert(1)>", []string{"<p>javascript:alert(1)</p>"}, []string{"href"}},
		{"relative link dropped", "[x](/settings) [y](#top)", []string{"<p>x y</p>"}, []string{"href"}},
		{"image becomes a link", "![a cat](https://example.com/cat.png)", []string{
			`<a href="https://example.com/cat.png" rel="nofollow noopener noreferrer" target="_blank">a cat</a>`,
		}, []string{"<img"}},
		{"image with data url dropped", "![x](data:text/html,hi)", []string{"<p>x</p>"}, []string{"href", "<img"}},
		{"raw img escaped", `<img src=x onerror=alert(1)>`, []string{"<p>&lt;img src=x onerror=alert(1)&gt;</p>"}, []string{"<img"}},
		{"raw script escaped", "<script>alert(1)</script>", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script"}},
		{"html block escaped", "<div onclick=x>\nhi\n</div>", []string{"<p>&lt;div onclick=x&gt;<br>"}, []string{"<div onclick"}},
		{"code-bar lookalike is text", `<div class="code"><div class="code-bar">x</div></div>`, nil, []string{"<button", `<div class="code-bar">`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := render(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in\n%s", n, got)
				}
			}
			checkSafe(t, got)
		})
	}
}

func TestRenderGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "reply.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := Render(string(src))
	golden := filepath.Join("testdata", "reply.html")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("Render(testdata/reply.md) differs from %s (go test -update to accept):\n%s", golden, got)
	}
}

// Only closed blocks are cached; the one still streaming changes every frame.
func TestHighlightCacheOnlyFinal(t *testing.T) {
	highlighted.reset()
	Render("```go\nx := 1\n")
	if n := len(highlighted.m); n != 0 {
		t.Errorf("open block: %d cache entries, want 0", n)
	}
	Render("```go\nx := 1\n```\n\n```go\ny")
	if n := len(highlighted.m); n != 1 {
		t.Errorf("closed block then open block: %d cache entries, want 1", n)
	}
}

// Render runs on many streams at once; go test -race makes this meaningful.
func TestRenderConcurrent(t *testing.T) {
	want := Render(benchReply)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if got := Render(benchReply); got != want {
					t.Error("concurrent Render gave a different result")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCodeCSS(t *testing.T) {
	css := CodeCSS()
	light, dark, ok := strings.Cut(css, "@media (prefers-color-scheme: dark) {\n")
	if !ok || !strings.HasPrefix(light, "@media (prefers-color-scheme: light) {\n") {
		t.Fatalf("want a light and a dark media block, got:\n%s", css)
	}
	// Each half: under the OS's scheme unless the page forces the other,
	// and under the page's forced theme.
	for _, c := range []struct{ half, system, forced string }{
		{light, ":root:not([data-theme=dark]) .chroma", ":root[data-theme=light] .chroma"},
		{dark, ":root:not([data-theme=light]) .chroma", ":root[data-theme=dark] .chroma"},
	} {
		for _, scope := range []string{c.system, c.forced} {
			if !strings.Contains(c.half, scope+" {") || !strings.Contains(c.half, scope+" .kd {") {
				t.Errorf("half lacks %s or its keyword rules:\n%s", scope, c.half)
			}
		}
	}
	for line := range strings.Lines(css) {
		scoped := strings.HasPrefix(line, ":root:not([data-theme=") || strings.HasPrefix(line, ":root[data-theme=")
		if !(scoped && strings.Contains(line, "]) .chroma") || strings.Contains(line, "] .chroma")) && !strings.HasPrefix(line, "@media") && line != "}\n" {
			t.Errorf("rule not scoped under .chroma: %q", line)
		}
	}
}

// A token of a plain class goes out as bare text, which the page draws in
// the block's colours: the stylesheet has no rule for its class, in either
// scheme, that a span of it would have picked up. Names and punctuation are
// plain (the saving: most of a block's tokens); keywords, strings and
// comments keep their spans.
func TestPlainClassesDrawAsTheBlock(t *testing.T) {
	plain := plainClasses()
	css := CodeCSS()
	for class := range plain {
		if strings.Contains(css, " .chroma ."+class+" {") {
			t.Errorf("plain class %s has a rule of its own", class)
		}
	}
	for _, class := range []string{"n", "nx", "p"} {
		if !plain[class] {
			t.Errorf("%s is not plain", class)
		}
	}
	for _, class := range []string{"k", "kd", "o", "s", "c1", "nf", "mi", "err"} {
		if plain[class] {
			t.Errorf("%s is plain, but the styles colour it", class)
		}
	}
	got := highlight("go", "if err != nil { return fmt.Errorf(\"x\") }\n")
	want := `<span class="k">if</span> err <span class="o">!=</span> <span class="kc">nil</span> { <span class="k">return</span> fmt.<span class="nf">Errorf</span>(<span class="s">&#34;x&#34;</span>) }` + "\n"
	if got != want {
		t.Errorf("highlight:\n got %q\nwant %q", got, want)
	}
}

// benchReply is a ~4 KB assistant reply: prose, lists, tables and twelve
// distinct highlighted code blocks, the shape Render sees on every frame.
var benchReply = func() string {
	var b strings.Builder
	for i := range 6 {
		b.WriteString(strings.ReplaceAll(benchSection, "@", strconv.Itoa(i)))
	}
	return b.String()
}()

const benchSection = `## Fixing race @

The handler reads **cfg** while the reloader writes it. Guard it with a
mutex, or better, swap an immutable pointer with ` + "`atomic.Pointer`" + `:

- readers never block
- writers build a fresh value
- see [the docs](https://pkg.go.dev/sync/atomic#Pointer)

` + "```go" + `
type Server struct {
	cfg@ atomic.Pointer[Config]
}

func (s *Server) Reload(path string) error {
	c, err := load@(path)
	if err != nil {
		return fmt.Errorf("reload %s: %w", path, err)
	}
	s.cfg.Store(c)
	return nil
}
` + "```" + `

| approach | reads | writes |
|:---------|------:|-------:|
| mutex    |  slow |   fast |
| atomic   |  fast |   slow |

` + "```python" + `
def load@(path):
    with open(path) as f:
        return json.load(f)  # TODO: validate
` + "```" + `

`

// BenchmarkRender/cached is a streaming frame whose code blocks are already
// closed and highlighted; /cold pays for chroma on every block.
func BenchmarkRender(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		b.SetBytes(int64(len(benchReply)))
		for b.Loop() {
			Render(benchReply)
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(int64(len(benchReply)))
		for b.Loop() {
			highlighted.reset()
			Render(benchReply)
		}
	})
}

func (c *memo[V]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.cost = nil, 0
}

func TestBenchReplySize(t *testing.T) {
	if n := len(benchReply); n < 3500 || n > 4500 {
		t.Errorf("benchReply is %d bytes, want about 4 KB", n)
	}
}

// A lexer that fails on the code it is given (chroma panics when a rule's
// mutator does) leaves the code escaped, uncoloured, in a message's code
// block and in a file's preview; nothing else of the message is lost.
func TestHighlightLexerFails(t *testing.T) {
	lexers.Register(chroma.MustNewLexer(&chroma.Config{Name: "parleyfails", Filenames: []string{"*.parleyfails"}},
		func() chroma.Rules {
			return chroma.Rules{"root": {
				{Pattern: `boom`, Type: chroma.Keyword, Mutator: chroma.MutatorFunc(func(*chroma.LexerState) error {
					return errors.New("the mutator fails")
				})},
				{Pattern: `[^b]+|b`, Type: chroma.Text},
			}}
		}))
	code := "<b>safe</b> then boom & more"
	escaped := html.EscapeString(code)
	if got := HighlightFile("x.parleyfails", code); got != escaped {
		t.Errorf("HighlightFile = %q, want %q", got, escaped)
	}
	got := Render("before\n\n```parleyfails\n" + code + "\n```\n\nafter")
	for _, want := range []string{"before", "after", escaped} {
		if !strings.Contains(got, want) {
			t.Errorf("Render lost %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<b>safe") {
		t.Errorf("the code is not escaped:\n%s", got)
	}
}
