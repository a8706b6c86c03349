package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// fromBottom is how far the chat's view is above the end of its content,
// once the page has drawn what it has.
const fromBottom = `async () => {
	await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	const el = document.getElementById('scroller');
	return el.scrollHeight - el.scrollTop - el.clientHeight;
}`

// A reply that comes faster than the page draws it is followed to its end:
// the content growing past the bottom between the page's scroll and its
// event is not the reader leaving (at full speed the view stopped
// following half a second into a long reply), and neither is the content
// above getting shorter. The reader leaves by
// scrolling up, and the view then stays where they put it while the
// reply goes on.
func TestFastReplyIsFollowed(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	text := markdownText(160 << 10)
	p.Model.Push(scripted.Reply{Text: text, Tokens: chunks(text, 16)})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("go")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if d := pg.MustEval(fromBottom).Num(); d >= 80 {
		t.Fatalf("the view is %.0f px above the end of a reply it was following", d)
	}

	// Content above getting shorter makes the browser clamp the scroll up,
	// by more than a screen when a chunk of a long reply laid out only near
	// the screen (content-visibility: auto) takes its real height; content
	// that comes before the scroll event leaves the view above the bottom.
	// Neither is the reader leaving.
	pg.MustEval(`async () => {
		const el = document.getElementById('scroller'), list = document.getElementById('messages');
		const pad = document.createElement('div'); pad.id = 'pad'; pad.style.height = '3000px'; list.prepend(pad);
		await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
		// As the browser does it: while it draws a frame (a resize
		// observer runs then), the content above shrinks by 2,700 px, which
		// clamps the scroll; the next network read adds to the reply before
		// the scroll's event.
		await new Promise(r => {
			const ro = new ResizeObserver(() => {
				ro.disconnect();
				pad.style.height = '300px';
				setTimeout(() => {
					const more = document.createElement('div'); more.id = 'more'; more.style.height = '500px'; list.append(more);
					r();
				}, 0);
			});
			ro.observe(document.body);
		});
	}`)
	if d := pg.MustEval(fromBottom).Num(); d >= 80 {
		t.Fatalf("the view stopped following when the content above got shorter: %.0f px above the end", d)
	}
	pg.MustEval(`() => { document.getElementById('pad').remove(); document.getElementById('more').remove() }`)

	p.Model.Push(scripted.Reply{Text: text[:8<<10], ChunkSize: 4, Delay: 10 * time.Millisecond})
	pg.MustElement("#draft").MustInput("again")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelectorAll('#messages .msg-assistant').length === 2 && document.querySelector('#messages .msg-assistant:last-child .md-open') !== null`)
	pg.MustElement("#scroller").MustHover()
	pg.Mouse.MustScroll(0, -1500)
	waitJS(t, pg, `() => { const el = document.getElementById('scroller'); return el.scrollHeight - el.scrollTop - el.clientHeight > 1000 }`)
	at := pg.MustEval(`() => document.getElementById('scroller').scrollTop`).Num()
	time.Sleep(300 * time.Millisecond) // the reply goes on below
	if now := pg.MustEval(`() => document.getElementById('scroller').scrollTop`).Num(); now != at {
		t.Fatalf("the view moved from %.0f to %.0f px after the reader scrolled up", at, now)
	}
	if pg.MustHas(`#messages .msg-assistant:last-child[data-status=complete]`) {
		t.Fatal("the reply ended before the view was checked: make it longer")
	}
}

// The conversation does not move sideways when it first outgrows the
// window: the scroller keeps room for its scroll bar on both sides from the
// start (it moved 7 px left, and the whole reply was laid out again, in the
// frame the bar appeared), so it stays centred over the composer too.
func TestNoShiftWhenTheChatOverflows(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Text: strings.Repeat("A line of the reply.\n\n", 80)})
	pg := p.page("/t/" + id)
	column := `() => { const r = document.querySelector('#messages').getBoundingClientRect(); return r.left + ' ' + r.right }`
	composer := `() => { const r = document.querySelector('#composer').getBoundingClientRect(); return (r.left + r.right) / 2 }`
	before := evalString(pg, column)
	pg.MustElement("#draft").MustInput("go")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if s := pg.MustElement("#scroller"); s.MustEval(`() => this.scrollHeight > this.clientHeight`).Bool() != true {
		t.Fatal("the reply did not overflow the window")
	}
	if after := evalString(pg, column); after != before {
		t.Fatalf("the conversation's column moved from %s to %s when it overflowed", before, after)
	}
	var left, right float64
	fmt.Sscan(evalString(pg, column), &left, &right)
	if mid := pg.MustEval(composer).Num(); math.Abs((left+right)/2-mid) > 1 {
		t.Fatalf("the column's centre is at %.1f, the composer's at %.1f", (left+right)/2, mid)
	}
}
