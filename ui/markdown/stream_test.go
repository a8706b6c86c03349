package markdown

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// streamCorpus holds every construct the renderer supports, alone and
// side by side, so that cutting each at every byte crosses every kind of
// block boundary.
var streamCorpus = map[string]string{
	"paragraphs":     "First paragraph with *emphasis*, **strong**, `code` and ~~gone~~.\nA hard break above.\n\nSecond paragraph.\n",
	"headings":       "# One\n\nText.\n\n## Two ##\n\nSetext\n======\n\nAnother\n---\n\nend",
	"lists":          "- a\n- b\n  - nested\n  - more\n- c\n\n1. one\n2. two\n\n3. three (loose)\n\n7. seven\n8. eight\n\nafter",
	"tasks":          "- [x] done\n- [ ] todo\n\ntext",
	"table":          "Before.\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n| 3 | 4 |\n\nAfter the table.\n",
	"table at end":   "| a | b |\n|---|---|\n| 1 | 2 |",
	"quote":          "> quoted\n> more\nlazy\n\n> second\n\nout",
	"fenced go":      "Here:\n\n```go\npackage main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\nDone.\n",
	"fenced raw":     "```go\nvar s = `multi\nline raw string`\n/* block\ncomment */\n```\nafter\n",
	"tilde fence":    "~~~python\ndef f():\n    return 1\n~~~~\n\ntext",
	"long fence":     "````\n```\nnot the end\n````\nend",
	"indented fence": "  ```js\n  let x = 1;\n    let y = 2;\n  ```\nafter",
	"unclosed":       "text\n\n```python\ndef f():\n    return 1",
	"unknown lang":   "```nosuchlang\na < b & c\n```\n",
	"hostile info":   "```\"><script>x\nok\n```\n",
	"indented code":  "para\n\n    code line 1\n\n    code line 3\n\n\n\tcode with tab\n\nafter\n",
	"indented end":   "    x := 1\n    y := 2",
	"breaks":         "a\n\n---\n\n***\nb\n\n- - -\n",
	"links":          "see [site](https://example.com) and www.example.com, <https://a.example/x>, me@example.com, [bad](javascript:x) ![img](https://example.com/i.png)",
	"reference":      "A [ref] and [other][ref].\n\n[ref]: https://example.com/ref\n\nMore text [ref].\n",
	"reference late": "Uses [x] first.\n\nThen a paragraph.\n\n[x]: https://example.com\n",
	"html as text":   "<b>bold?</b>\n\n<div>\nblock\n</div>\n\n<script>alert(1)</script>",
	"mixed":          "# Plan\n\n1. Read\n2. Write:\n\n   ```go\n   x := 1\n   ```\n\n3. Test\n\n> note\n\n| k | v |\n|---|---|\n| a | 1 |\n\n    indented\n\nend\n",
	"blank lines":    "\n\n\nstart after blanks\n\n\n\nend\n\n\n",
	"crlf":           "one\r\ntwo\r\n\r\n```\r\ncode\r\n```\r\n",
	"escapes":        "\\*not em\\* & &amp; &copy; <>\n",
}

