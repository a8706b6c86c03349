package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
	"parley/app/chat"
)

// A chat's own temperature (issue 18 item 3), set from the chat menu: a
// value beyond the limit is refused by name with nothing stored; a good
// one is kept across a reload and the next request to the model carries
// it.
func TestChatTemperaturePerChat(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#chat-header #chat-menu') !== null`)

	pg.MustElement("#chat-menu summary").MustClick()
	pg.MustElement("#edit-sampling").MustClick()
	waitJS(t, pg, `() => document.activeElement?.id === 'sampling-temperature'`)
	pg.MustElement("#sampling-temperature").MustInput("3")
	pg.MustElement(".sampling-form button[type=submit]").MustClick()
	waitJS(t, pg, `() => document.querySelector('#sampling-status')?.innerText.includes('temperature must be a number from 0 to 2')`)
	if got := p.sampling(id); !got.IsZero() {
		t.Fatalf("a refused temperature was stored: %+v", got)
	}

	pg.MustElement("#sampling-temperature").MustSelectAllText().MustInput("0.42")
	pg.MustElement(".sampling-form button[type=submit]").MustClick()
	deadline := time.Now().Add(waitTimeout)
	for chat.FormValue(p.sampling(id).Temperature) != "0.42" {
		if time.Now().After(deadline) {
			t.Fatalf("the temperature was not stored: %+v", p.sampling(id))
		}
		time.Sleep(20 * time.Millisecond)
	}

	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#sampling-temperature')?.value === '0.42'`)
	if got := evalString(pg, `() => document.querySelector('#sampling summary').innerText`); !strings.Contains(got, "temp 0.42") {
		t.Fatalf("the header shows %q", got)
	}
	pg.MustElement("#sampling summary").MustClick()
	pg.MustScreenshot(artifact("sampling-open.png"))
	pg.MustElement("#sampling summary").MustClick()

	p.Model.Push(scripted.Reply{Text: "Warm enough."})
	sendMsg(t, pg, "hello")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('Warm enough.')`)
	reqs := p.Model.Requests()
	var body struct {
		Temperature *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Temperature == nil || *body.Temperature != 0.42 {
		t.Fatalf("the request's temperature is %v, want the chat's 0.42: %s", body.Temperature, reqs[len(reqs)-1].Body)
	}
}

// sampling is the chat's stored model settings.
func (p *parley) sampling(threadID string) chat.Sampling {
	p.t.Helper()
	th, err := p.In.Runtime.GetThread(context.Background(), threadID)
	if err != nil {
		p.t.Fatal(err)
	}
	return chat.Of(th).Sampling
}
