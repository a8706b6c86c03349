package e2e

import (
	"context"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// At 1280 px the chat header keeps a real title and model name whole, and
// does not move when the chat's usage first appears (which sits beside
// Send, not in the header).
func TestHeaderKeepsTitleAndModel(t *testing.T) {
	p := startParley(t)
	const title = "Dark theme for the settings and code blocks"
	const model = "openrouter/anthropic/claude-3.7-sonnet"
	th, err := p.In.Runtime.CreateThread(context.Background(), agentcore.Thread{ResourceID: "default", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	pg := p.page("/t/" + th.ID)
	sized(pg, 1280, 800)
	header := `() => { const h = document.querySelector('#chat-header').getBoundingClientRect(); return h.height + ' ' + h.top }`
	before := evalString(pg, header)

	p.Model.Push(scripted.Reply{Text: "Done.", Usage: scripted.Usage{PromptTokens: 123456, CompletionTokens: 7890}})
	sendMsg(t, pg, "hello")
	waitJS(t, pg, `() => document.querySelector('#thread-usage').innerText.trim() !== ''`)
	if after := evalString(pg, header); after != before {
		t.Fatalf("the header moved when usage appeared: %s, was %s", after, before)
	}
	if pg.MustHas("#chat-header #thread-usage") {
		t.Fatal("the usage is in the header")
	}

	// A long (real) model name, as the chat's own.
	p.setChatModel(th.ID, model)
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `(m) => document.querySelector('#chat-header .model-input').value === m`, model)
	cut := evalString(pg, `() => ['.chat-title', '.model-input'].filter(s => { const e = document.querySelector('#chat-header ' + s); return e.scrollWidth > e.clientWidth + 1 }).join(' ')`)
	pg.MustScreenshot(artifact("header-1280.png"))
	if cut != "" {
		t.Fatalf("at 1280 px the header cuts %s", cut)
	}
}
