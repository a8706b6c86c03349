package markdown

import (
	"errors"
	"html"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// langPattern bounds what a fence's info string may put into a class
// attribute and the label; anything else renders as an unlabelled plain block.
var langPattern = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// codeBlock is what a fenced or indented code block contributes.
type codeBlock struct {
	lang string // "" unless the info string names a plausible language
	code string
	// final is false for a block that runs to the end of the source: it may
	// still be streaming in, and caching each partial version would only
	// fill the cache.
	final bool
}

func codeBlockOf(node ast.Node, src []byte) codeBlock {
	cb := codeBlock{lang: codeLang(node, src)}
	var code strings.Builder
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		code.Write(seg.Value(src))
	}
	cb.code = code.String()
	cb.final = lines.Len() > 0 && lines.At(lines.Len()-1).Stop < len(src)
	return cb
}

func codeLang(node ast.Node, src []byte) string {
	if n, ok := node.(*ast.FencedCodeBlock); ok && n.Info != nil {
		if lang := n.Language(src); langPattern.Match(lang) {
			return string(lang)
		}
	}
	return ""
}

// renderCodeBlock renders the frame of a fenced or indented code block:
//
//	<div class="code"><div class="code-bar"><span class="code-lang">go</span></div>
//	<pre class="chroma"><code class="language-go"></code></pre></div>
//
// fillCodeBlocks adds the copy button and the highlighted code after the
// document has been sanitised.
func renderCodeBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	lang := codeLang(node, src)
	_, _ = w.WriteString(codeBarOpen + `<span class="code-lang">` + lang + `</span></div><pre class="chroma"><code`)
	if lang != "" {
		_, _ = w.WriteString(` class="language-` + lang + `"`)
	}
	_, _ = w.WriteString("></code></pre></div>\n")
	return ast.WalkContinue, nil
}

// codeBodies returns the sanitised inner HTML of every code block under doc,
// in document order, which is also the order renderCodeBlock wrote them.
func codeBodies(doc ast.Node, src []byte, policy *bluemonday.Policy) []string {
	var bodies []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.Kind() {
		case ast.KindCodeBlock, ast.KindFencedCodeBlock:
			if entering {
				bodies = append(bodies, chunkLines(codeHTML(codeBlockOf(n, src))))
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return bodies
}

// codeHTML returns a block's code as chroma token spans, or escaped when
// it names no known language. Highlighting each block on its own lets final
// blocks be cached: chroma's regexp lexers are most of a render's cost.
//
// The spans are not sanitised: tokenSpans writes nothing but escaped text
// and class names from chroma's own table, which is what the sanitiser
// let through of chroma's formatter, at a fifth of the cost.
func codeHTML(cb codeBlock) string {
	if len(cb.code) > highlightLimit {
		cb.lang = ""
	}
	key := cb.lang + "\x00" + cb.code
	if s, ok := highlighted.get(key); ok {
		return s
	}
	s := highlight(cb.lang, cb.code)
	if cb.final {
		highlighted.put(key, s, len(key)+len(s))
	}
	return s
}

// highlight returns code as chroma token spans, or just escaped when lang
// names no lexer, or when its lexer fails on code.
func highlight(lang, code string) (out string) {
	lexer := lexerFor(lang)
	if lexer == nil {
		return html.EscapeString(code)
	}
	// chroma's lexers panic where a rule's mutator fails, and tokens are
	// made as they are read: a lexer that cannot read the code (a model's
	// or a file's) costs the block its colours, not the page or the card.
	defer func() {
		if recover() != nil {
			out = html.EscapeString(code)
		}
	}()
	tokens, err := lexer.tokenise(code)
	if err != nil {
		return html.EscapeString(code)
	}
	var b strings.Builder
	b.Grow(len(code) * 3)
	tokenSpans(&b, tokens)
	return b.String()
}

// tokenSpans writes tokens as chroma's HTML formatter does with classes and
// no <pre> or line spans: each token, cut after every newline, as
// <span class="…">escaped text</span>, or the escaped text alone when its
// type has no class. Whitespace, and tokens of a class both code styles
// draw as the block's own text (plainClasses: names and punctuation), go
// out as bare text: a page lays out, paints and keeps every span, and
// these were more than half of a block's.
func tokenSpans(b *strings.Builder, tokens chroma.Iterator) {
	plain := plainClasses()
	for t := tokens(); t != chroma.EOF; t = tokens() {
		class := ""
		if t.Type != chroma.TextWhitespace {
			class = tokenClass(t.Type)
		}
		if plain[class] {
			class = ""
		}
		for v := t.Value; v != ""; {
			piece := v
			if i := strings.IndexByte(v, '\n'); i >= 0 {
				piece = v[:i+1]
			}
			v = v[len(piece):]
			if class == "" {
				b.WriteString(html.EscapeString(piece))
				continue
			}
			b.WriteString(`<span class="`)
			b.WriteString(class)
			b.WriteString(`">`)
			b.WriteString(html.EscapeString(piece))
			b.WriteString(`</span>`)
		}
	}
}

// linesPerChunk is how many lines of a long code block are one element of
// the page. A block's lines are laid out together when they share an
// element: a code block that grows to 1 MiB in one element is laid out
// whole each frame that adds to it, 30 ms and more at its end; in elements
// of 100 lines (app.css makes them blocks) only the last one is. A block
// of no more lines keeps them bare in its code element.
const linesPerChunk = 100

// splitLines cuts a body of code HTML (codeHTML's: escaped text, and
// token spans that hold a newline only at their end) into its lines, each
// with its newline and the </span> that may close right after it. The
// last line may have no newline.
func splitLines(body string) []string {
	var lines []string
	for body != "" {
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			return append(lines, body)
		}
		i++
		if strings.HasPrefix(body[i:], "</span>") {
			i += len("</span>")
		}
		lines = append(lines, body[:i])
		body = body[i:]
	}
	return lines
}

// chunkLines is a whole block's body as the page holds it: as it is up
// to linesPerChunk lines, else its lines in groups of linesPerChunk, each
// group a <span class="code-lines">.
func chunkLines(body string) string {
	lines := splitLines(body)
	if len(lines) <= linesPerChunk {
		return body
	}
	return chunkLinesOf(lines)
}

func chunkLinesOf(lines []string) string {
	var b strings.Builder
	for i := 0; i < len(lines); i += linesPerChunk {
		b.WriteString(codeLinesOpen)
		for _, l := range lines[i:min(i+linesPerChunk, len(lines))] {
			b.WriteString(l)
		}
		b.WriteString(codeLinesEnd)
	}
	return b.String()
}

const (
	codeLinesOpen = `<span class="code-lines">`
	codeLinesEnd  = `</span>`
)

// tokenClass is the CSS class of a token type, as chroma's formatter names
// it: the type's own, else its nearest ancestor's in chroma.StandardTypes.
func tokenClass(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if class, ok := chroma.StandardTypes[t]; ok {
			return class
		}
	}
	return chroma.StandardTypes[t]
}

