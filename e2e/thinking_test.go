package e2e

import (
	"context"
	"testing"
	"time"
)

// The header's Thinking control (issue 18): hidden for a model known to
// have no reasoning (the demo model, gpt-4o), shown beside the model picker
// otherwise; a choice is the chat's own and is kept across a reload.
func TestThinkingControlPerChat(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#chat-header .model-input') !== null`)
	if pg.MustHas("#thinking") {
		t.Fatal("the Thinking control shows for the demo model, which has no reasoning")
	}

	p.setChatModel(id, "anthropic/claude-sonnet-4-5")
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#chat-header .model-pick + .thinking-pick #thinking') !== null`)
	if v := evalString(pg, `() => document.querySelector('#thinking').value`); v != "" {
		t.Fatalf("a new chat's thinking is %q, want the model's default", v)
	}
	pg.MustElement("#thinking").MustSelect("high")
	deadline := time.Now().Add(waitTimeout)
	for p.thinking(id) != "high" {
		if time.Now().After(deadline) {
			t.Fatalf("the choice was not stored: %q", p.thinking(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#thinking')?.value === 'high'`)
	pg.MustScreenshot(artifact("thinking-high.png"))

	// Another chat on a reasoning model keeps its own (the default).
	other := p.newThread()
	p.setChatModel(other, "openai/gpt-5")
	op := p.page("/t/" + other)
	waitJS(t, op, `() => document.querySelector('#thinking')?.value === ''`)

	// A model without reasoning hides it; the chat's choice stays stored.
	p.setChatModel(id, "openai/gpt-4o")
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#chat-header .model-input')?.value === 'openai/gpt-4o'`)
	if pg.MustHas("#thinking") {
		t.Fatal("the Thinking control shows for gpt-4o, which has no reasoning")
	}
	if got := p.thinking(id); got != "high" {
		t.Fatalf("the chat's thinking became %q", got)
	}
}

// thinking is the chat's stored thinking level.
func (p *parley) thinking(threadID string) string {
	p.t.Helper()
	th, err := p.In.Runtime.GetThread(context.Background(), threadID)
	if err != nil {
		p.t.Fatal(err)
	}
	s, _ := th.Metadata["thinking"].(string)
	return s
}