// TestStreamEqualsRender: whatever the deltas, the page a Stream builds
// ends as Render of the whole text, and between deltas shows Render of the
// text so far, except inside an open code block, whose line being typed
// shows as typed.
func TestStreamEqualsRender(t *testing.T) {
	for name, doc := range streamCorpus {
		t.Run(name, func(t *testing.T) {
			want := normal(t, Render(doc))
			// Cut once at every byte.
			for k := 0; k <= len(doc); k++ {
				p := newPage(t, "m-p0")
				p.apply(p.s.Next(doc[:k]))
				p.apply(p.s.Finish(doc))
				if got := p.html(); got != want {
					t.Fatalf("cut at %d (%q | %q):\n got %s\nwant %s", k, doc[:k], doc[k:], got, want)
				}
			}
			// One byte at a time, checking every frame.
			p := newPage(t, "m-p0")
			for k := 1; k < len(doc); k++ {
				p.apply(p.s.Next(doc[:k]))
				if p.s.code != nil {
					continue
				}
				if got, want := p.html(), normal(t, Render(doc[:k])); got != want {
					t.Fatalf("after %q:\n got %s\nwant %s", doc[:k], got, want)
				}
			}
			p.apply(p.s.Finish(doc))
			if got := p.html(); got != want {
				t.Fatalf("byte by byte:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// Random deltas over random concatenations of the corpus.
func TestStreamRandomDeltas(t *testing.T) {
	var names []string
	for n := range streamCorpus {
		names = append(names, n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(streamCorpus[names[r.IntN(len(names))]])
			b.WriteString([]string{"", "\n", "\n\n"}[r.IntN(3)])
		}
		doc := b.String()
		p := newPage(t, "m-p0")
		for k := 0; k < len(doc); k += 1 + r.IntN(40) {
			p.apply(p.s.Next(doc[:k]))
		}
		p.apply(p.s.Finish(doc))
		if got, want := p.html(), normal(t, Render(doc)); got != want {
			t.Fatalf("doc %d %q:\n got %s\nwant %s", i, doc, got, want)
		}
	}
}

// A text that does not continue the last one (a reply rewritten) starts
// over, and the page follows.
func TestStreamRewritten(t *testing.T) {
	p := newPage(t, "m-p0")
	p.apply(p.s.Next("# Title\n\nfirst version\n\nmore"))
	p.apply(p.s.Next("Another text\n\nentirely"))
	p.apply(p.s.Next("Another text\n\nentirely, and more\n\n- x\n"))
	p.apply(p.s.Finish("Another text\n\nentirely, and more\n\n- x\n- y"))
	if got, want := p.html(), normal(t, Render("Another text\n\nentirely, and more\n\n- x\n- y")); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// The work of a frame follows the open block, not the text so far: a long
// reply of many blocks costs the same per delta at its end as at its start.
func TestStreamSendsOnlyTheOpenBlock(t *testing.T) {
	var doc strings.Builder
	for i := range 400 {
		fmt.Fprintf(&doc, "Paragraph %d has a few words in it, like a reply would.\n\n", i)
	}
	text := doc.String()
	s := NewStream("m-p0")
	largest := 0
	for k := 16; k <= len(text); k += 16 {
		n := 0
		for _, op := range s.Next(text[:k]) {
			n += len(op.HTML)
		}
		if k > 1024 {
			largest = max(largest, n)
		}
	}
	if largest > 400 {
		t.Fatalf("a frame sent %d bytes for 16 new ones", largest)
	}
}

// A long code block is sent line by line: a frame carries its new lines,
// not the block so far, but for the one frame whose lines make it longer
// than linesPerChunk, which sends it again in chunks.
func TestStreamCodeBlockByLine(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("Code:\n\n```go\n")
	for i := range 2000 {
		fmt.Fprintf(&doc, "\tx%04d := compute(%d)\n", i, i)
	}
	doc.WriteString("```\n\nDone.\n")
	text := doc.String()
	for _, indented := range []bool{false, true} {
		src := text
		if indented {
			src = strings.ReplaceAll(strings.ReplaceAll(text, "```go\n", ""), "```\n", "")
		}
		p := newPage(t, "m-p0")
		largest, resent := 0, 0
		for k := 16; k < len(src); k += 16 {
			ops := p.s.Next(src[:k])
			n := 0
			for _, op := range ops {
				n += len(op.HTML)
			}
			if k > 200 && k < len(src)-200 {
				if n > 1000 {
					resent++
					if n > 40<<10 {
						t.Fatalf("indented=%v: the block sent again in chunks took %d bytes", indented, n)
					}
				} else {
					largest = max(largest, n)
				}
			}
			p.apply(ops)
		}
		p.apply(p.s.Finish(src))
		if got, want := p.html(), normal(t, Render(src)); got != want {
			t.Fatalf("indented=%v: the page differs from Render", indented)
		}
		if resent != 1 {
			t.Fatalf("indented=%v: %d frames sent more than 1000 bytes for 16 new ones, want the one that chunks the block", indented, resent)
		}
		if chunks := strings.Count(p.raw(), `class="code-lines"`); chunks != 2000/linesPerChunk {
			t.Fatalf("indented=%v: %d chunks of lines, want %d", indented, chunks, 2000/linesPerChunk)
		}
	}
}

// A code block that outgrows highlightLimit turns plain once, and ends as
// Render shows it.
func TestStreamCodeOverHighlightLimit(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("```go\n")
	for i := 0; doc.Len() < highlightLimit+4096; i++ {
		fmt.Fprintf(&doc, "\tx%06d := compute(%d)\n", i, i)
	}
	src := doc.String() + "```\n"
	p := newPage(t, "m-p0")
	for k := 0; k < len(src); k += 512 {
		p.apply(p.s.Next(src[:k]))
	}
	p.apply(p.s.Finish(src))
	if got, want := p.html(), normal(t, Render(src)); got != want {
		t.Fatal("the page differs from Render")
	}
	if strings.Contains(Render(src), `class="kd"`) {
		t.Fatal("a block over the limit was highlighted")
	}
}

// A highlighted block that comes in floods (frames of many lines, as when
// a page catches up) goes out plain and is highlighted once when it closes;
// one that outgrows plainMax is highlighted then, so that closing it
// replaces little. Either way the page ends as Render shows it.
func TestStreamCodeFlood(t *testing.T) {
	block := func(size int) string {
		var doc strings.Builder
		doc.WriteString("Code:\n\n```go\nvar s = `raw\nstring`\n")
		for i := 0; doc.Len() < size; i++ {
			fmt.Fprintf(&doc, "\tx%06d := compute(%d) // line %d\n", i, i, i)
		}
		return doc.String() + "```\n\nDone.\n"
	}
	for _, c := range []struct {
		name       string
		size, step int
	}{
		{"small, one frame", 600, 4096},
		{"small, floods", 4 << 10, 2 << 10},
		{"large, floods", 40 << 10, 2 << 10},
		{"large, floods then lines", 40 << 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := block(c.size)
			p := newPage(t, "m-p0")
			largest, plain := 0, false
			for k := 0; k < len(src); {
				step := c.step
				if step == 0 { // floods, then a model's pace
					step = 2 << 10
					if k > 6<<10 {
						step = 32
					}
				}
				k = min(k+step, len(src))
				ops := p.s.Next(src[:k])
				for _, op := range ops {
					largest = max(largest, len(op.HTML))
					if op.Mode == Before && strings.HasSuffix(op.ID, "-tail") && !strings.Contains(op.HTML, "<span") {
						plain = true
					}
				}
				p.apply(ops)
			}
			p.apply(p.s.Finish(src))
			if got, want := p.html(), normal(t, Render(src)); got != want {
				t.Fatalf("the page differs from Render:\n got %s\nwant %s", got, want)
			}
			if c.step > liveHighlight && c.size > 1000 && !plain {
				t.Error("no frame of the flood went out plain")
			}
			// A frame carries at most about plainMax of code (as HTML, some
			// six times its size when highlighted).
			if largest > 8*plainMax {
				t.Errorf("a frame sent %d bytes", largest)
			}
		})
	}
}

func FuzzStream(f *testing.F) {
	for _, doc := range streamCorpus {
		f.Add(doc, uint8(7))
	}
	f.Fuzz(func(t *testing.T, doc string, step uint8) {
		p := newPage(t, "m-p0")
		for k := 0; k < len(doc); k += 1 + int(step) {
			p.apply(p.s.Next(doc[:k]))
		}
		p.apply(p.s.Finish(doc))
		if got, want := p.html(), normal(t, Render(doc)); got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}

// page is a Stream's element as a browser would hold it, built from its
// operations the way Datastar applies them.
type page struct {
	t    testing.TB
	s    *Stream
	root *html.Node
}

func newPage(t testing.TB, id string) *page {
	s := NewStream(id)
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, n := range fragment(t, s.Shell()) {
		root.AppendChild(n)
	}
	return &page{t: t, s: s, root: root}
}

func fragment(t testing.TB, s string) []*html.Node {
	t.Helper()
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(s), ctx)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func (p *page) apply(ops []Op) {
	p.t.Helper()
	for _, op := range ops {
		el := byID(p.root, op.ID)
		if el == nil {
			p.t.Fatalf("no element #%s for %+v in %s", op.ID, op, p.raw())
		}
		switch op.Mode {
		case Before, Replace:
			for _, n := range fragment(p.t, op.HTML) {
				el.Parent.InsertBefore(n, el)
			}
			if op.Mode == Replace {
				el.Parent.RemoveChild(el)
			}
		case After:
			next := el.NextSibling
			for _, n := range fragment(p.t, op.HTML) {
				el.Parent.InsertBefore(n, next)
			}
		case Remove:
			el.Parent.RemoveChild(el)
		case AppendCode:
			code := firstTag(el, "code")
			if code == nil {
				p.t.Fatalf("no code element in #%s for %+v", op.ID, op)
			}
			for _, n := range fragment(p.t, op.HTML) {
				code.AppendChild(n)
			}
		}
	}
}

func firstTag(n *html.Node, tag string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			return c
		}
		if found := firstTag(c, tag); found != nil {
			return found
		}
	}
	return nil
}

func byID(n *html.Node, id string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			for _, a := range c.Attr {
				if a.Key == "id" && a.Val == id {
					return c
				}
			}
		}
		if found := byID(c, id); found != nil {
			return found
		}
	}
	return nil
}

func (p *page) raw() string {
	var b strings.Builder
	for c := p.root.FirstChild; c != nil; c = c.NextSibling {
		_ = html.Render(&b, c)
	}
	return b.String()
}

// html is the page with the live wrappers taken away, as it lays out.
func (p *page) html() string {
	return normal(p.t, p.raw())
}

// normal re-serialises s with md-live, md-group, md-chunk and md-open wrappers unwrapped and
// adjacent text nodes merged.
func normal(t testing.TB, s string) string {
	t.Helper()
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, n := range fragment(t, s) {
		root.AppendChild(n)
	}
	unwrap(root)
	var b strings.Builder
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		_ = html.Render(&b, c)
	}
	return b.String()
}

func unwrap(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		unwrap(c)
		if c.Type == html.ElementNode && c.Data == "div" && hasClass(c, "md-live", "md-group", "md-chunk", "md-open") {
			for g := c.FirstChild; g != nil; {
				gn := g.NextSibling
				c.RemoveChild(g)
				n.InsertBefore(g, c)
				g = gn
			}
			n.RemoveChild(c)
		}
		c = next
	}
}

func hasClass(n *html.Node, classes ...string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" {
			for _, c := range classes {
				if a.Val == c {
					return true
				}
			}
		}
	}
	return false
}

