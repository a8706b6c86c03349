package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A Stream renders one text that grows while a page shows it, so that
// each new piece costs about its own size, not the size of everything
// before it. The page holds the text as
//
//	<div class="md-live" id="ID" data-ignore>
//	  <div class="md-group" id="ID-g0">
//	    <div class="md-chunk" id="ID-c0">…finished blocks…</div>
//	    …
//	  </div>
//	  …
//	  <div class="md-group" id="ID-gJ">
//	    …
//	    <div class="md-chunk" id="ID-cK">
//	      …finished blocks…
//	      <div class="md-open" id="ID-oN">…the open block…</div>
//	    </div>
//	  </div>
//	</div>
//
// The page lays it out as the bare blocks Render returns: the live and
// open wrappers are display: contents, and a chunk or group is a plain
// block, which margins collapse through (app.css). A block is finished once the next one has
// begun: a top-level Markdown block never changes after that, so it is
// rendered once and inserted before the open wrapper; only the open
// block (the paragraph, list, table or quote still being written) is
// rendered again and replaces the wrapper. Once a chunk holds chunkMax
// of source, the open wrapper moves on to a new one at the next heading
// (finish): the finished blocks of a long reply are then a few hundred
// boxes deep instead of thousands side by side, so the browser's style,
// layout-tree and layout passes over a growing reply (each walks the
// children of a box with a dirty child) stay the size of a chunk.
// The chunks are in groups (groupMax). An open code block goes line by
// line: its complete lines are appended to its code element, before a
// span holding the line still being typed.
// When the text is complete, Finish renders what remains: the page then
// shows exactly Render(text), blocks for blocks (TestStreamEqualsRender
// cuts every construct at every byte).
//
// Two things make a text render whole on every call instead: a link
// reference definition (it turns "[x]" in blocks already shown into
// links), and a text that does not continue the last one (a reply
// rewritten). The page stays right; only the saving is lost.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	id      string // the container's id; the wrapper and tail ids derive from it
	src     string // the text of the last call
	done    int    // src[:done] is on the page as finished blocks
	n       int    // the open wrapper is ID-o<n>
	chunk   int    // the open wrapper's chunk is ID-c<chunk>
	group   int    // that chunk's group is ID-g<group>
	inGroup int    // chunks in that group
	held    int    // bytes of source finished in that chunk
	open    string // the open wrapper's content as last sent
	whole   bool   // render the whole text every time (a link reference)
	code    *openCode
}

// Mode says what an Op does to the element with its ID.
type Mode int

const (
	Before     Mode = iota // insert HTML before it
	After                  // insert HTML after it
	Replace                // replace it with HTML
	Remove                 // remove it
	AppendCode             // append HTML to the code element inside it
)

// An Op is one change to the page.
type Op struct {
	Mode Mode
	ID   string
	HTML string
}

// NewStream returns a Stream for the element id, which must be a valid
// HTML id and CSS identifier (Parley's ids are).
func NewStream(id string) *Stream { return &Stream{id: id} }

// Shell is the empty frame of a new Stream: the page receives it first,
// then the operations of Next.
func (s *Stream) Shell() string {
	return s.container("")
}

// container is the whole element with open as the open block's content,
// in a new chunk. It carries data-ignore: Datastar scans every element
// added to the page for its attributes (each one's dataset and attribute
// list), which Markdown never carries, and a frame of highlighted code
// adds thousands; under data-ignore the scan stops at one closest() each.
func (s *Stream) container(open string) string {
	s.inGroup = 1
	return `<div class="md-live" id="` + s.id + `" data-ignore><div class="md-group" id="` + s.groupID() + `">` +
		s.chunkHTML(open) + `</div></div>`
}

// chunkMax is the source a chunk holds before the open wrapper moves on
// to a new one, at the next heading (finish): some ten blocks (250
// elements) of a typical reply. A chunk that fills is laid out again as
// a box of its own (content-visibility: auto), so chunks are small; the
// browser checks the full ones against the screen each frame, so not
// tiny: 1 MiB is some 500 of them (groupMax).
const chunkMax = 2 << 10

