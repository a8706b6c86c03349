package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
	"parley/ui/markdown"
)

// blocksReply has every Markdown construct the renderer supports, with
// code that highlights, code that does not, and a block comment that
// highlights differently line by line.
const blocksReply = "# A heading\n\nSome *emphasis*, **strong**, `code`, ~~gone~~ and a [link](https://example.com).\nA hard break.\n\n" +
	"- one\n- two\n  - nested\n- [x] done\n\n1. first\n2. second\n\n" +
	"> a quote\n> more of it\n\n" +
	"| name | value |\n|:-----|------:|\n| a | 1 |\n| b | 2 |\n\n" +
	"```go\npackage main\n\n/* a comment\n   over lines */\nfunc main() {\n\tprintln(`raw\nstring`)\n}\n```\n\n" +
	"    indented code\n    more of it\n\n" +
	"Setext\n------\n\n---\n\n~~~\nplain fence\n~~~\n\n<b>not bold</b> & done.\n\n```python\ndef unclosed():\n    return 1"

// bodyHTML is the reply's body as it lays out: the live wrappers
// unwrapped and adjacent text merged.
const bodyHTML = `() => {
	const b = document.querySelector('#messages .msg-assistant .msg-body').cloneNode(true);
	for (const w of b.querySelectorAll('.md-live, .md-group, .md-chunk, .md-open')) w.replaceWith(...w.childNodes);
	b.normalize();
	return b.innerHTML;
}`

// bodyHeight is the reply's body's height once the page has settled.
const bodyHeight = `async () => {
	await document.fonts.ready;
	// Blocks off screen are laid out only once shown (content-visibility:
	// auto, app.css): the heights compared are those of every block laid out.
	const all = document.createElement('style');
	all.textContent = '#messages * { content-visibility: visible !important }';
	document.head.append(all);
	await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	const h = document.querySelector('#messages .msg-assistant .msg-body').getBoundingClientRect().height;
	all.remove();
	return h;
}`