// BenchmarkStream feeds 1 MiB in 16-byte deltas through a Stream, one
// Next per delta (the page coalesces to one per frame, so this is the
// worst case): as a reply of mixed Markdown, and as one long code block.
func BenchmarkStream(b *testing.B) {
	var mixed strings.Builder
	for mixed.Len() < 1<<20 {
		for _, name := range []string{"paragraphs", "lists", "fenced go", "table", "quote", "headings", "mixed"} {
			mixed.WriteString(streamCorpus[name])
			mixed.WriteString("\n\n")
		}
	}
	var code strings.Builder
	for i := 0; code.Len() < 1<<20; i++ {
		fmt.Fprintf(&code, "\tx%06d := compute(%d) // line %d\n", i, i, i)
	}
	for _, c := range []struct{ name, text string }{{"mixed", mixed.String()[:1<<20]}, {"code", code.String()[:1<<20]}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				s := NewStream("m-p0")
				for k := 16; k < len(c.text); k += 16 {
					s.Next(c.text[:k])
				}
				s.Finish(c.text)
			}
		})
	}
}

// chunkStart finds a chunk's number and what begins it (inside an open
// wrapper, when that is first).
var chunkStart = regexp.MustCompile(`class="md-chunk" id="m-p0-c(\d+)">(?:<div class="md-open" id="[^"]*">)?\s*(<[a-z0-9]+)`)

