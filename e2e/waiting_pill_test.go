package e2e

import (
	"testing"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// A question out of view stays reachable: the "waiting for you" pill shows
// while it is below (↓) or above (↑) the view, and a click brings it into
// view with the focus on it; in view, or answered, the pill is gone.
func TestWaitingPillLeadsToTheQuestion(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	p.Model.Push(
		scripted.Reply{Text: words(600), ChunkSize: 100,
			ToolCalls: []scripted.ToolCall{{ID: "wp1", Name: "ask_user", Args: `{"question":"Which database?","options":[{"label":"SQLite"},{"label":"Postgres"}]}`}}},
		scripted.Reply{Text: "Thanks, noted."},
	)
	sendMsg(t, pg, "tell me a lot, then ask")
	waitJS(t, pg, `() => `+p.card("wp1")+`?.querySelector('[data-question]') != null`)
	const pillShown = `(() => { const b = document.querySelector('#waiting-pill'); return b && !b.hidden && b.getBoundingClientRect().height > 0 ? b.innerText : ''; })()`
	pg.MustEval(`() => document.querySelector('[data-question]').scrollIntoView({block: 'center'})`)
	waitJS(t, pg, `() => `+pillShown+` === ''`) // the question is in view

	// Scrolled up to read: the question is below the view.
	blur(pg)
	pg.MustEval(`() => { document.querySelector('#scroller').scrollTop = 0; }`)
	waitJS(t, pg, `() => `+pillShown+` === '↓ waiting for you'`)
	pg.MustScreenshot(artifact("waiting-pill.png"))

	inView := `(() => { const q = document.querySelector('[data-question]').getBoundingClientRect(), v = document.querySelector('#scroller').getBoundingClientRect(); return q.top >= v.top && q.bottom <= v.bottom; })()`
	pg.MustElement("#waiting-pill").MustClick()
	waitJS(t, pg, `() => `+inView)
	waitJS(t, pg, `() => document.activeElement?.closest('[data-question]') !== null`)
	waitJS(t, pg, `() => `+pillShown+` === ''`)

	// Scrolled past it (a long card below would do the same): ↑.
	pg.MustEval(`() => { const s = document.querySelector('#scroller'); s.scrollTop = 0; s.querySelector('#messages').style.paddingBottom = '3000px'; s.scrollTop = s.scrollHeight; }`)
	waitJS(t, pg, `() => `+pillShown+` === '↑ waiting for you'`)
	pg.MustElement("#waiting-pill").MustClick()
	waitJS(t, pg, `() => `+inView)
	pg.MustEval(`() => { document.querySelector('#messages').style.paddingBottom = ''; }`)

	// The focus is on the first option: Enter answers, and nothing waits.
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => `+p.card("wp1")+`.dataset.state === 'done'`)
	pg.MustEval(`() => { document.querySelector('#scroller').scrollTop = 0; }`)
	waitJS(t, pg, `() => document.querySelector('#waiting-pill')?.hidden === true`)
}