// groupMax is how many chunks a group holds. The browser checks every
// chunk it may skip against the screen each frame: over 1 MiB of reply,
// some 500 chunks, that check grew from 1.2 to 3.5 ms a frame. A full
// group is skipped whole when away from the screen, so the page checks
// the groups (some 30 a MiB) and the chunks of those near the screen.
const groupMax = 16

// chunkHTML is a new chunk holding the open wrapper with open.
func (s *Stream) chunkHTML(open string) string {
	return `<div class="md-chunk" id="` + s.chunkID() + `">` + s.wrapper(open) + `</div>`
}

// finish puts the finished blocks tail[:b] (complete is tail's complete
// lines, doc their parse) on the page before the open wrapper. Once the
// chunk holds chunkMax, a top-level heading of level 1 to 3 among them, or
// the open block at b when it is one, begins a new chunk, and so on while
// the blocks fill chunk after chunk (a page that fell behind a fast reply
// gets many at once); the last new chunk takes the open wrapper (emptied:
// the caller sends it).
//
// Chunks begin only with such a heading so that a full chunk can be laid
// out on its own (app.css gives it content-visibility: auto, which keeps
// its margins inside it) and still look the same: the heading's top
// margin is larger than the bottom margin of any block before it, so the
// space between them is the heading's either way. A chunk that is full
// when it arrives is a block from the start, which the browser lays out
// only once the view comes near it: a page following a fast reply draws
// the end of what a frame brings, not all of it.
func (s *Stream) finish(tail, complete string, doc ast.Node, b int) []Op {
	var splits []int
	if s.held+b >= chunkMax {
		held, from := s.held, 0
		for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
			h, ok := n.(*ast.Heading)
			if !ok || h.Level > 3 || n.Pos() < 0 {
				continue
			}
			at := lineStart(complete, n.Pos())
			if at > b {
				break
			}
			if held+at-from >= chunkMax {
				splits = append(splits, at)
				held, from = 0, at
			}
		}
	}
	s.done += b
	if len(splits) == 0 {
		s.held += b
		if finished := Render(tail[:b]); finished != "" {
			return []Op{{Before, s.openID(), finished}}
		}
		return nil
	}
	var ops []Op
	if finished := Render(tail[:splits[0]]); finished != "" {
		ops = append(ops, Op{Before, s.openID(), finished})
	}
	full, group, open := s.chunkID(), s.groupID(), s.openID()
	// The new chunks fill the open chunk's group, then new groups after it.
	var chunks, groups strings.Builder
	for i, at := range splits {
		s.chunk++
		w := &chunks
		if s.inGroup == groupMax || groups.Len() > 0 {
			w = &groups
			if s.inGroup == groupMax {
				if groups.Len() > 0 {
					groups.WriteString(`</div>`)
				}
				s.group++
				s.inGroup = 0
				groups.WriteString(`<div class="md-group" id="` + s.groupID() + `">`)
			}
		}
		s.inGroup++
		w.WriteString(`<div class="md-chunk" id="` + s.chunkID() + `">`)
		if i+1 < len(splits) {
			w.WriteString(Render(tail[at:splits[i+1]]))
		} else {
			s.n++
			w.WriteString(Render(tail[at:b]) + s.wrapper(""))
		}
		w.WriteString(`</div>`)
	}
	s.held, s.open = b-splits[len(splits)-1], ""
	ops = append(ops, Op{Remove, open, ""})
	if chunks.Len() > 0 {
		ops = append(ops, Op{After, full, chunks.String()})
	}
	if groups.Len() > 0 {
		ops = append(ops, Op{After, group, groups.String() + `</div>`})
	}
	return ops
}

func (s *Stream) chunkID() string { return s.id + "-c" + strconv.Itoa(s.chunk) }
func (s *Stream) groupID() string { return s.id + "-g" + strconv.Itoa(s.group) }
func (s *Stream) openID() string  { return s.id + "-o" + strconv.Itoa(s.n) }
func (s *Stream) tailID() string  { return s.openID() + "-tail" }