// A long text fills chunk after chunk (a code block may close one, a
// reference restarts them); whatever the deltas, the page still ends as
// Render of the whole, the finished blocks in chunks of about chunkMax.
func TestStreamChunks(t *testing.T) {
	var doc strings.Builder
	for i := 0; doc.Len() < 6*chunkMax; i++ {
		name := []string{"paragraphs", "fenced go", "table", "lists", "mixed", "indented code", "headings"}[i%7]
		doc.WriteString(streamCorpus[name])
		doc.WriteString("\n\n")
	}
	text := doc.String()
	r := rand.New(rand.NewPCG(3, 4))
	for _, step := range []int{1, 16, 700, 5000, 0, len(text)} {
		p := newPage(t, "m-p0")
		for k := 0; k < len(text); {
			k = cut(k, step, r, 3000)
			before := strings.Count(p.raw(), `class="md-chunk"`)
			p.apply(p.s.Next(text[:min(k, len(text))]))
			// Text of several chunks at once (a page behind a fast reply)
			// comes as that many chunks, not one.
			if n := strings.Count(p.raw(), `class="md-chunk"`) - before; step == len(text) && n < 3 {
				t.Fatalf("the whole text at once made %d new chunks", n)
			}
		}
		p.apply(p.s.Finish(text))
		if got, want := p.html(), normal(t, Render(text)); got != want {
			t.Fatalf("step %d: the page differs from Render", step)
		}
		raw := p.raw()
		chunks := strings.Count(raw, `class="md-chunk"`)
		if chunks < 4 || chunks > 8 {
			t.Fatalf("step %d: %d chunks for %d bytes", step, chunks, len(text))
		}
		if strings.Count(raw, `class="md-live"`) != 1 {
			t.Fatalf("step %d: %d containers", step, strings.Count(raw, `class="md-live"`))
		}
		// Every chunk but the first begins with a heading of level 1 to 3
		// (app.css lays a full chunk out on its own).
		starts := chunkStart.FindAllStringSubmatch(raw, -1)
		if len(starts) != chunks {
			t.Fatalf("step %d: %d chunk starts found of %d", step, len(starts), chunks)
		}
		for _, m := range starts {
			if m[1] != "0" && !strings.HasPrefix(m[2], "<h1") && !strings.HasPrefix(m[2], "<h2") && !strings.HasPrefix(m[2], "<h3") {
				t.Fatalf("step %d: chunk %s begins with %q", step, m[1], m[2])
			}
		}
	}
	// A reference definition late in a long text starts it over whole.
	p := newPage(t, "m-p0")
	late := text + "Now [x].\n\n[x]: https://example.com\n"
	for k := 0; k < len(late); k += 999 {
		p.apply(p.s.Next(late[:k]))
	}
	p.apply(p.s.Finish(late))
	if got, want := p.html(), normal(t, Render(late)); got != want {
		t.Fatal("restarted: the page differs from Render")
	}
}

