package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// press types key with the given modifiers held.
func press(pg *rod.Page, key input.Key, mods ...input.Key) {
	pg.KeyActions().Press(mods...).Type(key).MustDo()
}

func blur(pg *rod.Page) { pg.MustEval(`() => document.activeElement?.blur()`) }

func active(pg *rod.Page) string {
	return evalString(pg, `() => { const a = document.activeElement; return a === document.body ? 'body' : (a.id || a.className) }`)
}

// ? opens the overlay that lists every shortcut (but not while typing: then
// it is a question mark); Esc closes it.
func TestShortcutsOverlay(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)

	pg.MustElement("#draft").MustClick()
	pg.Keyboard.MustType(input.Key('?'))
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != "?" {
		t.Fatalf("typing ? in the message box gave %q", v)
	}
	if pg.MustEval(`() => document.querySelector('#shortcuts').open`).Bool() {
		t.Fatal("the overlay opened while typing")
	}
	pg.MustEval(`() => { const d = document.querySelector('#draft'); d.value = ''; d.dispatchEvent(new Event('input', {bubbles: true})); }`)

	blur(pg)
	pg.Keyboard.MustType(input.Key('?'))
	waitJS(t, pg, `() => document.querySelector('#shortcuts').open`)
	rows := evalString(pg, `() => [...document.querySelectorAll('#shortcuts tr')].map(r => r.cells[0].innerText + '=' + r.cells[1].innerText.replace(/\s+/g, '')).join('|')`)
	for _, want := range []string{"New chat=Ctrl+Shift+O", "Search chats=Ctrl+K", "Focus the message box=Shift+Esc",
		"Switch between Plan and Build=Ctrl+.", "Show these shortcuts=?", "Stop the reply, skip an open question, or deny a waiting approval=Esc",
		"Allow once=Y", "Always allow=A", "Deny=N"} {
		if !strings.Contains(rows, want) {
			t.Errorf("overlay lacks %q: %s", want, rows)
		}
	}
	pg.MustScreenshot(artifact("shortcuts-light.png"))
	colorScheme(t, pg, "dark")
	pg.MustScreenshot(artifact("shortcuts-dark.png"))
	colorScheme(t, pg, "light")
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.querySelector('#shortcuts').open`)
	if got := evalString(pg, `() => document.querySelector('#search-open kbd').innerText`); got != "Ctrl K" {
		t.Fatalf("the search button says %q, want Ctrl K", got)
	}

	// On a Mac the shortcuts say ⌘, and still do after the sidebar is patched.
	if err := (proto.EmulationSetUserAgentOverride{UserAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0)", Platform: "MacIntel"}).Call(pg); err != nil {
		t.Fatal(err)
	}
	pg.MustReload()
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null && document.documentElement.classList.contains('mac')`)
	p.newThread()
	waitJS(t, pg, `() => document.querySelectorAll('#sidebar .thread').length === 2`)
	if got := evalString(pg, `() => document.querySelector('#search-open kbd').innerText`); got != "⌘ K" {
		t.Fatalf("on a Mac the search button says %q after a sidebar patch, want ⌘ K", got)
	}
	blur(pg)
	pg.Keyboard.MustType(input.Key('?'))
	waitJS(t, pg, `() => document.querySelector('#shortcuts').open`)
	if rows := evalString(pg, `() => [...document.querySelectorAll('#shortcuts tr')].map(r => r.cells[0].innerText + '=' + r.cells[1].innerText.replace(/\s+/g, '')).join('|')`); !strings.Contains(rows, "Search chats=⌘+K") {
		t.Fatalf("on a Mac the overlay reads: %s", rows)
	}
}