func (s *Stream) wrapper(inner string) string {
	return `<div class="md-open" id="` + s.openID() + `">` + inner + `</div>`
}

// advance takes text as the stream's text and moves an open code block on
// (final: the text is complete). It says false when the caller must not go
// on: the text restarted the stream, or a code block is still open; ops
// are then all there is to send.
func (s *Stream) advance(text string, final bool) (ops []Op, more bool) {
	if s.whole || !strings.HasPrefix(text, s.src) {
		return s.restart(text), false
	}
	s.src = text
	if s.code == nil {
		return nil, true
	}
	ops = s.codeLines(final)
	if s.code != nil {
		if final { // cannot happen: a complete text closes every block
			return s.restart(text), false
		}
		return ops, false
	}
	return ops, true
}

// Next brings the page from the text of the last call to text.
func (s *Stream) Next(text string) []Op {
	ops, more := s.advance(text, false)
	if !more {
		return ops
	}
	tail := text[s.done:]
	complete := tail[:strings.LastIndexByte(tail, '\n')+1]
	doc, refs := parse(complete)
	if refs || hasReferenceDefinition(tail[len(complete):]) {
		s.whole = true
		return s.restart(text)
	}
	if last := doc.LastChild(); last != nil {
		// Everything before the last block is finished (before the first
		// block there are only blank lines, which render as nothing).
		if b := lineStart(complete, last.Pos()); b > 0 {
			ops = append(ops, s.finish(tail, complete, doc, b)...)
			tail = tail[b:]
		}
		if isCode(last) && last.Pos() >= 0 {
			return append(ops, s.startCode(last.Kind() == ast.KindFencedCodeBlock, codeLang(last, []byte(complete)))...)
		}
	}
	return append(ops, s.replaceOpen(Render(tail))...)
}

// Finish brings the page to the whole of text, which is complete: nothing
// is open any more, and the page shows Render(text).
func (s *Stream) Finish(text string) []Op {
	ops, more := s.advance(text, true)
	if !more {
		return ops
	}
	if _, refs := parse(text[s.done:]); refs {
		s.whole = true
		return s.restart(text)
	}
	rest := Render(text[s.done:])
	if rest == "" {
		// Nothing is open: the empty wrapper goes, so that the last block
		// is the last thing on the page, as in Render's.
		s.open = ""
		return append(ops, Op{Remove, s.openID(), ""})
	}
	return append(ops, s.replaceOpen(rest)...)
}

func (s *Stream) replaceOpen(open string) []Op {
	if open == s.open {
		return nil
	}
	s.open = open
	return []Op{{Replace, s.openID(), s.wrapper(open)}}
}

// restart replaces the container with the whole text in one open wrapper.
func (s *Stream) restart(text string) []Op {
	s.src, s.done, s.code, s.held = text, 0, nil, 0
	s.n++
	s.chunk++
	s.group++
	s.open = Render(text)
	if !s.whole {
		if _, refs := parse(text); refs {
			s.whole = true
		}
	}
	return []Op{{Replace, s.id, s.container(s.open)}}
}

