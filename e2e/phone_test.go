package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/app/chat"
)

// longModel and longTitle are as long as real ones get, and longer: a
// header that does not wrap them makes the page wider than a phone.
const (
	longModel = "openrouter/anthropic/claude-3.7-sonnet-thinking-2025-02-19-extended-preview"
	longTitle = "Dark theme for the settings page, and the colours of the code blocks in the replies too"
)

// phoneChat opens, in a window w px wide, a chat with a long title, a
// reply with usage (the header shows the thread's total), and then a long
// model.
func phoneChat(t *testing.T, p *parley, w int) (string, *rod.Page) {
	t.Helper()
	th, err := p.In.Runtime.CreateThread(context.Background(), agentcore.Thread{ResourceID: "default", Title: longTitle})
	if err != nil {
		t.Fatal(err)
	}
	p.Model.Push(scripted.Reply{Text: "Sure: `" + strings.Repeat("x", 30) + "` and a long line " + words(40),
		Usage: scripted.Usage{PromptTokens: 123456, CompletionTokens: 7890}})
	pg := p.page("/t/" + th.ID)
	sized(pg, w, 844)
	pg.MustElement("#draft").MustInput("hello")
	pg.MustElement("#send").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	p.setChatModel(th.ID, longModel)
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `(m) => document.querySelector('#chat-header .model-input').value === m`, longModel)
	waitJS(t, pg, `() => document.querySelector('#thread-usage').textContent.trim() !== ''`)
	return th.ID, pg
}

// setChatModel makes model the chat's own, as the header's model box does
// but without checking it can be opened.
func (p *parley) setChatModel(threadID, model string) {
	p.t.Helper()
	if _, err := p.In.Runtime.UpdateThreadMetadata(context.Background(), threadID, func(meta map[string]any) error {
		for k, v := range chat.Metadata(chat.Settings{Model: model}) {
			meta[k] = v
		}
		return nil
	}); err != nil {
		p.t.Fatal(err)
	}
}

// sized sets the page's viewport to a window w px wide; a phone's is
// touch-sized and mobile.
func sized(pg *rod.Page, w, h int) {
	pg.MustSetViewport(w, h, 1, w < 760)
}

// noSideScroll fails the test when the page at width w scrolls sideways.
func noSideScroll(t *testing.T, pg *rod.Page, what string, w int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); pg.MustEval(`() => innerWidth`).Int() != w && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	got := pg.MustEval(`() => [document.documentElement.scrollWidth, innerWidth,
		[...document.querySelectorAll('body *')].filter(e => { const r = e.getBoundingClientRect(); return r.width && r.right > innerWidth + 1 && getComputedStyle(e).position !== 'fixed' })
			.slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.') + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')]`).Arr()
	// A phone lays out a page wider than its screen by widening the
	// layout viewport (and zooming out): innerWidth grows past the screen.
	if sw, iw := got[0].Int(), got[1].Int(); sw > iw || iw != w {
		t.Errorf("%s at %d px: the page is wider than the window (scrollWidth %d, innerWidth %d); past its right edge: %s", what, w, sw, iw, got[2].String())
	}
}

// reachable is a JS predicate: the element of the selector is shown,
// inside the window, and on top at its centre (a tap there reaches it).
const reachable = `(sel) => {
	const el = document.querySelector(sel);
	if (!el) return false;
	const r = el.getBoundingClientRect();
	if (!r.width || !r.height || r.left < 0 || r.top < 0 || r.right > innerWidth + 1 || r.bottom > innerHeight + 1) return false;
	if (getComputedStyle(el).visibility !== 'visible') return false;
	const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
	return !!hit && (el === hit || el.contains(hit) || hit.contains(el));
}`

func isReachable(pg *rod.Page, sel string) bool {
	return pg.MustEval(reachable, sel).Bool()
}

// settles is whether sel is reachable, once it is as wanted or a second
// (longer than any transition) has passed.
func settles(pg *rod.Page, sel string, want bool) bool {
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got := isReachable(pg, sel); got == want || time.Now().After(deadline) {
			return got
		}
	}
}