// The shortcuts do what the overlay says: focus the message box, switch
// Plan/Build, stop a reply, start a new chat.
func TestShortcuts(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)

	blur(pg)
	press(pg, input.Escape, input.ShiftLeft)
	if a := active(pg); a != "draft" {
		t.Fatalf("Shift+Esc focused %q, want the message box", a)
	}

	press(pg, input.Period, input.ControlLeft)
	waitJS(t, pg, `() => document.querySelector('#mode-switch .mode.active')?.dataset.mode === 'plan'`)
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != "" {
		t.Fatalf("Ctrl+. typed %q into the message box", v)
	}
	press(pg, input.Period, input.ControlLeft)
	waitJS(t, pg, `() => document.querySelector('#mode-switch .mode.active')?.dataset.mode === 'build'`)

	p.Model.Push(scripted.Reply{Text: words(400), Delay: 20 * time.Millisecond})
	sendMsg(t, pg, "write a lot")
	waitJS(t, pg, `() => document.querySelector('#stop') !== null && document.querySelector('#messages .msg-assistant[data-status=streaming]') !== null`)
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=interrupted] .msg-note')?.innerText === 'Stopped'`)

	before := len(p.threads())
	press(pg, input.KeyO, input.ControlLeft, input.ShiftLeft)
	waitJS(t, pg, `() => location.pathname === '/' && document.querySelector('.welcome textarea[name=text]') !== null`)
	if n := len(p.threads()); n != before {
		t.Fatalf("%d threads after Ctrl+Shift+O, want %d: a new chat is stored with its first message", n, before)
	}
}

// An approval that appears takes the focus when the user is not typing
// (see focus_test.go); Y allows once, A always, N denies. A Y typed into the
// message box is text.
func TestApprovalKeys(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	approval := func(call string) {
		t.Helper()
		waitJS(t, pg, `() => `+p.card(call)+`?.querySelector('[data-approval]') != null`)
	}

	// Typing when the approval appears: the keys stay text.
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "k1", Name: "write_file", Args: `{"path":"one.txt","content":"1\n"}`}},
			ChunkSize: 8, Delay: 100 * time.Millisecond}, // the approval appears after the user has begun the next message
		scripted.Reply{Text: "Wrote one."},
	)
	sendMsg(t, pg, "write one")
	pg.Keyboard.MustType(input.KeyO, input.KeyK)
	approval("k1")
	if a := active(pg); a != "draft" {
		t.Fatalf("the approval took the focus from the message box (focus: %q)", a)
	}
	pg.Keyboard.MustType(input.KeyY)
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != "oky" {
		t.Fatalf("y in the message box gave %q", v)
	}
	time.Sleep(200 * time.Millisecond)
	if state := evalString(pg, `() => `+p.card("k1")+`.dataset.state`); state != "suspended" {
		t.Fatalf("typing y answered the approval: %s", state)
	}
	pg.MustScreenshot(artifact("approval-keys.png"))
	// Not typing any more: Y allows once.
	blur(pg)
	pg.Keyboard.MustType(input.KeyY)
	waitJS(t, pg, `() => `+p.card("k1")+`.dataset.state === 'done'`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote one.')`)
	if got := toolResultSeen(p, "k1"); strings.Contains(got, "denied") {
		t.Fatalf("k1: %s", got)
	}

	// Not typing: the approval takes the focus; N denies.
	pg.MustEval(`() => { const d = document.querySelector('#draft'); d.value = ''; d.dispatchEvent(new Event('input', {bubbles: true})); }`)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "k2", Name: "write_file", Args: `{"path":"two.txt","content":"2\n"}`}},
			ChunkSize: 8, Delay: 60 * time.Millisecond}, // the approval appears after the blur below
		scripted.Reply{Text: "Not written."},
	)
	sendMsg(t, pg, "write two")
	blur(pg)
	approval("k2")
	waitJS(t, pg, `() => document.activeElement?.classList.contains('approve-once') && document.activeElement.closest('`+p.sel("k2")+`') !== null`)
	pg.Keyboard.MustType(input.KeyN)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Not written.')`)
	if got := toolResultSeen(p, "k2"); !strings.Contains(got, "denied") {
		t.Fatalf("N did not deny: %q", got)
	}

	// A always allows: the next edit runs unasked.
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "k3", Name: "write_file", Args: `{"path":"three.txt","content":"3\n"}`}},
			ChunkSize: 8, Delay: 60 * time.Millisecond}, // the approval appears after the blur below
		scripted.Reply{Text: "Wrote three."},
	)
	sendMsg(t, pg, "write three")
	blur(pg)
	approval("k3")
	waitJS(t, pg, `() => document.activeElement?.closest('`+p.sel("k3")+`') !== null`)
	pg.Keyboard.MustType(input.KeyA)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote three.')`)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "k4", Name: "write_file", Args: `{"path":"four.txt","content":"4\n"}`}}},
		scripted.Reply{Text: "Wrote four."},
	)
	sendMsg(t, pg, "write four")
	waitJS(t, pg, `() => `+p.card("k4")+`?.dataset.state === 'done'`) // not suspended: A remembered the answer
}
