package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// seedThread stores a thread of n messages, alternating a question and a
// reply in Markdown (one reply in five calls a tool), with texts[seq] in
// place of the generated text where given. It returns the thread id and
// the message ids by Seq (ids[1] is the first).
func seedThread(t testing.TB, p *parley, title string, n int, texts map[int]string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	th, err := p.In.Runtime.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n+1)
	for seq := 1; seq <= n; seq++ {
		m := agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser}
		text, special := texts[seq]
		switch {
		case seq%2 == 1:
			if !special {
				text = fmt.Sprintf("Question %d: how does part %d of the build work?", seq, seq)
			}
			m.Content = agentcore.TextContent(text)
		default:
			if !special {
				text = fmt.Sprintf("Answer %d. The build reads **part %d**, then:\n\n- checks the inputs\n- writes `out/%d.bin`\n\n"+
					"```go\nfunc part%d() error { return build(%d) }\n```\n", seq, seq, seq, seq, seq)
			}
			m.Role, m.Content = agentcore.RoleAssistant, agentcore.TextContent(text)
			if seq%10 == 0 {
				args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("out/%d.bin", seq)})
				m.Content.Parts = append([]agentcore.Part{{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
					State: "result", ToolCallID: fmt.Sprintf("call-%d", seq), ToolName: "view", Args: args,
					Result: json.RawMessage(`"1 line"`)}}}, m.Content.Parts...)
			}
		}
		stored, err := p.In.Store.AppendMessage(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		ids[seq] = stored.ID
	}
	return th.ID, ids
}

// inView reports whether the element is inside the chat's scroller's
// visible box.
const inView = `(id) => {
	const el = document.getElementById(id), sc = document.getElementById('scroller');
	if (!el || !sc) return false;
	const r = el.getBoundingClientRect(), s = sc.getBoundingClientRect();
	return r.top >= s.top - 1 && r.top < s.bottom && r.bottom > s.top;
}`

// Ctrl+K opens the search box; matches list as the user types; the arrows
// choose one and Enter opens it: the chat opens on the page around that
// message, in view and highlighted, even deep in a long thread.
func TestSearchJumpsToMessage(t *testing.T) {
	p := startParley(t)
	long, ids := seedThread(t, p, "Build system notes", 300, map[int]string{
		37:  "Spotted a zebracorn near the lake.",
		290: "Much later, we talked about the zebracorn again, with many other words around it so that it ranks lower than the short one.",
	})
	other, _ := seedThread(t, p, "Zebracorn sightings", 4, nil)
	pg := p.page("/t/" + other)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)

	pg.KeyActions().Press(input.ControlLeft).Type(input.KeyK).MustDo()
	waitJS(t, pg, `() => document.getElementById('search').open && document.activeElement.id === 'search-q'`)
	pg.MustElement("#search-q").MustInput("zebrac")
	waitJS(t, pg, `() => document.querySelectorAll('#search-results .search-hit').length === 3`)
	hits := pg.MustEval(`() => [...document.querySelectorAll('#search-results .search-hit')].map(h =>
		[h.getAttribute('href'), h.querySelector('.hit-kind').textContent, h.querySelector('mark')?.textContent || ''].join(' | '))`).Arr()
	want := []string{
		"/t/" + other + " | Title | Zebracorn",
		"/t/" + long + "?m=" + ids[37] + " | You | zebracorn",
		"/t/" + long + "?m=" + ids[290] + " | Parley | zebracorn",
	}
	for i, h := range hits {
		if h.String() != want[i] {
			t.Errorf("hit %d: %q, want %q", i, h.String(), want[i])
		}
	}
	shoot := func(name string) {
		time.Sleep(150 * time.Millisecond) // the backdrop's fade
		pg.MustScreenshot(artifact(name))
	}
	shoot("search-light.png")
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}).Call(pg); err != nil {
		t.Fatal(err)
	}
	shoot("search-dark.png")
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{}}).Call(pg); err != nil {
		t.Fatal(err)
	}

	selected := func() string {
		return evalString(pg, `() => document.querySelector('#search-results .search-hit[aria-selected=true]')?.id || ''`)
	}
	if s := selected(); s != "search-hit-0" {
		t.Fatalf("selected at first: %q", s)
	}
	pg.KeyActions().Type(input.ArrowDown, input.ArrowDown, input.ArrowDown, input.ArrowUp).MustDo()
	if s := selected(); s != "search-hit-2" {
		t.Fatalf("after ↓↓↓↑: %q, want the third (the list wraps)", s)
	}
	pg.KeyActions().Type(input.ArrowUp).MustDo()
	if s := selected(); s != "search-hit-1" {
		t.Fatalf("after ↑: %q", s)
	}
	pg.KeyActions().Type(input.Enter).MustDo()

	// Message 37 is six pages back in a thread of 300.
	hit := "msg-" + ids[37]
	waitJS(t, pg, `() => location.search.includes('m=') && document.querySelector('#composer-actions') !== null`)
	waitJS(t, pg, inView, hit)
	if cls := evalString(pg, `(id) => document.getElementById(id).className`, hit); !strings.Contains(cls, "msg-hit") {
		t.Errorf("the message is not highlighted: %q", cls)
	}
	if a := evalString(pg, `(id) => getComputedStyle(document.getElementById(id)).animationName`, hit); a != "msg-hit" {
		t.Errorf("highlight animation %q", a)
	}
	n := pg.MustEval(`() => document.querySelectorAll('#messages > .msg').length`).Int()
	if n != 50 || pg.MustEval(`() => !!document.getElementById('older') && !!document.getElementById('newer')`).Bool() != true {
		t.Errorf("%d messages shown, loaders: %v", n, pg.MustEval(`() => [!!document.getElementById('older'), !!document.getElementById('newer')]`))
	}
	pg.MustScreenshot(artifact("search-jump.png"))
	// The stream opened on the same page: it did not swap in the latest one.
	time.Sleep(300 * time.Millisecond)
	if !pg.MustEval(inView, hit).Bool() {
		t.Error("the message left the view once the stream opened")
	}

	// Esc closes the box and does nothing else.
	pg.KeyActions().Press(input.ControlLeft).Type(input.KeyK).MustDo()
	waitJS(t, pg, `() => document.getElementById('search').open`)
	pg.KeyActions().Type(input.Escape).MustDo()
	waitJS(t, pg, `() => !document.getElementById('search').open`)
	// The header button opens it too.
	pg.MustElement("#search-open").MustClick()
	waitJS(t, pg, `() => document.getElementById('search').open && document.activeElement.id === 'search-q'`)
}

