package e2e

import (
	"testing"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// After the first reply the chat's model names the chat: the sidebar and
// the header change to its title while the page is open; a name it writes
// with markup stays text; the chat is named once.
func TestChatNamedAfterFirstReply(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.SetTitles(func(scripted.Request) string { return `Dark <b>theme</b> plan` })
	p.Model.Push(scripted.Reply{Text: "Here is a plan."}, scripted.Reply{Text: "And more."})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("Add a dark theme to the settings page")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#chat-header .chat-title')?.innerText === 'Dark <b>theme</b> plan'`)
	waitJS(t, pg, `() => document.querySelector('#sidebar .thread.active .thread-title')?.innerText === 'Dark <b>theme</b> plan'`)
	if n := pg.MustEval(`() => document.querySelectorAll('#sidebar b, #chat-header b').length`).Int(); n != 0 {
		t.Fatalf("the title's markup became %d elements", n)
	}
	pg.MustElement("#draft").MustInput("more please")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, runEnded)
	if n := len(p.Model.TitleRequests()); n != 1 {
		t.Fatalf("%d title requests, want 1", n)
	}
}