// codeLexer is the lexer of a fence's language: chroma's, run by
// quickLexer when it is a plain RegexLexer.
type codeLexer struct {
	quick  *quickLexer
	chroma chroma.Lexer
}

// tokenise is chroma.Coalesce(lexer).Tokenise(nil, code): coalesced
// tokens, fewer and longer spans.
func (l *codeLexer) tokenise(code string) (chroma.Iterator, error) {
	if l.quick != nil {
		return coalesce(l.quick.Tokenise(code)), nil
	}
	return chroma.Coalesce(l.chroma).Tokenise(nil, code)
}

// lexerFor memoises lexers.Get: for a name that is no lexer's name or alias
// it tries every lexer's filename globs, which takes milliseconds.
func lexerFor(lang string) *codeLexer {
	if lang == "" {
		return nil
	}
	if l, ok := lexerMemo.get(lang); ok {
		return l
	}
	var l *codeLexer
	if cl := lexers.Get(lang); cl != nil {
		l = &codeLexer{chroma: cl}
		l.quick, _ = newQuickLexer(cl)
	}
	lexerMemo.put(lang, l, 1)
	return l
}

var (
	// highlighted holds sanitised code bodies by language and code. 8 MiB is
	// a long session's worth of code blocks.
	highlighted = memo[string]{max: 8 << 20}
	// lexerMemo holds lexers by fence language, nil for unknown ones. Real
	// language names are few; the bound only stops junk from piling up.
	lexerMemo = memo[*codeLexer]{max: 1024}
)

// memo is a concurrency-safe map bounded by the summed cost of its entries.
// When full it is emptied rather than evicting cleverly: both uses refill
// cheaply from what the current frames need.
type memo[V any] struct {
	mu   sync.Mutex
	m    map[string]V
	cost int
	max  int
}

