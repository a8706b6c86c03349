package e2e

import (
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
)

// welcomeModel replaces the text of the welcome screen's model box.
func welcomeModel(pg *rod.Page, model string) *rod.Element {
	box := pg.MustElement(".welcome input[name=model]")
	box.MustSelectAllText().MustInput(model)
	return box
}

// A model that cannot be used is named on the welcome screen itself, as
// text, and what was typed stays: no raw error page, no chat stored, and
// nothing of the model's name or the provider's reason runs in the page.
func TestWelcomeShowsAModelErrorInline(t *testing.T) {
	p := startParley(t)
	for _, tc := range []struct{ model, want string }{
		{"openai/gpt-4o", "openai/gpt-4o"}, // no key in the tests
		{`nope/<img src=x onerror="window.__pwned=1">`, `<img src=x onerror="window.__pwned=1">`},
	} {
		pg := p.page("/")
		text := "Summarise <b>this</b> & that\nsecond line"
		pg.MustElement(".welcome textarea[name=text]").MustInput(text)
		welcomeModel(pg, tc.model)
		pg.MustElement(".welcome button[type=submit]").MustClick()

		waitJS(t, pg, `() => (document.querySelector('.welcome [role=alert]')?.textContent || '').trim() !== ''`)
		pg.MustScreenshot(artifact("welcome-model-error.png"))
		alert := evalString(pg, `() => document.querySelector('.welcome [role=alert]').textContent`)
		if !strings.Contains(alert, tc.want) {
			t.Errorf("the alert %q does not name the model %q", alert, tc.want)
		}
		if got := evalString(pg, `() => document.querySelector('.welcome textarea[name=text]').value`); got != text {
			t.Errorf("the message box holds %q, want what was typed, %q", got, text)
		}
		if got := evalString(pg, `() => document.querySelector('.welcome input[name=model]').value`); got != tc.model {
			t.Errorf("the model box holds %q, want %q", got, tc.model)
		}
		if pg.MustEval(`() => window.__pwned === 1 || document.querySelector('.welcome [role=alert] img') !== null`).Bool() {
			t.Fatal("the model name became markup in the page")
		}
		if n := len(p.threads()); n != 0 {
			t.Fatalf("%d chats stored after a refused model", n)
		}
	}
}

// An empty message never makes a chat: not Enter in the model box, not a
// message of spaces.
func TestWelcomeEmptyMessageMakesNoChat(t *testing.T) {
	p := startParley(t)
	pg := p.page("/")
	welcomeModel(pg, "demo/scripted")
	pg.Keyboard.MustType(input.Enter) // in the model box, the message empty

	// Then a message of spaces, sent with the button: the screen says why
	// nothing was started.
	waitJS(t, pg, `() => location.pathname === '/' || location.pathname === '/threads'`)
	pg.MustElement(".welcome textarea[name=text]").MustInput("   ")
	pg.MustElement(".welcome button[type=submit]").MustClick()
	waitJS(t, pg, `() => location.pathname.startsWith('/t/') || (document.querySelector('.welcome [role=alert]')?.textContent || '').trim() !== ''`)
	if n := len(p.threads()); n != 0 {
		t.Fatalf("%d chats stored without a message", n)
	}
	if !strings.Contains(evalString(pg, `() => document.querySelector('.welcome [role=alert]').textContent`), "message") {
		t.Error("the welcome screen does not say a message is needed")
	}
}