// cut is where a test feeding a text to a Stream cuts it next after k:
// step bytes on, or for step 0 a random 1 to most bytes on.
func cut(k, step int, r *rand.Rand, most int) int {
	if step == 0 {
		return k + 1 + r.IntN(most)
	}
	return k + step
}

// A reply of many chunks keeps them in groups of groupMax, each full
// group before the last, so that the page checks a group, not each of its
// chunks, against the screen: at any deltas, every group but the last
// holds groupMax chunks, the open block is in the last chunk of the last
// group, and the page still ends as Render of the whole.
func TestStreamGroups(t *testing.T) {
	var doc strings.Builder
	for i := 0; doc.Len() < (2*groupMax+3)*chunkMax; i++ {
		fmt.Fprintf(&doc, "## Part %d\n\n", i)
		for _, name := range []string{"paragraphs", "fenced go", "table", "lists"} {
			doc.WriteString(streamCorpus[name])
			doc.WriteString("\n\n")
		}
	}
	text := doc.String()
	r := rand.New(rand.NewPCG(7, 8))
	for _, step := range []int{16, 700, 5000, 0, len(text)} {
		p := newPage(t, "m-p0")
		for k := 0; k < len(text); {
			k = cut(k, step, r, 9000)
			p.apply(p.s.Next(text[:min(k, len(text))]))
			checkGroups(t, p, step, false)
		}
		p.apply(p.s.Finish(text))
		if got, want := p.html(), normal(t, Render(text)); got != want {
			t.Fatalf("step %d: the page differs from Render", step)
		}
		if groups := checkGroups(t, p, step, true); groups < 3 {
			t.Fatalf("step %d: %d groups for %d bytes", step, groups, len(text))
		}
	}
}

