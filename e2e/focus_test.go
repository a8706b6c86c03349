package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// A question that arrives while the user is typing leaves the focus in the
// message box: the next keys (a Space, which would pick the focused option)
// stay text, and the question waits for its answer.
func TestFocusStaysWhileTypingWhenAQuestionArrives(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	p.Model.Push(
		scripted.Reply{
			Text:      "I need to know one thing.",
			ToolCalls: []scripted.ToolCall{{ID: "fq1", Name: "ask_user", Args: `{"question":"Which database?","options":[{"label":"SQLite"},{"label":"Postgres"}]}`}},
			ChunkSize: 4, Delay: 40 * time.Millisecond, // the question arrives while the user types the next message
		},
		scripted.Reply{Text: "Thanks, noted."},
	)
	sendMsg(t, pg, "set it up")

	// Type, a key at a time, until the question is on the page.
	typed := ""
	question := `() => document.querySelector('[data-question]') !== null`
	for deadline := time.Now().Add(waitTimeout); !pg.MustEval(question).Bool(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no question appeared")
		}
		pg.Keyboard.MustType(input.KeyH)
		typed += "h"
	}
	if typed == "" {
		t.Fatal("the question appeared before the user typed: the test proves nothing")
	}
	time.Sleep(100 * time.Millisecond) // let the page react to the question
	if a := active(pg); a != "draft" {
		t.Fatalf("the question took the focus while the user typed (focus: %q)", a)
	}
	pg.Keyboard.MustType(input.Space, input.KeyB)
	time.Sleep(300 * time.Millisecond)
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != typed+" b" {
		t.Fatalf("message box holds %q, want %q", v, typed+" b")
	}
	if state := evalString(pg, `() => `+p.card("fq1")+`.dataset.state`); state != "suspended" {
		t.Fatalf("a key typed into the message box answered the question: %s", state)
	}
	pg.MustScreenshot(artifact("focus-question-while-typing.png"))

	// The question still takes its answer.
	pg.MustElement(`[data-question] .q-option[data-label="Postgres"]`).MustClick()
	waitJS(t, pg, `() => `+p.card("fq1")+`.dataset.state === 'done'`)
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != typed+" b" {
		t.Fatalf("answering the question changed the message box to %q", v)
	}
}

// After a normal send the message box is empty and idle: the approval the
// message leads to takes the focus, and Y allows it.
func TestApprovalTakesFocusAfterSend(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "fa1", Name: "write_file", Args: `{"path":"one.txt","content":"1\n"}`}}},
		scripted.Reply{Text: "Wrote one."},
	)
	sendMsg(t, pg, "write one")
	waitJS(t, pg, `() => `+p.card("fa1")+`?.querySelector('[data-approval]') != null`)
	waitJS(t, pg, `() => document.activeElement?.classList.contains('approve-once') && document.activeElement.closest('`+p.sel("fa1")+`') !== null`)
	pg.MustScreenshot(artifact("focus-approval-after-send.png"))
	pg.Keyboard.MustType(input.KeyY)
	waitJS(t, pg, `() => `+p.card("fa1")+`.dataset.state === 'done'`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote one.')`)
	if got := toolResultSeen(p, "fa1"); strings.Contains(got, "denied") {
		t.Fatalf("Y did not allow: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "one.txt")); err != nil || string(b) != "1\n" {
		t.Fatalf("one.txt after Y: %q %v", b, err)
	}
	if v := evalString(pg, `() => document.querySelector('#draft').value`); v != "" {
		t.Fatalf("Y went into the message box: %q", v)
	}
}