// parse parses src and says whether it defines a link reference.
func parse(src string) (ast.Node, bool) {
	p := pipelineOnce()
	source := []byte(src)
	doc := p.md.Parser().Parse(text.NewReader(source))
	refs := false
	for c := doc.FirstChild(); c != nil && !refs; c = c.NextSibling() {
		_ = ast.Walk(c, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if n.Kind() == ast.KindLinkReferenceDefinition {
				refs = true
				return ast.WalkStop, nil
			}
			if n.Type() == ast.TypeInline {
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
	}
	// Definitions are taken out of the tree, but a reference resolved
	// against one leaves a trace; the raw text is the safe test.
	if !refs && strings.Contains(src, "]:") {
		refs = hasReferenceDefinition(src)
	}
	return doc, refs
}

// hasReferenceDefinition says whether src holds a line that starts like a
// link reference definition ("[label]:" after at most three spaces of
// indentation, possibly inside a quote or a list item). It is generous: a
// false yes only costs the incremental saving.
func hasReferenceDefinition(src string) bool {
	for line := range strings.Lines(src) {
		l := strings.TrimLeft(line, " \t>-*+0123456789.)")
		if strings.HasPrefix(l, "[") && strings.Contains(l, "]:") {
			return true
		}
	}
	return false
}

// lineStart is the offset of the start of the line holding pos.
func lineStart(src string, pos int) int {
	if pos <= 0 || pos > len(src) {
		return 0
	}
	return strings.LastIndexByte(src[:pos], '\n') + 1
}

func isCode(n ast.Node) bool {
	return n.Kind() == ast.KindFencedCodeBlock || n.Kind() == ast.KindCodeBlock
}

// highlightLimit is the largest code block that is highlighted; a bigger
// one is shown as plain text, as editors and code hosts do, because
// highlighting costs about 3 ms per KiB.
const highlightLimit = 64 << 10

// liveHighlight is the most new code of an open block that one frame
// highlights line by line. A model writes a few lines per frame, which are
// coloured as they come; a frame bringing more (a page catching up on a
// reply written faster than it is shown) gets them as plain text, because
// the block is highlighted whole when it closes anyway (a token may span
// lines), and highlighting a flood twice was most of its cost.
const liveHighlight = 1 << 10

// plainMax bounds the code of a block that may go out plain: closing it
// replaces it with its highlighted HTML, which must stay about one frame's
// worth (a larger block is highlighted as it comes, and a block that
// outgrows this bound has its plain lines highlighted then).
const plainMax = 8 << 10

// openCode is a top-level code block still being written.
type openCode struct {
	fence  []byte // the opening fence line, nil for an indented block
	char   byte   // the fence's character
	length int    // the fence's length
	start  int    // src offset of the block's first line
	next   int    // src offset of the first line not yet on the page
	lang   string
	hl     bool // highlighted (lang known and the code within highlightLimit)
	size   int  // bytes of code on the page
	lines  int  // lines of code on the page (chunkLines: the last chunk holds the tail)
	body   strings.Builder
	plain  bool   // some lines of a highlighted block went out plain (liveHighlight)
	tail   string // the tail span's content as sent
}

// startCode makes the open block, a code block starting at s.done, grow
// line by line.
func (s *Stream) startCode(fenced bool, lang string) []Op {
	c := &openCode{start: s.done, next: s.done}
	if fenced {
		line := s.src[s.done:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		c.fence = []byte(line)
		c.next += len(line) + 1
		fence := strings.TrimLeft(line, " ")
		c.char = fence[0]
		c.length = len(fence) - len(strings.TrimLeft(fence, fence[:1]))
		c.lang = lang
		c.hl = lexerFor(lang) != nil
	}
	s.code = c
	s.open = "" // the wrapper now holds a code block, not a rendered open part
	return append([]Op{{Replace, s.openID(), s.wrapper(s.codeFrame(c, "", true))}}, s.codeLines(false)...)
}

// codeFrame is the block's HTML around body (code HTML, as codeHTML
// writes it) as chunkLines lays it out, with the tail span when open: at
// the end of the code, in the last chunk when there are chunks.
func (s *Stream) codeFrame(c *openCode, body string, open bool) string {
	frame := Render("```" + c.lang + "\n")
	if c.fence == nil {
		frame = Render("```\n")
	}
	i := strings.LastIndex(frame, codeEnd)
	c.lines = len(splitLines(body))
	body = chunkLines(body)
	if open {
		tail := `<span id="` + s.tailID() + `"></span>`
		if c.lines > linesPerChunk {
			body = strings.TrimSuffix(body, codeLinesEnd) + tail + codeLinesEnd
		} else {
			body += tail
		}
	}
	return frame[:i] + body + frame[i:]
}

// addLines puts body, the HTML of complete lines, at the end of the open
// block, as chunkLines would lay out the block so far. Up to
// linesPerChunk lines they go before the tail; the line that passes it
// has the block sent again in chunks (all gives its body so far, with
// body); then lines go before the tail in the last chunk while it has
// room, and in new chunks appended to the code element, the tail moved
// into the last of them. The tail is then empty: the caller sends it.
func (s *Stream) addLines(c *openCode, body string, all func() string) []Op {
	lines := splitLines(body)
	if c.lines+len(lines) <= linesPerChunk {
		c.lines += len(lines)
		return []Op{{Before, s.tailID(), body}}
	}
	if c.lines <= linesPerChunk {
		c.tail = ""
		return []Op{{Replace, s.openID(), s.wrapper(s.codeFrame(c, all(), true))}}
	}
	var ops []Op
	if room := (linesPerChunk - c.lines%linesPerChunk) % linesPerChunk; room > 0 {
		n := min(room, len(lines))
		ops = append(ops, Op{Before, s.tailID(), strings.Join(lines[:n], "")})
		c.lines += n
		lines = lines[n:]
	}
	if len(lines) == 0 {
		return ops
	}
	c.lines += len(lines)
	c.tail = ""
	chunks := strings.TrimSuffix(chunkLinesOf(lines), codeLinesEnd) + `<span id="` + s.tailID() + `"></span>` + codeLinesEnd
	return append(ops, Op{Remove, s.tailID(), ""}, Op{AppendCode, s.openID(), chunks})
}

// codeLines puts the open code block's new complete lines on the page and
// its last, incomplete line in the tail span, or, when the block has
// ended (or final says the text is complete), closes it and opens a new
// wrapper after it.
func (s *Stream) codeLines(final bool) []Op {
	c, src := s.code, s.src
	end := strings.LastIndexByte(src, '\n') + 1 // complete lines end here
	if final {
		end = len(src)
	}
	if end < c.next {
		end = c.next
	}
	// Find where the block ends, if it does, among the new lines.
	send, closed, after := end, false, end
	lastCode := c.next // indented: end of the last non-blank line
	for at := c.next; at < end; {
		lineEnd := end
		if i := strings.IndexByte(src[at:end], '\n'); i >= 0 {
			lineEnd = at + i + 1
		}
		line := []byte(src[at:lineEnd])
		if c.fence != nil {
			if closesFence(line, c.char, c.length) {
				send, closed, after = at, true, lineEnd
				break
			}
		} else {
			if !util.IsBlank(line) {
				if pos, _ := util.IndentPositionPadding(line, 0, 0, 4); pos < 0 {
					send, closed, after = lastCode, true, lastCode
					break
				}
				lastCode = lineEnd
			}
		}
		at = lineEnd
	}
	if c.fence == nil && !closed {
		send = lastCode // trailing blank lines wait: they belong only before more code
		if final {
			closed, after = true, lastCode
		}
	}
	if final && !closed { // a fence left open runs to the end of the text
		closed, after = true, len(src)
	}
	var ops []Op
	whole := "" // the closed block's HTML, highlighted whole
	// plainAll is the block's code so far as plain HTML, for addLines.
	plainAll := func() string { return codeHTML(codeBlock{code: s.codeText(src[c.fence0():send])}) }
	if send > c.next {
		code := s.codeText(src[c.next:send])
		switch {
		case c.hl && c.size+len(code) > highlightLimit:
			// Too big to highlight: show what is there as plain text.
			c.hl = false
			c.body.Reset()
			all := s.codeText(src[c.fence0():send])
			c.size = len(all)
			body := codeHTML(codeBlock{code: all})
			ops = append(ops, Op{Replace, s.openID(), s.wrapper(s.codeFrame(c, body, true))})
			c.tail = ""
		case c.hl && closed && c.plain:
			// Lines went out plain: the whole block is highlighted below,
			// these with it. (A block whose lines all went out highlighted
			// takes its last ones line by line too, and closing it then
			// replaces nothing: the highlight is the same.)
			c.size += len(code)
			c.plain = true
		case c.hl && !closed && c.size+len(code) <= plainMax && len(code) > liveHighlight:
			c.size += len(code)
			c.plain = true
			ops = append(ops, s.addLines(c, codeHTML(codeBlock{code: code}), plainAll)...)
		case c.plain && !closed:
			// Grown past plainMax: the block so far is highlighted once,
			// so that closing it replaces no more than one frame's worth.
			all := s.codeText(src[c.fence0():send])
			body := codeHTML(codeBlock{lang: c.lang, code: all})
			c.size, c.plain = len(all), false
			c.body.Reset()
			c.body.WriteString(body)
			ops = append(ops, Op{Replace, s.openID(), s.wrapper(s.codeFrame(c, body, true))})
			c.tail = ""
		case c.hl && closed:
			// The last lines of a block highlighted line by line: the block
			// is highlighted whole now (below), and when what the page has
			// begins it, the rest of it is these lines, as the whole block
			// colours them; else the block is sent again whole. Highlighting
			// them alone as well was a third of a fast reply's highlighting.
			whole = codeHTML(codeBlock{lang: c.lang, code: s.codeText(src[c.fence0():send]), final: true})
			c.size += len(code)
			if rest, ok := strings.CutPrefix(whole, c.body.String()); ok {
				c.body.WriteString(rest)
				ops = append(ops, s.addLines(c, rest, c.body.String)...)
			}
		default:
			lang := ""
			if c.hl {
				lang = c.lang
			}
			body := codeHTML(codeBlock{lang: lang, code: code})
			c.size += len(code)
			all := plainAll
			if c.hl {
				c.body.WriteString(body)
				all = c.body.String
			}
			ops = append(ops, s.addLines(c, body, all)...)
		}
		c.next = send
	}
	if !closed {
		tail := ""
		if partial := src[max(end, c.next):]; partial != "" && (c.fence != nil || !util.IsBlank([]byte(partial))) {
			lang := ""
			if c.hl {
				lang = c.lang
			}
			tail = strings.TrimSuffix(codeHTML(codeBlock{lang: lang, code: strings.TrimSuffix(s.codeText(partial), "\n")}), "\n")
		}
		if tail != c.tail {
			c.tail = tail
			ops = append(ops, Op{Replace, s.tailID(), `<span id="` + s.tailID() + `">` + tail + `</span>`})
		}
		return ops
	}
	// The block is complete: src[c.start:after] is its source.
	ops = append(ops, Op{Remove, s.tailID(), ""})
	if c.hl {
		if whole == "" {
			whole = codeHTML(codeBlock{lang: c.lang, code: s.codeText(src[c.fence0():send]), final: true})
		}
		if c.plain || whole != c.body.String() {
			// Lines went out plain, or a token that spans lines (a raw
			// string, a block comment) highlights differently line by line.
			ops = append(ops, Op{Replace, s.openID(), s.wrapper(s.codeFrame(c, whole, false))})
		}
	}
	s.code = nil
	s.held += after - s.done
	s.done = after
	s.n++
	s.open = ""
	return append(ops, Op{After, s.id + "-o" + strconv.Itoa(s.n-1), s.wrapper("")})
}

// fence0 is where the block's code starts: after the fence line.
func (c *openCode) fence0() int {
	if c.fence != nil {
		return c.start + len(c.fence) + 1
	}
	return c.start
}

// codeText is the code of the block's lines in lines, as goldmark takes it:
// indentation removed as the fence or the indented block says.
func (s *Stream) codeText(lines string) string {
	c := s.code
	var src []byte
	skip := 0
	if c.fence != nil {
		src = append(append(append([]byte{}, c.fence...), '\n'), lines...)
	} else {
		// A first line of code, so that leading blank lines are inside.
		src = append([]byte("    x\n"), lines...)
		skip = 1
	}
	doc := pipelineOnce().md.Parser().Parse(text.NewReader(src))
	n := doc.FirstChild()
	if n == nil || !isCode(n) {
		return lines // cannot happen for lines inside the block
	}
	var b bytes.Buffer
	segs := n.Lines()
	for i := skip; i < segs.Len(); i++ {
		seg := segs.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// closesFence says whether line closes a fence of length or more chars.
func closesFence(line []byte, char byte, length int) bool {
	w, pos := util.IndentWidth(line, 0)
	if w >= 4 {
		return false
	}
	i := pos
	for i < len(line) && line[i] == char {
		i++
	}
	return i-pos >= length && util.IsBlank(line[i:])
}
