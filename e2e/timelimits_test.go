package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// waited reads the waiting line's clock ("m:ss") in seconds; -1: none.
const waited = `() => {
	const c = document.querySelector('#messages .msg-assistant .msg-wait [data-wait-clock]');
	if (!c) return -1;
	const [m, s] = c.textContent.split(':').map(Number);
	return m * 60 + s;
}`

// While the model has not said anything, the reply says whom it waits for
// and counts up; Stop ends the wait at once and the reply is marked
// stopped.
func TestFirstTokenWaitCounter(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{StallAfter: 1}) // the role, then nothing

	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("Think hard")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant .msg-wait') !== null`)
	line := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-wait').innerText`)
	if !strings.Contains(line, "Waiting for demo/scripted…") {
		t.Fatalf("waiting line %q", line)
	}
	first := pg.MustEval(waited).Int()
	waitJS(t, pg, `() => (`+waited+`)() >= `+strconv.Itoa(first+2))
	pg.MustElement("#messages .msg-assistant").MustScrollIntoView()
	pg.MustScreenshot(artifact("first-token-wait.png"))
	if got := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-wait').innerText`); !strings.Contains(got, "0:0") {
		t.Errorf("waiting line %q", got)
	}

	stopped := time.Now()
	pg.MustElement("#stop").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=interrupted]') !== null`)
	if d := time.Since(stopped); d > 5*time.Second {
		t.Errorf("Stop took %v", d)
	}
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant .msg-wait') === null`)
	if note := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-note').innerText`); note != "Stopped" {
		t.Fatalf("note = %q, want Stopped", note)
	}
	ms := p.messages(id)
	if last := ms[len(ms)-1]; last.Status != agentcore.StatusInterrupted || last.Content.Metadata["stopped"] != "user" {
		t.Fatalf("stored reply: status %s, metadata %v", last.Status, last.Content.Metadata)
	}
	waitJS(t, pg, `() => document.querySelector('#send') !== null`)
}

// The waiting line leaves as soon as the first text comes.
func TestFirstTokenWaitEndsWithText(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Tokens: []string{"", "Here ", "it is."}, Delay: 1500 * time.Millisecond})

	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("Slowly")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant .msg-wait') !== null`)
	waitJS(t, pg, `() => (document.querySelector('#messages .msg-assistant .msg-body')?.innerText || '').includes('Here')`)
	if pg.MustEval(`() => document.querySelector('#messages .msg-assistant .msg-wait') !== null`).Bool() {
		t.Error("the waiting line stayed after the first text")
	}
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
}

// A provider's time limits in Settings: a value that is no duration is
// named by its field and kept as typed; a good one is saved and shown.
func TestSettingsTimeLimits(t *testing.T) {
	p := startParley(t)
	pg := p.page("/settings")
	card := `#provider-openai`
	if ph := pg.MustElement("#first-openai").MustAttribute("placeholder"); ph == nil || *ph != "default 10m" {
		t.Fatalf("placeholder %v", ph)
	}
	pg.MustElement("#first-openai").MustInput("90")
	pg.MustElement("#idle-openai").MustInput("3m")
	pg.MustElement(card + " .provider-limits button").MustClick()
	waitJS(t, pg, `() => document.querySelector('#provider-openai [data-limit-error=firstToken]') !== null`)
	if got := evalString(pg, `() => document.querySelector('#provider-openai [data-limit-error=firstToken]').innerText`); !strings.Contains(got, `Wait for the first token: "90" is not a time limit`) {
		t.Errorf("error %q", got)
	}
	if a, b := pg.MustElement("#first-openai").MustProperty("value").String(), pg.MustElement("#idle-openai").MustProperty("value").String(); a != "90" || b != "3m" {
		t.Errorf("kept %q, %q", a, b)
	}
	pg.MustElement(card).MustScrollIntoView()
	pg.MustElement(card).MustScreenshot(artifact("settings-limits-error.png"))

	pg.MustElement("#first-openai").MustSelectAllText().MustInput("15m")
	pg.MustElement(card + " .provider-limits button").MustClick()
	waitJS(t, pg, `() => (document.querySelector('#provider-openai [data-flash]')?.innerText || '').includes('Time limits saved')`)
	if n := pg.MustEval(`() => document.querySelectorAll('#provider-openai [data-limit-error]').length`).Int(); n != 0 {
		t.Errorf("%d errors left", n)
	}
	pg.MustElement(card).MustScreenshot(artifact("settings-limits.png"))

	// Saved: a fresh page shows them.
	pg = p.page("/settings")
	if a, b := pg.MustElement("#first-openai").MustProperty("value").String(), pg.MustElement("#idle-openai").MustProperty("value").String(); a != "15m" || b != "3m" {
		t.Errorf("after reload %q, %q", a, b)
	}
}
