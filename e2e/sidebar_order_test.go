package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// sidebarRows is the sidebar as a fresh load of the page shows it: each
// chat's id and time, top to bottom.
func sidebarRows(pg *rod.Page) []string {
	pg.MustReload()
	pg.MustWaitLoad()
	var out []string
	for _, v := range pg.MustEval(`() => [...document.querySelectorAll('#sidebar .thread')].map(r => r.id + ' ' + r.querySelector('.thread-when').innerText)`).Arr() {
		out = append(out, v.String())
	}
	return out
}

// The sidebar lists chats by their last message: New chat stores nothing
// until a message is sent, and renaming, pinning (then unpinning), switching
// Plan/Build or YOLO keep a chat's place and the time it shows.
func TestSidebarOrderFollowsMessages(t *testing.T) {
	p := startParley(t)
	old := time.Date(2023, 3, 14, 9, 30, 0, 0, time.UTC)
	imported, err := p.In.Runtime.ImportThreads(context.Background(), []agentcore.ThreadImport{{
		Thread:   agentcore.Thread{ResourceID: "default", Title: "From 2023", CreatedAt: old, UpdatedAt: old},
		Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("an old question"), CreatedAt: old}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	older := imported[0].ID

	// A chat started now, from the welcome screen.
	p.Model.Push(scripted.Reply{Text: "Fresh reply."})
	pg := p.page("/")
	pg.MustElement(".welcome textarea[name=text]").MustInput("a new question")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => location.pathname.startsWith('/t/') && document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)

	// New chat, twice, sending nothing: no chat is stored.
	for range 2 {
		clickToLoad(t, pg, "#new-chat")
		waitJS(t, pg, `() => location.pathname === '/' && document.querySelector('.welcome textarea[name=text]') !== null`)
	}
	if n := len(p.threads()); n != 2 {
		t.Fatalf("%d chats stored, want 2: New chat stored a chat before anything was sent", n)
	}

	pg.MustNavigate(p.URL + "/t/" + older)
	pg.MustWaitLoad()
	want := sidebarRows(pg)
	if len(want) != 2 || want[1] != "thread-"+older+" Mar 2023" {
		t.Fatalf("sidebar %q: want the new chat first and the 2023 one below it, dated Mar 2023", want)
	}
	same := func(what string) {
		t.Helper()
		if got := sidebarRows(pg); !slices.Equal(got, want) {
			t.Fatalf("after %s the sidebar is %q, want %q", what, got, want)
		}
	}
	row := "#thread-" + older

	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .rename").MustClick()
	waitJS(t, pg, `() => document.querySelector('#rename-dialog')?.open === true`)
	pg.MustElement("#rename-dialog input").MustSelectAllText().MustInput("Renamed old chat")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `(sel) => document.querySelector(sel + ' .thread-title')?.innerText === 'Renamed old chat'`, row)
	same("a rename")

	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .pin").MustClick()
	waitJS(t, pg, `(sel) => document.querySelector('#sidebar .thread') === document.querySelector(sel + '.pinned')`, row)
	if got := evalString(pg, `(sel) => document.querySelector(sel + ' .thread-when').innerText`, row); got != "Mar 2023" {
		t.Fatalf("the pinned chat shows %q, want Mar 2023", got)
	}
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .pin").MustClick()
	waitJS(t, pg, `(sel) => document.querySelector(sel) !== null && document.querySelector(sel + '.pinned') === null`, row)
	same("pin and unpin")

	pg.MustElement(`#mode-switch .mode[data-mode=plan]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#mode-switch .mode.active')?.dataset.mode === 'plan'`)
	same("switching to Plan")

	pg.MustElement("#yolo-switch").MustClick()
	waitJS(t, pg, `() => document.querySelector('#yolo-switch.on') !== null`)
	same("turning YOLO on")

	// A message is activity: the chat comes first, dated now.
	p.Model.Push(scripted.Reply{Text: "Back to it."})
	sendMsg(t, pg, "and now?")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Back to it.')`)
	if got := sidebarRows(pg); len(got) != 2 || !strings.HasPrefix(got[0], "thread-"+older+" ") || strings.HasSuffix(got[0], "Mar 2023") {
		t.Fatalf("after a message the sidebar is %q, want the chat first with today's time", got)
	}
}
