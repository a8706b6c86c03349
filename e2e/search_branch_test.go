package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
)

// Search finds a reply of a branch the chat does not show (a regenerated
// reply's older version) and marks it "Other version"; opening the hit
// shows that branch at that message: highlighted, version 1/2, the newer
// version gone from the page; the chat stays on it across a reload.
func TestSearchJumpsIntoInactiveBranch(t *testing.T) {
	p := startParley(t)
	ctx := context.Background()
	th, err := p.In.Runtime.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: "Animals"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(role agentcore.Role, text string) agentcore.Message {
		m, err := p.In.Store.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: role, Content: agentcore.TextContent(text)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	q := add(agentcore.RoleUser, "Name an animal with stripes.")
	old := add(agentcore.RoleAssistant, "A zebracorn, if it exists.")
	if err := p.In.Store.RewindTo(ctx, th.ID, q.ID); err != nil {
		t.Fatal(err)
	}
	add(agentcore.RoleAssistant, "A tiger.")
	add(agentcore.RoleUser, "Thanks.")

	pg := p.page("/t/" + th.ID)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	if strings.Contains(evalString(pg, `() => document.getElementById('messages').innerText`), "zebracorn") {
		t.Fatal("the older version is on the page before the search")
	}
	pg.KeyActions().Press(input.ControlLeft).Type(input.KeyK).MustDo()
	waitJS(t, pg, `() => document.getElementById('search').open && document.activeElement.id === 'search-q'`)
	pg.MustElement("#search-q").MustInput("zebracorn")
	waitJS(t, pg, `() => document.querySelectorAll('#search-results .search-hit').length === 1`)
	// The hit says it is in a version the chat does not show: in words,
	// visible, in light and dark.
	mark := `() => { const m = document.querySelector('#search-results .search-hit .hit-version');
		if (!m) return false;
		const r = m.getBoundingClientRect(), s = getComputedStyle(m);
		return m.innerText.trim() === 'Other version' && r.width > 0 && r.height > 0 && s.visibility === 'visible' && s.opacity !== '0' }`
	waitJS(t, pg, mark)
	pg.MustScreenshot(artifact("search-other-version.png"))
	theme(t, pg, "dark")
	waitJS(t, pg, mark)
	pg.MustScreenshot(artifact("search-other-version-dark.png"))
	theme(t, pg, "light")
	pg.KeyActions().Type(input.Enter).MustDo()

	hit := "msg-" + old.ID
	waitJS(t, pg, `(id) => location.search.includes('m=') && document.getElementById(id) !== null`, hit)
	waitJS(t, pg, inView, hit)
	if cls := evalString(pg, `(id) => document.getElementById(id).className`, hit); !strings.Contains(cls, "msg-hit") {
		t.Errorf("the message is not highlighted: %q", cls)
	}
	waitJS(t, pg, `(id) => document.getElementById(id).querySelector('.version-count')?.innerText === '1/2'`, hit)
	text := evalString(pg, `() => document.getElementById('messages').innerText`)
	if strings.Contains(text, "A tiger.") || strings.Contains(text, "Thanks.") {
		t.Errorf("the page still shows the other branch:\n%s", text)
	}
	pg.MustScreenshot(artifact("search-inactive-branch.png"))

	pg.MustReload()
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	waitJS(t, pg, `(id) => document.getElementById(id) !== null`, hit)
	shown, err := p.In.Store.ListMessages(ctx, th.ID, agentcore.MessageQuery{})
	if err != nil || len(shown) != 2 || shown[1].ID != old.ID {
		t.Fatalf("the chat shows %d messages (%v), want the question and the older reply", len(shown), err)
	}
}