// A reply streamed in pieces (finished blocks appended, the open block
// replaced, code line by line) ends as the page shows it after a reload,
// which renders it whole: the same HTML and the same height, whatever the
// size of the deltas.
func TestStreamedReplyEqualsReload(t *testing.T) {
	p := startParley(t)
	// The last case sends far more per frame than the page is given at
	// once (liveReply's pace): it catches up over several frames.
	flood := strings.Repeat(blocksReply+"\n```\n\n", 40)
	for _, c := range []struct {
		chunk int
		text  string
	}{{1, blocksReply}, {5, blocksReply}, {64, blocksReply}, {20000, flood}} {
		chunk := c.chunk
		id := p.newThread()
		p.Model.Push(scripted.Reply{Text: c.text, ChunkSize: chunk, Delay: time.Millisecond})
		pg := p.page("/t/" + id)
		pg.MustElement("#draft").MustInput("show me everything")
		pg.Keyboard.MustType(input.Enter)
		waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
		// A reply written on the page is laid out lazily by its chunks,
		// not block by block (.md-many): that is for a reply of many
		// blocks rendered whole, as the reload below shows it.
		const many = `() => document.querySelector('#messages .msg-assistant .msg-body').classList.contains('md-many')`
		if pg.MustEval(many).Bool() {
			t.Fatalf("chunk %d: the streamed reply is .md-many", chunk)
		}
		streamed := evalString(pg, bodyHTML)
		streamedHeight := pg.MustEval(bodyHeight).Num()
		if n := pg.MustEval(`() => document.querySelectorAll('#messages .cursor, #messages [id$="-tail"]').length`).Int(); n != 0 {
			t.Fatalf("chunk %d: %d cursors or code tails left after the reply ended", chunk, n)
		}
		// What rendering the whole text gives, parsed by the same page.
		want := evalString(pg, `(html) => { const d = document.createElement('div'); d.innerHTML = html; d.normalize(); return d.innerHTML }`, markdown.Render(c.text))
		if streamed != want {
			at := 0
			for at < min(len(streamed), len(want)) && streamed[at] == want[at] {
				at++
			}
			t.Fatalf("chunk %d: the streamed reply (%d bytes) differs from the whole text rendered (%d bytes) at byte %d:\nstreamed …%s…\n    want …%s…",
				chunk, len(streamed), len(want), at, around(streamed, at), around(want, at))
		}
		// The whole document, not the part of it parsed so far: under
		// load the reply's article is there (and complete) long before
		// its last block is (the finding of the last sessions' flood case).
		pg.MustReload()
		pg.MustWaitLoad()
		waitJS(t, pg, `() => document.readyState === 'complete' && document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
		whole := evalString(pg, bodyHTML)
		wholeHeight := pg.MustEval(bodyHeight).Num()
		if got := pg.MustEval(many).Bool(); got != (chunk == 20000) {
			t.Fatalf("chunk %d: the reloaded reply's .md-many is %v", chunk, got)
		}
		if streamed != whole {
			at := 0
			for at < min(len(streamed), len(whole)) && streamed[at] == whole[at] {
				at++
			}
			var stored string
			if ms := p.messages(id); len(ms) > 0 {
				m := ms[len(ms)-1]
				stored = fmt.Sprintf("%s, %d of %d bytes of text", m.Status, len(m.Content.Text()), len(c.text))
			}
			t.Fatalf("chunk %d: the streamed reply (%d bytes) differs from the reloaded one (%d bytes; stored now: %s) at byte %d:\nstreamed …%s…\n   whole …%s…",
				chunk, len(streamed), len(whole), stored, at, around(streamed, at), around(whole, at))
		}
		if streamedHeight != wholeHeight {
			t.Fatalf("chunk %d: the streamed reply is %.1f px high, the reloaded one %.1f px", chunk, streamedHeight, wholeHeight)
		}
		pg.MustClose()
	}
}

// around is s near at, for a failure message.
func around(s string, at int) string {
	return s[max(0, at-200):min(len(s), at+200)]
}

// A long reply streamed has its finished blocks in chunks, each full one
// laid out on its own (content-visibility: auto, which keeps its margins
// inside it): every block sits where it does when the reply is rendered
// whole (a reload), whether the text begins the reply (its first chunk is
// contained too) or follows another block.
func TestStreamedChunksLayOutAsBlocks(t *testing.T) {
	p := startParley(t)
	text := "Intro paragraph.\n\n" + markdownText(100<<10) + "\n\n- a list\n- at the end\n"
	for _, c := range []struct{ name, text string }{{"first", text}, {"after a block", "```\nx\n```\n\n" + text}} {
		id := p.newThread()
		p.Model.Push(scripted.Reply{Text: c.text, ChunkSize: 512, Delay: time.Millisecond})
		pg := p.page("/t/" + id)
		pg.MustElement("#draft").MustInput("go")
		pg.Keyboard.MustType(input.Enter)
		waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
		chunks, contained := containedOf(pg, ".md-chunk")
		if chunks < 5 || contained < chunks-2 {
			t.Fatalf("%s: %d chunks, %d of them contained", c.name, chunks, contained)
		}
		// The chunks are in groups, each full one (not the last) laid out
		// on its own too (but the first, after a block).
		if groups, full := containedOf(pg, ".md-group"); groups < 3 || full < groups-2 {
			t.Fatalf("%s: %d groups, %d of them contained", c.name, groups, full)
		}
		// Every chunk has style containment from the start, the one still
		// filling too: an element whose style
		// containment changes makes Chromium walk the whole document for
		// its counters, and a chunk filling up every frame made each frame
		// of a long reply cost more than the one before.
		if n := pg.MustEval(`() => [...document.querySelectorAll('#messages .md-group, #messages .md-chunk')].filter(c => !getComputedStyle(c).contain.includes('style')).length`).Int(); n != 0 {
			t.Fatalf("%s: %d chunks or groups without style containment", c.name, n)
		}
		streamed := pg.MustEval(blockTops, true).Arr()
		pg.MustReload()
		pg.MustWaitLoad()
		waitJS(t, pg, `() => document.readyState === 'complete' && document.querySelector('#messages .msg-assistant .msg-body') !== null`)
		whole := pg.MustEval(blockTops, false).Arr()
		if len(streamed) != len(whole) {
			t.Fatalf("%s: %d blocks streamed, %d reloaded", c.name, len(streamed), len(whole))
		}
		for i := range whole {
			if d := streamed[i].Num() - whole[i].Num(); d > 0.01 || d < -0.01 {
				t.Fatalf("%s: block %d of %d is at %.2f px streamed, %.2f px reloaded", c.name, i, len(whole), streamed[i].Num(), whole[i].Num())
			}
		}
		pg.MustClose()
	}
}

// containedOf counts the reply's elements that match selector, and those
// of them laid out only near the screen (content-visibility: auto).
func containedOf(pg *rod.Page, selector string) (all, contained int) {
	for _, cv := range pg.MustEval(`(sel) => [...document.querySelectorAll('#messages ' + sel)].map(c => getComputedStyle(c).contentVisibility)`, selector).Arr() {
		all++
		if cv.String() == "auto" {
			contained++
		}
	}
	return all, contained
}

// blockTops lists where the reply's blocks begin in its body, and the
// body's height, with every block laid out (contained: the chunks that
// content-visibility contains are contained as it contains those shown).
const blockTops = `async (contained) => {
	await document.fonts.ready;
	const body = document.querySelector('#messages .msg-assistant .msg-body');
	const st = document.createElement('style');
	st.textContent = '#messages * { content-visibility: visible !important }';
	document.head.append(st);
	const chunks = contained ? [...body.querySelectorAll('.md-group, .md-chunk')].filter(c => getComputedStyle(c).contentVisibility === 'auto') : [];
	for (const c of chunks) c.style.contain = 'layout paint style';
	await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	const top = body.getBoundingClientRect().top;
	const tops = [...body.querySelectorAll('h2, p, li, table, .code')].map(e => e.getBoundingClientRect().top - top).concat([body.getBoundingClientRect().height]);
	for (const c of chunks) c.style.contain = '';
	st.remove();
	return tops;
}`

// Datastar leaves a reply being written alone: its live container carries
// data-ignore, so an element added inside it is neither scanned for
// Datastar attributes (each frame adds thousands, and the scan was a third
// of the page's script time, issue 12) nor acted on. A Datastar attribute
// the model writes as raw HTML is dropped by the sanitiser, and one that
// slipped through would still be inert. The element added outside it is
// the control: Datastar runs its expression there.
func TestLiveReplyIsInertToDatastar(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	hostile := "<span data-text=\"'pwned'\" data-on:click=\"window.__pwned = 1\">model span</span>\n\n"
	p.Model.Push(scripted.Reply{Text: hostile + strings.Repeat(blocksReply+"\n```\n\n", 3), ChunkSize: 8, Delay: 5 * time.Millisecond})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("go")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant .md-live .md-open') !== null`)
	pg.MustEval(`() => {
		const probe = (id) => { const b = document.createElement('b'); b.id = id; b.setAttribute('data-text', "'ran'"); b.textContent = 'inert'; return b };
		document.querySelector('#messages .msg-assistant .md-live .md-chunk').prepend(probe('probe-in'));
		document.body.append(probe('probe-out'));
	}`)
	waitJS(t, pg, `() => document.getElementById('probe-out').textContent === 'ran'`)
	if got := evalString(pg, `() => document.getElementById('probe-in')?.textContent ?? 'gone'`); got != "inert" {
		t.Fatalf("an element added to the live reply was acted on by Datastar: its text is %q", got)
	}
	if !pg.MustEval(`() => document.querySelector('#messages .msg-assistant .md-live').closest('[data-ignore]') !== null`).Bool() {
		t.Fatal("the live reply is not under data-ignore")
	}
	pg.MustEval(`() => document.getElementById('probe-in').remove()`)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	body := `document.querySelector('#messages .msg-assistant .msg-body')`
	if n := pg.MustEval(`() => ` + body + `.querySelectorAll('[data-text], [data-on\\:click]').length`).Int(); n != 0 {
		t.Fatalf("%d elements of the reply carry the model's Datastar attributes", n)
	}
	if text := evalString(pg, `() => `+body+`.textContent`); !strings.Contains(text, `<span data-text="'pwned'"`) {
		t.Fatalf("the model's raw HTML is not shown as its text: %q", text[:min(len(text), 200)])
	}
}