// checkGroups checks the live container's groups as TestStreamGroups
// says and returns how many there are.
func checkGroups(t *testing.T, p *page, step int, done bool) int {
	t.Helper()
	live := byID(p.root, "m-p0")
	var groups []*html.Node
	for g := live.FirstChild; g != nil; g = g.NextSibling {
		if g.Type != html.ElementNode || !hasClass(g, "md-group") {
			t.Fatalf("step %d: the live container holds %q outside a group", step, g.Data)
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		t.Fatalf("step %d: no group", step)
	}
	for i, g := range groups {
		n := 0
		for c := g.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || !hasClass(c, "md-chunk") {
				t.Fatalf("step %d: group %d holds %q outside a chunk", step, i, c.Data)
			}
			n++
		}
		if (i < len(groups)-1 && n != groupMax) || n < 1 || n > groupMax {
			t.Fatalf("step %d: group %d of %d holds %d chunks", step, i, len(groups), n)
		}
	}
	if !done {
		last := groups[len(groups)-1].LastChild
		for c := last.FirstChild; c != nil; c = c.NextSibling {
			if c.NextSibling == nil && !hasClass(c, "md-open") {
				t.Fatalf("step %d: the open block is not at the end of the last chunk", step)
			}
		}
	}
	return len(groups)
}

// Long code blocks, highlighted or not, closed or left open at the end of
// the text, with a token over the lines where one chunk of lines ends and
// the next begins: at any deltas the page ends as Render shows it, which
// puts their lines in chunks.
func TestStreamLongCodeChunks(t *testing.T) {
	var code strings.Builder
	for i := range 350 {
		if i == 98 {
			code.WriteString("var s = `raw\nover\nthe\nchunk`\n")
		}
		fmt.Fprintf(&code, "\tx%03d := f(%d)\n", i, i)
	}
	indented := "    " + strings.ReplaceAll(strings.TrimSuffix(code.String(), "\n"), "\n", "\n    ") + "\n"
	r := rand.New(rand.NewPCG(5, 6))
	for name, doc := range map[string]string{
		"go":        "Intro.\n\n```go\n" + code.String() + "```\n\nAfter.\n",
		"plain":     "```\n" + code.String() + "```\n",
		"open":      "```go\n" + strings.TrimSuffix(code.String(), "\n"),
		"indented":  "Intro.\n\n" + indented + "\nAfter.\n",
		"two lines": "```\n" + strings.Repeat("a\n", linesPerChunk) + "```\n\n```\n" + strings.Repeat("b\n", linesPerChunk+1) + "```\n",
	} {
		want := normal(t, Render(doc))
		if !strings.Contains(Render(doc), `class="code-lines"`) {
			t.Fatalf("%s: Render put no lines in chunks", name)
		}
		for _, step := range []int{1, 7, 64, 1000, 0} {
			p := newPage(t, "m-p0")
			for k := 0; k < len(doc); {
				k = cut(k, step, r, 2500)
				p.apply(p.s.Next(doc[:min(k, len(doc))]))
			}
			p.apply(p.s.Finish(doc))
			if got := p.html(); got != want {
				t.Fatalf("%s, step %d: the page differs from Render:\n got %s\nwant %s", name, step, got, want)
			}
		}
	}
	if got := chunkLines("a\nb\n"); got != "a\nb\n" {
		t.Fatalf("a short block is chunked: %q", got)
	}
	if got := splitLines(`<span class="s">x` + "\n" + `</span>y` + "\n" + `z`); len(got) != 3 || got[0] != `<span class="s">x`+"\n</span>" {
		t.Fatalf("splitLines: %q", got)
	}
}

// A code block written at a model's pace goes out highlighted line by line
// and closing it re-sends nothing: a frame's patch stays small (make
// bench's patch_largest_reply_frame, ≤ 4 KB). Closing used to replace
// the whole block, highlighted again, every time (5 KB for 20 lines).
func TestStreamCodeCloseSendsLittle(t *testing.T) {
	var b strings.Builder
	b.WriteString("Intro paragraph.\n\n```go\n")
	for j := range 20 {
		fmt.Fprintf(&b, "\tv%d := compute(%d, %d) // step %d\n", j, 1, j, j)
	}
	b.WriteString("```\n\nAfter.\n")
	text := b.String()
	s := NewStream("m1")
	for i := 8; i <= len(text); i += 8 {
		for _, op := range s.Next(text[:i]) {
			if len(op.HTML) > 1500 {
				t.Fatalf("at byte %d of %d: a %d-byte patch (%v of %s)", i, len(text), len(op.HTML), op.Mode, op.ID)
			}
		}
	}
}