// A long thread opens on its latest page; scrolling up loads the page
// before, and the message the reader was looking at stays where it was.
func TestLongThreadLoadsOlderPagesOnScroll(t *testing.T) {
	p := startParley(t)
	id, ids := seedThread(t, p, "Long", 130, nil)
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	count := func() int { return pg.MustEval(`() => document.querySelectorAll('#messages > .msg').length`).Int() }
	if n := count(); n != 50 {
		t.Fatalf("%d messages on open, want the latest 50", n)
	}
	waitJS(t, pg, inView, "msg-"+ids[130])
	time.Sleep(200 * time.Millisecond) // the stream's first render has landed

	top := func(seq int) float64 {
		return pg.MustEval(`(id) => document.getElementById(id).getBoundingClientRect().top`, "msg-"+ids[seq]).Num()
	}
	scrollUp := func(wantCount, firstSeq int) {
		t.Helper()
		pg.MustEval(`() => { document.getElementById('scroller').scrollTop = 0 }`)
		waitJS(t, pg, `() => document.getElementById('scroller').scrollTop === 0`)
		before := top(firstSeq)
		waitJS(t, pg, `(n) => document.querySelectorAll('#messages > .msg').length === n`, wantCount)
		time.Sleep(100 * time.Millisecond)
		if after := top(firstSeq); after < before-2 || after > before+2 {
			t.Errorf("message %d moved from %.0f to %.0f px when the older page loaded", firstSeq, before, after)
		}
		if st := pg.MustEval(`() => document.getElementById('scroller').scrollTop`).Num(); st <= 0 {
			t.Errorf("scrollTop %.0f after the older page loaded above", st)
		}
	}
	scrollUp(100, 81)
	if !pg.MustEval(`() => !!document.getElementById('older')`).Bool() {
		t.Fatal("no loader for the 30 messages still older")
	}
	scrollUp(130, 31)
	if pg.MustEval(`() => !!document.getElementById('older')`).Bool() {
		t.Error("a loader is left above the first message")
	}
	// Every message once, in order.
	got := pg.MustEval(`() => [...document.querySelectorAll('#messages > .msg')].map(m => m.id)`).Arr()
	for i, v := range got {
		if v.String() != "msg-"+ids[i+1] {
			t.Fatalf("message %d is %s, want msg-%s", i+1, v.String(), ids[i+1])
		}
	}
	// A new reply still streams in at the bottom, under the loaded pages.
	p.Model.Push(scripted.Reply{Text: "And one more."})
	pg.MustEval(`() => { const s = document.getElementById('scroller'); s.scrollTop = s.scrollHeight }`)
	pg.MustElement("#draft").MustInput("more")
	pg.MustElement("#send").MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages > .msg')].pop()?.innerText.includes('And one more.')`)
	if n := count(); n != 132 {
		t.Errorf("%d messages after a new exchange, want 132", n)
	}
}