func (c *memo[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *memo[V]) put(key string, v V, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok || cost > c.max {
		return
	}
	if c.m == nil || c.cost+cost > c.max {
		c.m, c.cost = make(map[string]V), 0
	}
	c.m[key] = v
	c.cost += cost
}

// copyButton carries no script: the page handles clicks on .copy by
// delegation and copies the text of the block's <pre>.
const copyButton = `<button type="button" class="copy" aria-label="Copy code">Copy</button>`

const (
	codeBarOpen = `<div class="code"><div class="code-bar">`
	codeEnd     = `</code></pre></div>`
)

// fillCodeBlocks puts a copy button at the end of each code bar in the
// sanitised document doc and the matching body into each (empty) code
// element. It runs after sanitising so the policy never has to allow
// buttons. Only renderCodeBlock can produce a code bar: raw HTML in the
// input is escaped text, so the literal tags never appear otherwise.
func fillCodeBlocks(doc string, bodies []string) (string, error) {
	var b strings.Builder
	b.Grow(len(doc) + len(bodies)*len(copyButton))
	for _, body := range bodies {
		bar := strings.Index(doc, codeBarOpen)
		if bar < 0 {
			return "", errors.New("fill code blocks: code bar missing after sanitising")
		}
		// The bar holds just the label span, so the next </div> closes it,
		// and the code element is empty, so the next codeEnd closes it.
		barEnd := bar + strings.Index(doc[bar:], "</div>")
		end := barEnd + strings.Index(doc[barEnd:], codeEnd)
		if barEnd < bar || end < barEnd {
			return "", errors.New("fill code blocks: code block mangled by sanitising")
		}
		b.WriteString(doc[:barEnd])
		b.WriteString(copyButton)
		b.WriteString(doc[barEnd:end])
		b.WriteString(body)
		doc = doc[end:]
	}
	if strings.Contains(doc, codeBarOpen) {
		return "", errors.New("fill code blocks: more code bars than code blocks")
	}
	b.WriteString(doc)
	return b.String(), nil
}

// codeStyles are the colours of highlighted code: chroma's github style on
// a light page and github-dark on a dark one. github leaves the block's
// text colour to the page and gives names and punctuation GitHub's text
// colour, #1f2328; here that colour is the block's own, so that those
// tokens need no span (plainClasses).
var codeStyles = sync.OnceValues(func() (light, dark *chroma.Style) {
	light, dark = styles.Get("github"), styles.Get("github-dark")
	base := light.Get(chroma.Background)
	base.Colour = light.Get(chroma.Punctuation).Colour
	if built, err := light.Builder().AddEntry(chroma.Background, base).Build(); err == nil {
		light = built
	}
	return light, dark
})

// plainClasses are the token classes that both code styles draw exactly as
// the block's own text (same colour, background and weight): a span of
// one would change nothing on the page.
var plainClasses = sync.OnceValue(func() map[string]bool {
	light, dark := codeStyles()
	plain := map[string]bool{}
	for t, class := range chroma.StandardTypes {
		if class == "" || t <= 0 { // not a token's type: the formatter's own (line tables, errors)
			continue
		}
		if light.Get(t).String() == light.Get(chroma.Background).String() &&
			dark.Get(t).String() == dark.Get(chroma.Background).String() {
			plain[class] = true
		}
	}
	return plain
})

// CodeCSS returns the stylesheet for highlighted code (codeStyles): the
// light style under prefers-color-scheme: light and the dark one under
// prefers-color-scheme: dark, each unless the page forces the other theme,
// then each again for a page that forces it (data-theme="light" or "dark"
// on <html>, set in Settings). The halves never overlap because a style
// leaves tokens it does not colour to the cascade, so light rules would
// paint dark text onto the dark background. Every rule sits under .chroma,
// so nothing leaks onto the rest of the page.
func CodeCSS() string {
	light, dark := codeStyles()
	var b strings.Builder
	for _, s := range []struct {
		scheme, other string
		style         *chroma.Style
	}{{"light", "dark", light}, {"dark", "light", dark}} {
		var css strings.Builder
		// Writing to a strings.Builder cannot fail.
		_ = cssFormatter.WriteCSS(&css, s.style)
		var rules []string
		for line := range strings.Lines(css.String()) {
			// chroma also writes a bare .bg rule, which would style any
			// element of the page that happens to use that class.
			if strings.HasPrefix(line, ".chroma") {
				rules = append(rules, line)
			}
		}
		b.WriteString("@media (prefers-color-scheme: " + s.scheme + ") {\n")
		for _, r := range rules {
			b.WriteString(":root:not([data-theme=" + s.other + "]) " + r)
		}
		b.WriteString("}\n")
		for _, r := range rules {
			b.WriteString(":root[data-theme=" + s.scheme + "] " + r)
		}
	}
	return b.String()
}

var cssFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithCSSComments(false))

// HighlightFile returns code as highlighting spans (no <pre>), the
// language taken from the file name's extension; plain escaped text when
// none is known. Like codeHTML's, the spans hold only escaped text.
func HighlightFile(name, code string) string {
	ext := strings.TrimPrefix(path.Ext(name), ".")
	return highlight(strings.ToLower(ext), code)
}
