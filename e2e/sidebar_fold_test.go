package e2e

import (
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
)

// sidebarWidth is the sidebar's width on screen, in px.
func sidebarWidth(pg *rod.Page) int {
	return pg.MustEval(`() => Math.round(document.querySelector('#sidebar').getBoundingClientRect().width)`).Int()
}

// In a wide window the sidebar folds to a rail: Hide in its head, Show on
// the rail, or Ctrl+Shift+S (listed in the shortcuts). The rail keeps New
// chat, Search, the inbox and Settings; the choice outlives a reload; a
// phone-sized window still gets the whole sidebar in its drawer.
func TestSidebarFolds(t *testing.T) {
	p := startParley(t)
	id := importAt(t, p, "A chat to come back to", nowish(), false)
	pg := p.page("/t/" + id)
	sized(pg, 1280, 800)
	if w := sidebarWidth(pg); w < 240 {
		t.Fatalf("the sidebar is %d px wide before it is folded", w)
	}
	if !isReachable(pg, "#sidebar-hide") || isReachable(pg, "#sidebar-show") {
		t.Fatal("an open sidebar offers Hide, not Show")
	}
	pg.MustElement("#sidebar-hide").MustClick()
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().width < 80`)
	if got := evalString(pg, `() => document.activeElement?.id || ''`); got != "sidebar-show" {
		t.Errorf("after Hide the focus is on %q, want the Show button", got)
	}
	folded := func(what string) {
		t.Helper()
		if w := sidebarWidth(pg); w > 80 {
			t.Fatalf("%s: the sidebar is %d px wide, want a rail", what, w)
		}
		if isReachable(pg, "#thread-"+id+" .thread-link") || isReachable(pg, "#sidebar-hide") {
			t.Fatalf("%s: the folded sidebar still shows the chats or Hide", what)
		}
		for _, sel := range []string{"#sidebar-show", "#new-chat", "#search-open", "#inbox-bell", "#sidebar .settings-link"} {
			if !isReachable(pg, sel) {
				t.Errorf("%s: %s cannot be reached on the rail", what, sel)
			}
		}
		// The chat takes the room.
		if x := pg.MustEval(`() => Math.round(document.querySelector('main').getBoundingClientRect().left)`).Int(); x > 80 {
			t.Errorf("%s: the chat starts at %d px", what, x)
		}
	}
	folded("after Hide")
	// Buttons on the rail keep their names for a screen reader.
	if got := evalString(pg, `() => ['#new-chat', '#search-open', '#sidebar-show', '#sidebar .settings-link'].map(s => document.querySelector(s).innerText.trim() || document.querySelector(s).getAttribute('aria-label')).join('|')`); !strings.Contains(got, "New chat") || !strings.Contains(got, "Search") || !strings.Contains(got, "Settings") {
		t.Errorf("rail names: %q", got)
	}

	// A reload keeps it folded, from the first frame.
	pg.MustReload()
	pg.MustWaitLoad()
	folded("after a reload")
	pg.MustElement("#search-open").MustClick()
	waitJS(t, pg, `() => document.querySelector('#search')?.open === true`)
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.querySelector('#search').open`)
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("sidebar-folded-1280-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")

	// The page reacts to the sidebar's live updates without unfolding.
	importAt(t, p, "Arrived while folded", nowish(), false)
	waitJS(t, pg, `() => [...document.querySelectorAll('#sidebar .thread-title')].some(e => e.textContent === 'Arrived while folded')`)
	folded("after a live update")

	// A phone-sized window: the drawer holds the whole sidebar.
	sized(pg, 390, 844)
	pg.MustElement("#drawer-btn").MustClick()
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().left === 0`)
	if !isReachable(pg, "#thread-"+id+" .thread-link") || isReachable(pg, "#sidebar-show") {
		t.Fatal("on a phone the drawer of a folded sidebar does not list the chats")
	}
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.documentElement.classList.contains('drawer-open')`)
	sized(pg, 1280, 800)

	// Ctrl+Shift+S unfolds it (the focus in the message box stays there),
	// and folds it again; the shortcuts list it.
	pg.MustElement("#draft").MustClick()
	pg.KeyActions().Press(input.ControlLeft, input.ShiftLeft).Type(input.KeyS).MustDo()
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().width > 240`)
	if got := evalString(pg, `() => document.activeElement?.id || ''`); got != "draft" {
		t.Errorf("after the shortcut the focus is on %q, want the message box", got)
	}
	pg.MustReload()
	pg.MustWaitLoad()
	if w := sidebarWidth(pg); w < 240 {
		t.Fatalf("unfolded, then reloaded: the sidebar is %d px wide", w)
	}
	pg.MustEval(`() => document.activeElement?.blur()`) // ? in the message box is text
	pg.Keyboard.MustType(input.Key('?'))
	waitJS(t, pg, `() => document.querySelector('#shortcuts').open`)
	rows := evalString(pg, `() => [...document.querySelectorAll('#shortcuts tr')].map(r => r.cells[0].innerText + '=' + r.cells[1].innerText.replace(/\s+/g, '')).join('|')`)
	if !strings.Contains(rows, "Show or hide the sidebar=Ctrl+Shift+S") {
		t.Errorf("the shortcuts do not list the sidebar's: %s", rows)
	}
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.querySelector('#shortcuts').open`)
	pg.KeyActions().Press(input.ControlLeft, input.ShiftLeft).Type(input.KeyS).MustDo()
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().width < 80`)
	pg.MustElement("#sidebar-show").MustClick()
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().width > 240`)
	if got := evalString(pg, `() => document.activeElement?.id || ''`); got != "sidebar-hide" {
		t.Errorf("after Show the focus is on %q, want the Hide button", got)
	}
}
