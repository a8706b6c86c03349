package e2e

import (
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// While an approval waits the composer offers Stop; Stop ends the run: the
// card no longer asks, the inbox no longer lists it, and the chat takes the
// next message as a new turn.
func TestStopWhileAnApprovalWaits(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "s1", Name: "execute_command", Args: `{"command":"make deploy"}`}}})
	sendMsg(t, pg, "deploy it")
	waitJS(t, pg, `() => `+p.card("s1")+`?.querySelector('[data-approval]') != null`)
	waitJS(t, pg, `() => document.querySelector('#composer-actions #stop') !== null && document.querySelector('#composer-actions #send') !== null`)
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '1'`)
	pg.MustScreenshot(artifact("stop-while-waiting.png"))

	pg.MustElement("#composer-actions #stop").MustClick()
	waitJS(t, pg, `() => `+p.card("s1")+`?.querySelector('[data-approval]') == null && `+p.card("s1")+`.dataset.state !== 'suspended'`)
	waitJS(t, pg, `() => document.querySelector('#composer-actions #stop') === null`)
	waitJS(t, pg, `() => document.querySelector('#inbox-count') === null`)

	p.Model.Push(scripted.Reply{Text: "Not deploying, then."})
	sendMsg(t, pg, "never mind")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Not deploying, then.')`)
	if runs := p.Model.Requests(); len(runs) != 2 {
		t.Fatalf("%d model calls, want 2 (the stopped turn and the new one)", len(runs))
	}
}

// Esc denies a waiting approval: the model is told, and the same run goes
// on to its answer.
func TestEscDeniesAWaitingApproval(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "e1", Name: "execute_command", Args: `{"command":"rm -rf build"}`}}},
		scripted.Reply{Text: "Left the build alone."},
	)
	sendMsg(t, pg, "clean up")
	waitJS(t, pg, `() => `+p.card("e1")+`?.querySelector('[data-approval]') != null`)
	pg.MustElement("#draft").MustClick() // focus in the page, not in the dialog
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Left the build alone.')`)
	if got := toolResultSeen(p, "e1"); !strings.HasPrefix(got, "The user denied this tool call; execute_command was not run.") {
		t.Fatalf("model told %q", got)
	}
}
