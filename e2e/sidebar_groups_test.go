package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
)

// sidebarGroups is the sidebar as shown: each group's heading (from the
// heading element) and its chats' titles, "Heading: a, b".
func sidebarGroups(pg *rod.Page) []string {
	var out []string
	for _, v := range pg.MustEval(`() => [...document.querySelectorAll('#sidebar .thread-group')].map(g =>
		g.querySelector('h2').textContent + ': ' + [...g.querySelectorAll('.thread .thread-title')].map(t => t.textContent).join(', '))`).Arr() {
		out = append(out, v.String())
	}
	return out
}

// importAt stores a chat with one message whose last activity is at.
func importAt(t *testing.T, p *parley, title string, at time.Time, pinned bool) string {
	t.Helper()
	got, err := p.In.Runtime.ImportThreads(context.Background(), []agentcore.ThreadImport{{
		Thread:   agentcore.Thread{ResourceID: "default", Title: title, Pinned: pinned, CreatedAt: at, UpdatedAt: at},
		Messages: []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("about " + title), CreatedAt: at}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return got[0].ID
}

// The sidebar groups chats as the peers do: Pinned, then by the local day of
// the last message (Today, Yesterday, Previous 7 days, Previous 30 days, then
// by month), each group under a heading a screen reader lists. A title that
// is markup shows as text; a chat imported or pinned while the page is open
// lands in its group without a reload.
func TestSidebarGroups(t *testing.T) {
	p := startParley(t)
	now := time.Now()
	noon := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.Local)
	const hostile = `<img src=x onerror="window.__pwned=1">`
	importAt(t, p, "Pinned long ago", time.Date(2022, 7, 1, 10, 0, 0, 0, time.Local), true)
	importAt(t, p, "From March 2023", time.Date(2023, 3, 14, 9, 30, 0, 0, time.Local), false)
	importAt(t, p, "Two weeks back", noon.AddDate(0, 0, -15), false)
	importAt(t, p, "Four days back", noon.AddDate(0, 0, -4), false)
	yesterday := importAt(t, p, "From yesterday", noon.AddDate(0, 0, -1), false)
	importAt(t, p, hostile, now.Add(-time.Second), false)
	importAt(t, p, "Just now", now, false)

	pg := p.page("/")
	sized(pg, 1280, 900)
	want := []string{
		"Pinned: Pinned long ago",
		"Today: Just now, " + hostile,
		"Yesterday: From yesterday",
		"Previous 7 days: Four days back",
		"Previous 30 days: Two weeks back",
		"March 2023: From March 2023",
	}
	if got := sidebarGroups(pg); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sidebar groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Headings, named groups: a screen reader's list of headings is the
	// list of groups, and each list says which group it is.
	if got := evalString(pg, `() => [...document.querySelectorAll('#sidebar h2')].map(h => h.textContent).join('|')`); got != "Pinned|Today|Yesterday|Previous 7 days|Previous 30 days|March 2023" {
		t.Errorf("sidebar headings: %q", got)
	}
	if got := evalString(pg, `() => [...document.querySelectorAll('#sidebar .thread-list')].map(l => document.getElementById(l.getAttribute('aria-labelledby'))?.textContent).join('|')`); got != "Pinned|Today|Yesterday|Previous 7 days|Previous 30 days|March 2023" {
		t.Errorf("the lists are not named by their headings: %q", got)
	}
	if pg.MustEval(`() => window.__pwned === 1 || document.querySelector('#sidebar img[src=x]') !== null`).Bool() {
		t.Fatal("a chat's title became markup in the sidebar")
	}
	// The rows keep their times: today's as a time of day.
	if got := evalString(pg, `() => document.querySelector('#sidebar .thread-group:nth-child(2) .thread-when').textContent`); !strings.Contains(got, ":") {
		t.Errorf("today's chat shows %q, want a time of day", got)
	}

	// Live: a chat imported elsewhere appears under Today, and pinning one
	// moves it to Pinned, without a reload.
	pg.MustEval(`() => { window.__sameDocument = true }`)
	importAt(t, p, "Arrived live", now, false)
	waitJS(t, pg, `() => [...document.querySelectorAll('#sidebar .thread-group')].find(g => g.querySelector('h2').textContent === 'Today')?.querySelector('.thread .thread-title')?.textContent === 'Arrived live'`)
	row := "#thread-" + yesterday
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .pin").MustClick()
	waitJS(t, pg, `(sel) => document.querySelector(sel)?.closest('.thread-group')?.querySelector('h2').textContent === 'Pinned'`, row)
	if got := sidebarGroups(pg); len(got) != 5 || got[0] != "Pinned: From yesterday, Pinned long ago" || !strings.HasPrefix(got[1], "Today: Arrived live, Just now") {
		t.Errorf("after a live import and a pin the sidebar is %q", got)
	}
	if !pg.MustEval(`() => window.__sameDocument === true`).Bool() {
		t.Fatal("the page reloaded: the sidebar was to change in place")
	}

	// The look, wide and on a phone, light and dark.
	pg.MustNavigate(p.URL + "/t/" + yesterday)
	pg.MustWaitLoad()
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		sized(pg, 1280, 800)
		pg.MustScreenshot(artifact("sidebar-groups-1280-" + scheme + ".png"))
		sized(pg, 390, 844)
		pg.MustElement("#drawer-btn").MustClick()
		waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().left === 0`)
		noSideScroll(t, pg, "the drawer with groups", 390)
		pg.MustScreenshot(artifact("sidebar-groups-390-" + scheme + ".png"))
		pg.Keyboard.MustType(input.Escape)
		waitJS(t, pg, `() => !document.documentElement.classList.contains('drawer-open')`)
	}
}
