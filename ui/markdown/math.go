package markdown

import (
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Math in replies is TeX between dollars, as the models write it:
//
//	inline:   $e^{i\pi} + 1 = 0$          (also $$…$$ inside a line)
//	display:  $$ on a line of its own, the TeX, then $$; or $$…$$ alone on a line
//	fenced:   ```math … ```
//
// Each becomes native MathML (temml.go), which the browser lays out with no
// script. TeX that does not parse, or that is too long, shows as its source
// in a code span, escaped.
//
// The inline rules are Pandoc's, so prices stay prices: the opening $ is
// followed by a non-space, the closing $ follows a non-space and is not
// followed by a digit, and no dollar comes between them: "$5 and $10" is
// text. \$ is a dollar sign.

// Math is an inline formula.
type Math struct {
	ast.BaseInline
	TeX     string
	Display bool // written $$…$$ inside a line
}

// KindMath is the kind of Math nodes.
var KindMath = ast.NewNodeKind("Math")

func (n *Math) Kind() ast.NodeKind { return KindMath }

func (n *Math) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"TeX": n.TeX}, nil)
}

// MathBlock is a display formula on lines of its own; its lines are the TeX.
type MathBlock struct {
	ast.BaseBlock
	// Open is the delimiter that started it: "$$" or "```math". A $$ block
	// the text ends before closing (still streaming, or never closed) is
	// shown as it was written.
	Open   string
	closed bool
	// inline: the first line of TeX was on the opening $$ line.
	inline bool
}

// KindMathBlock is the kind of MathBlock nodes.
var KindMathBlock = ast.NewNodeKind("MathBlock")

func (n *MathBlock) Kind() ast.NodeKind { return KindMathBlock }
func (n *MathBlock) IsRaw() bool        { return true }

func (n *MathBlock) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Open": n.Open}, nil)
}

func (n *MathBlock) tex(src []byte) string {
	var b strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// inlineMath parses $…$ and $$…$$ within a line.
type inlineMath struct{}

func (inlineMath) Trigger() []byte { return []byte{'$'} }

func (inlineMath) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) > 2 && line[1] == '$' {
		end := bytes.Index(line[2:], []byte("$$"))
		if end <= 0 || isBlank(line[2:2+end]) {
			return nil
		}
		block.Advance(2 + end + 2)
		return &Math{TeX: string(line[2 : 2+end]), Display: true}
	}
	if len(line) < 3 || isSpace(line[1]) || line[1] == '$' {
		return nil
	}
	for i := 2; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++ // \$ and \\ inside the formula are TeX's
		case '$':
			// The next dollar closes the formula or there is none.
			if isSpace(line[i-1]) || i+1 < len(line) && isDigit(line[i+1]) {
				return nil
			}
			block.Advance(i + 1)
			return &Math{TeX: string(line[1:i])}
		}
	}
	return nil
}

// blockMath parses display math that starts a line with $$.
type blockMath struct{}

func (blockMath) Trigger() []byte { return []byte{'$'} }

func (blockMath) Open(_ ast.Node, reader text.Reader, _ parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	pos, _ := util.IndentWidth(line, reader.LineOffset())
	if pos > 3 {
		return nil, parser.NoChildren
	}
	i := util.TrimLeftSpaceLength(line)
	if !bytes.HasPrefix(line[i:], []byte("$$")) {
		return nil, parser.NoChildren
	}
	rest := util.TrimRightSpace(line[i+2:])
	node := &MathBlock{Open: "$$"}
	start := seg.Start + i + 2
	if end := bytes.Index(rest, []byte("$$")); end >= 0 {
		// $$…$$ alone on its line is a block; followed by more text it is
		// inline math in a paragraph.
		if end != len(rest)-2 || isBlank(rest[:end]) {
			return nil, parser.NoChildren
		}
		node.Lines().Append(text.NewSegment(start, start+end))
		node.closed = true
		reader.AdvanceToEOL()
		return node, parser.Close
	}
	if !isBlank(rest) {
		node.Lines().Append(text.NewSegment(start, seg.Stop))
		node.inline = true
	}
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (blockMath) Continue(node ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, seg := reader.PeekLine()
	if isBlank(line) {
		return parser.Close // a blank line ends an unclosed block, as a paragraph
	}
	body := util.TrimRightSpace(line)
	if bytes.HasSuffix(body, []byte("$$")) {
		n := node.(*MathBlock)
		n.Lines().Append(text.NewSegment(seg.Start, seg.Start+len(body)-2))
		n.closed = true
		reader.AdvanceToEOL()
		return parser.Close
	}
	node.Lines().Append(seg)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (blockMath) Close(ast.Node, text.Reader, parser.Context) {}
func (blockMath) CanInterruptParagraph() bool                 { return true }
func (blockMath) CanAcceptIndentedLine() bool                 { return false }

// mathFences turns ```math code blocks into MathBlocks, closed or not: an
// open fence's text so far renders like any bad TeX until it closes.
type mathFences struct{}

func (mathFences) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var fences []*ast.FencedCodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if f, ok := n.(*ast.FencedCodeBlock); ok && entering {
			if f.Info != nil && string(f.Language(src)) == "math" {
				fences = append(fences, f)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, f := range fences {
		m := &MathBlock{Open: "```math", closed: true}
		m.SetLines(f.Lines())
		m.SetBlankPreviousLines(f.HasBlankPreviousLines())
		f.Parent().ReplaceChild(f.Parent(), f, m)
	}
}

func renderMath(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*Math)
		_, _ = w.WriteString(mathHTML(n.TeX, n.Display))
	}
	return ast.WalkSkipChildren, nil
}

func renderMathBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*MathBlock)
	if n.Open == "$$" && !n.closed {
		// Not math (yet): the text as written, like the paragraph it would be.
		_, _ = w.WriteString("<p>$$")
		lines := n.Lines()
		for i := range lines.Len() {
			if i > 0 || !n.inline {
				_, _ = w.WriteString("<br>\n")
			}
			seg := lines.At(i)
			_, _ = w.Write(util.EscapeHTML(util.TrimRightSpace(seg.Value(src))))
		}
		_, _ = w.WriteString("</p>\n")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(mathHTML(n.tex(src), true) + "\n")
	return ast.WalkSkipChildren, nil
}

// mathHTML is the MathML for tex, or its source shown as code when it cannot
// be rendered. Display math comes in a block that scrolls sideways on its
// own when it is wider than the reply, and takes the focus so that a
// keyboard can scroll it.
func mathHTML(tex string, display bool) string {
	key := "i"
	if display {
		key = "d"
	}
	key += tex
	if s, ok := mathMemo.get(key); ok {
		return s
	}
	var s string
	mathml, err := toMathML(tex, display)
	switch {
	case err != nil && display:
		s = `<pre class="math-error" title="` + html.EscapeString(err.Error()) + `"><code>` + html.EscapeString(strings.TrimSpace(tex)) + `</code></pre>`
	case err != nil:
		s = `<code class="math-error" title="` + html.EscapeString(err.Error()) + `">` + html.EscapeString("$"+tex+"$") + `</code>`
	case display:
		s = `<div class="math-display" tabindex="0">` + mathml + `</div>`
	default:
		s = mathml
	}
	mathMemo.put(key, s, len(key)+len(s))
	return s
}

// mathMemo holds rendered formulas: a streaming reply re-renders its open
// paragraph on every frame, and a formula in it need not be converted again.
var mathMemo = memo[string]{max: 4 << 20}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
