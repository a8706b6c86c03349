package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
	"parley/app/chat"
)

// nowish is the time of a chat imported "now".
func nowish() time.Time { return time.Now() }

// A starter prompt on the welcome screen fills the message box and puts
// the cursor in it; nothing is sent and no chat is stored.
func TestWelcomeStarterFillsTheBox(t *testing.T) {
	p := startParley(t)
	pg := p.page("/")
	sized(pg, 1280, 800)
	n := pg.MustEval(`() => document.querySelectorAll('.welcome .starter').length`).Int()
	if n < 3 || n > 4 {
		t.Fatalf("%d starter prompts, want 3 or 4", n)
	}
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("welcome-1280-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")
	starter := pg.MustElementR(".welcome .starter", "Find and fix a failing test")
	want := starter.MustAttribute("data-prompt")
	if want == nil || !strings.Contains(*want, "test") {
		t.Fatalf("the starter's prompt is %v", want)
	}
	pg.MustElement("body").MustClick() // the focus elsewhere first
	starter.MustClick()
	waitJS(t, pg, `(w) => document.querySelector('.welcome textarea[name=text]').value === w`, *want)
	if got := evalString(pg, `() => document.activeElement?.name || ''`); got != "text" {
		t.Errorf("after a starter the focus is on %q, want the message box", got)
	}
	time.Sleep(300 * time.Millisecond) // a send would have left by now
	if len(p.threads()) != 0 || len(p.Model.Requests()) != 0 || !pg.MustEval(`() => location.pathname === '/'`).Bool() {
		t.Fatal("a starter sent its prompt; it was only to fill the box")
	}
	// Typing goes on at the end of the prompt.
	pg.Keyboard.MustType(input.Key('!'))
	waitJS(t, pg, `(w) => document.querySelector('.welcome textarea[name=text]').value === w + '!'`, *want)

	sized(pg, 390, 844)
	noSideScroll(t, pg, "the welcome screen", 390)
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("welcome-390-" + scheme + ".png"))
	}
}

// A chat started from the welcome screen in Plan mode is in Plan mode from
// its first run: the switch shows Plan in the new chat, the chat's settings
// say plan, and the model's first request carries Plan mode's rules and
// tools. A refused start keeps the choice.
func TestWelcomeStartsInPlanMode(t *testing.T) {
	p := startParley(t)
	pg := p.page("/")
	if got := evalString(pg, `() => document.querySelector('.welcome #mode-switch .mode.active')?.dataset.mode || ''`); got != "build" {
		t.Fatalf("the welcome screen starts in %q mode, want build", got)
	}
	pg.MustElement(`.welcome #mode-switch [data-mode=plan]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('.welcome #mode-switch [data-mode=plan]').getAttribute('aria-checked') === 'true' && document.querySelector('.welcome #mode-switch .mode.active').dataset.mode === 'plan'`)
	pg.MustScreenshot(artifact("welcome-plan-mode.png"))

	// A model that cannot be used: back with the text, and still Plan.
	pg.MustElement(".welcome textarea[name=text]").MustInput("plan the dark mode")
	welcomeModel(pg, "nope/none")
	pg.MustElement(".welcome button[type=submit]").MustClick()
	waitJS(t, pg, `() => (document.querySelector('.welcome [role=alert]')?.textContent || '').trim() !== ''`)
	waitJS(t, pg, `() => document.querySelector('.welcome #mode-switch .mode.active')?.dataset.mode === 'plan' && document.querySelector('.welcome input[name=mode]').value === 'plan'`)

	p.Model.Push(scripted.Reply{Text: "Looking around before I plan."})
	welcomeModel(pg, "demo/scripted")
	pg.MustElement(".welcome button[type=submit]").MustClick()
	waitJS(t, pg, `() => location.pathname.startsWith('/t/') && document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=plan]')?.classList.contains('active')`)
	ts := p.threads()
	if len(ts) != 1 || chat.Of(ts[0]).Mode != chat.ModePlan {
		t.Fatalf("%d chats; the new chat's mode is not plan", len(ts))
	}
	reqs := p.Model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	first := reqs[0]
	if !first.HasTool("submit_plan") || !strings.Contains(string(first.Body), "You are in Plan mode") {
		t.Fatalf("the first run was not in Plan mode: tools %v", first.Tools)
	}

	// Build stays the default: the next chat from the welcome screen builds.
	p.Model.Push(scripted.Reply{Text: "Building."})
	clickToLoad(t, pg, "#new-chat")
	pg.MustElement(".welcome textarea[name=text]").MustInput("build it")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => location.pathname.startsWith('/t/') && document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=build]')?.classList.contains('active')`)
	if last := p.Model.Requests()[len(p.Model.Requests())-1]; !last.HasTool("execute_command") || strings.Contains(string(last.Body), "You are in Plan mode") {
		t.Fatal("a chat started in Build mode was in Plan mode")
	}
}
