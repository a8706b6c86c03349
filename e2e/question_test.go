package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// ask makes the model ask args and, once answered, say done.
func ask(t *testing.T, p *parley, args string) (*rod.Page, string) {
	t.Helper()
	id := p.newThread()
	p.Model.Push(
		scripted.Reply{Text: "I need to know one thing.", ToolCalls: []scripted.ToolCall{{ID: "q1", Name: "ask_user", Args: args}}},
		scripted.Reply{Text: "Thanks, noted."},
	)
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("set it up")
	pg.Keyboard.MustType(input.Enter)
	p.callIn(id, "q1") // the question asked before, in another chat, had the same id
	waitJS(t, pg, `() => document.querySelector('`+p.sel("q1")+`[data-state="suspended"] [data-question]') !== null`)
	return pg, id
}

// answered waits for the run to go on and returns what the model was told.
func answered(t *testing.T, p *parley, pg *rod.Page) string {
	t.Helper()
	waitJS(t, pg, `() => document.querySelector('`+p.sel("q1")+`').dataset.state === 'done'`)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Thanks, noted.')`)
	reqs := p.Model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			return resultContent(m.Content)
		}
	}
	t.Fatal("the model got no tool result")
	return ""
}

func TestAskUserSingleSelect(t *testing.T) {
	p := startParley(t)
	pg, _ := ask(t, p, `{"question":"Which database?","options":[{"label":"SQLite","description":"one file"},{"label":"Postgres"}]}`)
	if focused := evalString(pg, `() => document.activeElement.dataset.label || ''`); focused != "SQLite" {
		t.Fatalf("focus is on %q, want the first option", focused)
	}
	pg.MustScreenshot(artifact("question-single.png"))
	pg.Keyboard.MustType(input.ArrowDown) // keyboard: down to Postgres, Enter picks it
	pg.Keyboard.MustType(input.Enter)
	if got := answered(t, p, pg); got != "User answered: Postgres" {
		t.Fatalf("model told %q", got)
	}
	if brief := evalString(pg, `() => document.querySelector('`+p.sel("q1")+` .tool-brief').innerText`); !strings.Contains(brief, "Which database?") || !strings.Contains(brief, "Postgres") {
		t.Fatalf("answered card shows %q", brief)
	}
}

func TestAskUserMultiSelect(t *testing.T) {
	p := startParley(t)
	pg, _ := ask(t, p, `{"question":"Which targets?","options":[{"label":"linux"},{"label":"mac"},{"label":"windows"}],"selectionMode":"multi_select"}`)
	pg.MustElement(`[data-question] input[value="linux"]`).MustClick()
	pg.MustElement(`[data-question] input[value="windows"]`).MustClick()
	pg.MustElement(`[data-question] .q-confirm`).MustClick()
	if got := answered(t, p, pg); got != "User answered: linux, windows" {
		t.Fatalf("model told %q", got)
	}
}

func TestAskUserFreeTextCustomAndSkip(t *testing.T) {
	p := startParley(t)
	pg, _ := ask(t, p, `{"question":"What port?"}`)
	pg.MustElement(`[data-question] textarea`).MustInput("8080")
	pg.Keyboard.MustType(input.Enter)
	if got := answered(t, p, pg); got != "User answered: 8080" {
		t.Fatalf("free text: model told %q", got)
	}

	pg, _ = ask(t, p, `{"question":"Which color?","options":[{"label":"red"},{"label":"blue"}]}`)
	pg.MustElement(`[data-question] .q-custom summary`).MustClick()
	pg.MustElement(`[data-question] .q-custom textarea`).MustInput("teal, please")
	pg.MustElement(`[data-question] .q-custom button[type=submit]`).MustClick()
	if got := answered(t, p, pg); got != "User answered: teal, please" {
		t.Fatalf("custom: model told %q", got)
	}

	pg, _ = ask(t, p, `{"question":"Anything else?"}`)
	pg.Keyboard.MustType(input.Escape)
	if got := answered(t, p, pg); got != "User answered: (skipped)" {
		t.Fatalf("skip: model told %q", got)
	}
}

// Answering twice, or a question that is not open, changes nothing.
func TestAnswerTwiceIsRefused(t *testing.T) {
	p := startParley(t)
	pg, id := ask(t, p, `{"question":"What port?"}`)
	if _, err := p.In.Runtime.Resume(context.Background(), agentcore.ResumeRequest{ThreadID: id, ToolCallID: p.call("q1"), Data: []byte(`"1"`)}); err != nil {
		t.Fatal(err)
	}
	answered(t, p, pg)
	_, err := p.In.Runtime.Resume(context.Background(), agentcore.ResumeRequest{ThreadID: id, ToolCallID: p.call("q1"), Data: []byte(`"2"`)})
	if err == nil || !strings.Contains(err.Error(), "no suspended tool call") {
		t.Fatalf("second answer: %v", err)
	}
}

// autoResumeSuspendedTools: a chat message sent while a question is open
// answers it.
func TestChatMessageAnswersOpenQuestion(t *testing.T) {
	p := startParley(t)
	pg, id := ask(t, p, `{"question":"Which region?"}`)
	pg.MustElement("#draft").MustInput("eu-west-1 please")
	pg.MustElement("#send").MustClick()
	if got := answered(t, p, pg); got != "User answered: eu-west-1 please" {
		t.Fatalf("model told %q", got)
	}
	if n := len(p.messages(id)); n != 2 {
		t.Fatalf("%d messages: the answer must not start a new turn", n)
	}
}
