package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore/scripted"
)

// systemText is what the model was last told as system messages.
func systemText(p *parley) string {
	reqs := p.Model.Requests()
	var b []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "system" {
			b = append(b, m.Content)
		}
	}
	return strings.Join(b, "\n")
}

// The workspace's AGENTS.md is given to the model on every run — picked
// up, changed, removed — and the header says so; the chat's own
// instructions, set from the chat menu, follow it.
func TestProjectAndChatInstructions(t *testing.T) {
	p := startParley(t)
	agents := filepath.Join(p.dir, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("Always run `go test ./...` first. <b>bold?</b>"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	pg := p.page("/t/" + id)
	turn := func(text string) {
		t.Helper()
		p.Model.Push(scripted.Reply{Text: "ok: " + text})
		sendMsg(t, pg, text)
		waitJS(t, pg, `(s) => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes(s)`, "ok: "+text)
	}
	turn("one")
	if got := systemText(p); !strings.Contains(got, "Instructions from AGENTS.md at the root of the workspace") || !strings.Contains(got, "Always run `go test ./...` first.") {
		t.Fatalf("the model was not given AGENTS.md:\n%s", got)
	}
	if got := evalString(pg, `() => document.querySelector('#instructions summary')?.innerText`); !strings.Contains(got, "AGENTS.md") {
		t.Fatalf("the header does not show the instructions: %q", got)
	}
	pg.MustElement("#instructions summary").MustClick()
	if got := evalString(pg, `() => document.querySelector('.instructions-text').innerText`); got != "Always run `go test ./...` first. <b>bold?</b>" {
		t.Fatalf("the header shows %q", got)
	}
	pg.MustScreenshot(artifact("instructions-open.png"))
	pg.MustElement("#instructions summary").MustClick()

	if err := os.WriteFile(agents, []byte("New rule: answer in French."), 0o644); err != nil {
		t.Fatal(err)
	}
	turn("two")
	if got := systemText(p); !strings.Contains(got, "New rule: answer in French.") || strings.Contains(got, "go test") {
		t.Fatalf("a changed AGENTS.md was not read again:\n%s", got)
	}

	// The chat's own, from the chat menu.
	pg.MustElement("#chat-menu summary").MustClick()
	pg.MustElement("#edit-instructions").MustClick()
	waitJS(t, pg, `() => document.activeElement?.id === 'instructions-text'`)
	pg.MustElement("#instructions-text").MustInput("Keep answers under 50 words.")
	pg.MustElement(".instructions-form button[type=submit]").MustClick()
	waitJS(t, pg, `() => document.querySelector('#instructions summary')?.innerText.includes('+ chat')`)
	os.Remove(agents)
	turn("three")
	got := systemText(p)
	if strings.Contains(got, "AGENTS.md") || !strings.Contains(got, "The user's instructions for this chat:\n\nKeep answers under 50 words.") {
		t.Fatalf("after removing AGENTS.md and adding the chat's own:\n%s", got)
	}
}
