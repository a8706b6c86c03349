package e2e

import (
	"testing"
)

// The chat header's model box lists what a configured provider offers
// (its GET /v1/models), fetched afresh by Settings' connection test, and
// still takes any text.
func TestModelPickerListsProviderModels(t *testing.T) {
	p := startParley(t)
	pg := p.page("/settings")
	const live = `document.querySelector('#mcp-servers[data-live]') !== null`
	waitJS(t, pg, `() => `+live)
	pg.MustElement("#base-openai-compatible").MustInput(p.Model.URL())
	pg.MustElement(`#provider-openai-compatible form[action$="/base"] button`).MustClick()
	waitJS(t, pg, `() => `+live+` && document.querySelector('[data-flash="openai-compatible"]')?.innerText.includes('Address saved')`)
	pg.MustElement(`[data-test="openai-compatible"]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#test-openai-compatible.ok')?.innerText.includes('connected: 1 models offered')`)

	cp := p.page("/t/" + p.newThread())
	waitJS(t, cp, `() => document.querySelector('#models option[value="openai-compatible/scripted"]') !== null`)
	if got := evalString(cp, `() => document.querySelector('.model-input').getAttribute('list')`); got != "models" {
		t.Fatalf("the model box is not tied to the list: list=%q", got)
	}
	if tag := evalString(cp, `() => document.querySelector('.model-input').tagName`); tag != "INPUT" {
		t.Fatalf("the model box is a %s, not free text", tag)
	}
}
