package e2e

import (
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// The page follows the OS theme: light by default, dark when the OS asks.
func TestThemeFollowsOS(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Text: "Here is code:\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("show me code")
	pg.MustElement("#send").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete] .code .copy') !== null`)
	bg := func() string { return evalString(pg, `() => getComputedStyle(document.body).backgroundColor`) }

	light := bg()
	if light != "rgb(255, 255, 255)" {
		t.Fatalf("light background = %s", light)
	}
	pg.MustScreenshot(artifact("theme-light.png"))
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}).Call(pg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if dark := bg(); dark == light {
		t.Fatalf("dark mode did not change the background (%s)", dark)
	}
	// Highlighted code follows the theme too.
	if c := evalString(pg, `() => getComputedStyle(document.querySelector('.code pre .kd, .code pre .k, .code pre span')).color`); c == "" {
		t.Fatal("no highlighted token in the code block")
	}
	pg.MustScreenshot(artifact("theme-dark.png"))
}

// The model box switches the thread's model; a model that cannot be used is
// refused with the reason, and the box goes back to the thread's model.
func TestModelPicker(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	box := pg.MustElement("#chat-header .model-input")
	// rod's Input fires input and change, as typing and leaving the box does.
	box.MustSelectAllText().MustInput("openai/gpt-4.1")
	waitJS(t, pg, `() => document.querySelector('#composer-error').innerText.includes('OPENAI_API_KEY')`)
	waitJS(t, pg, `() => document.querySelector('#chat-header .model-input').value === 'demo/scripted'`)
	th, err := p.In.Store.GetThread(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := th.Metadata["model"].(string); m == "openai/gpt-4.1" {
		t.Fatalf("refused model was stored: %q", m)
	}
}