// On a phone (390 px) everything the sidebar holds is reached through the
// ☰ drawer, and nothing is wider than the screen.
func TestPhoneDrawer(t *testing.T) {
	p := startParley(t)
	other := p.newThread()
	id, pg := phoneChat(t, p, 390)
	noSideScroll(t, pg, "the chat", 390)
	for _, sel := range []string{"#chat-header .chat-title", "#chat-header .model-input", "#chat-header .chat-menu-btn", "#draft", "#send"} {
		if !isReachable(pg, sel) {
			t.Errorf("at 390 px %s is not on the screen", sel)
		}
	}
	// The bell does not cover the demo banner, nor the header.
	if cover := pg.MustEval(`() => { const b = document.querySelector('#inbox-bell').getBoundingClientRect();
		return [...document.querySelectorAll('#banner, #chat-header')].filter(e => { const r = e.getBoundingClientRect();
			return r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom }).map(e => e.id).join(' ') }`).String(); cover != "" {
		t.Errorf("at 390 px the inbox bell covers %s", cover)
	}
	pg.MustScreenshot(artifact("phone-390-chat.png"))

	// The sidebar is out of sight until the menu button opens it.
	if has, _, _ := pg.Has("#drawer-btn"); !has {
		t.Fatal("at 390 px there is no menu button (#drawer-btn) to open the sidebar")
	}
	btn := func() *rod.Element { return pg.MustElement("#drawer-btn") }
	if l := btn().MustAttribute("aria-label"); l == nil || *l == "" {
		t.Error("the menu button has no aria-label")
	}
	if isReachable(pg, "#new-chat") {
		t.Fatal("the sidebar shows at 390 px before the menu opens it")
	}
	expanded := func() string { return *btn().MustAttribute("aria-expanded") }
	if e := expanded(); e != "false" {
		t.Errorf("aria-expanded = %q before opening", e)
	}
	open := func() {
		t.Helper()
		btn().MustClick()
		waitJS(t, pg, `() => document.querySelector('#drawer-btn').getAttribute('aria-expanded') === 'true'`)
		waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().left === 0`) // the slide has ended
	}
	closed := func(how string) {
		t.Helper()
		waitJS(t, pg, `() => document.querySelector('#drawer-btn').getAttribute('aria-expanded') === 'false'`)
		waitJS(t, pg, `(sel) => !(`+reachable+`)(sel)`, "#new-chat")
		_ = how
	}
	open()
	for _, sel := range []string{"#thread-" + other + " .thread-link", "#thread-" + id + " .thread-link", "#new-chat", "#search-open", "#import-form .import-btn", "#sidebar .settings-link"} {
		if !isReachable(pg, sel) {
			t.Errorf("with the drawer open, %s cannot be reached", sel)
		}
	}
	noSideScroll(t, pg, "the open drawer", 390)
	pg.MustScreenshot(artifact("phone-390-drawer.png"))

	// A click on the backdrop closes it, and so does Esc.
	pg.Mouse.MustMoveTo(370, 400)
	pg.Mouse.MustClick("left")
	closed("backdrop")
	open()
	pg.KeyActions().Press(input.Escape).MustDo()
	closed("Esc")

	// Search from the drawer opens the search over the page.
	open()
	pg.MustElement("#search-open").MustClick()
	waitJS(t, pg, `() => document.querySelector('dialog#search[open]') !== null`)
	closed("search")
	pg.MustEval(`() => document.querySelector('dialog#search').close()`)

	// Choosing a chat closes the drawer and opens the chat.
	open()
	pg.MustElement("#thread-" + other + " .thread-link").MustClick()
	waitJS(t, pg, `(u) => location.pathname === u`, "/t/"+other)
	pg.MustWaitLoad()
	closed("a chat chosen")
	if isReachable(pg, "#thread-"+other) {
		t.Error("the drawer is open on the chosen chat")
	}

	// Settings, through the drawer, fit the screen too.
	open()
	pg.MustElement("#sidebar .settings-link").MustClick()
	waitJS(t, pg, `() => location.pathname === '/settings' && document.querySelector('#settings') !== null`)
	pg.MustWaitLoad()
	closed("settings")
	noSideScroll(t, pg, "settings", 390)
	pg.MustScreenshot(artifact("phone-390-settings.png"))
}

// On a phone the inbox takes the whole screen, so its items read as lines
// of text, not a word per line.
func TestPhoneInbox(t *testing.T) {
	p := startParley(t)
	_, pg := phoneChat(t, p, 390)
	waitJS(t, pg, reachable, "#inbox-bell")
	pg.MustElement("#inbox-bell").MustClick()
	waitJS(t, pg, `() => { const r = document.querySelector('#inbox-panel').getBoundingClientRect(); return r.width > 0 }`)
	r := pg.MustEval(`() => { const r = document.querySelector('#inbox-panel').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, innerWidth, innerHeight] }`).Arr()
	left, top, right, bottom, w, h := r[0].Num(), r[1].Num(), r[2].Num(), r[3].Num(), r[4].Num(), r[5].Num()
	if left > 0.5 || top > 0.5 || right < w-0.5 || bottom < h-0.5 {
		t.Errorf("the inbox at 390 px covers (%.0f,%.0f)-(%.0f,%.0f), not the screen %.0fx%.0f", left, top, right, bottom, w, h)
	}
	if !isReachable(pg, "#inbox-panel .inbox-close") {
		t.Error("the inbox's close button cannot be reached")
	}
	noSideScroll(t, pg, "the inbox", 390)
	pg.MustScreenshot(artifact("phone-390-inbox.png"))
	pg.MustElement("#inbox-panel .inbox-close").MustClick()
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display === 'none'`)
}

// From the smallest phone to a large monitor the chat page never scrolls
// sideways; above 760 px the sidebar is beside the chat and the menu
// button is gone.
func TestPhoneWidths(t *testing.T) {
	p := startParley(t)
	_, pg := phoneChat(t, p, 1280)
	for _, w := range []int{360, 390, 760, 761, 1280, 1920, 2560} {
		sized(pg, w, 900)
		noSideScroll(t, pg, "the chat", w)
		wide := w > 760
		// The layout changes at once; the sidebar may still be sliding away.
		if got := settles(pg, "#new-chat", wide); got != wide {
			t.Errorf("at %d px the sidebar's New chat reachable = %v, want %v", w, got, wide)
		}
		if got := settles(pg, "#drawer-btn", !wide); got == wide {
			t.Errorf("at %d px the menu button reachable = %v, want %v", w, got, !wide)
		}
		if w == 390 || w == 1280 || w == 1920 {
			pg.MustScreenshot(artifact(fmt.Sprintf("phone-widths-%d-chat.png", w)))
		}
	}
	if s := evalString(pg, `() => document.querySelector('#chat-header .chat-title').innerText`); !strings.HasPrefix(s, "Dark theme") {
		t.Errorf("title = %q", s)
	}
}
