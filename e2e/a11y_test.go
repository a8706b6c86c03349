package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// axeScript is axe-core as pinned by axe/package-lock.json (make axe).
const axeScript = "axe/node_modules/axe-core/axe.min.js"

// screenWidths are the widths every screen is photographed at: a phone, a
// laptop and a large monitor.
var screenWidths = []struct{ w, h int }{{390, 844}, {1280, 800}, {1920, 1080}}

// axeExclude are the nodes axe is not run on, each with the reason the rule
// is wrong for it. Empty: every node is checked.
var axeExclude = []string{}

// auditor runs axe-core on pages and collects the serious and critical
// violations of every screen.
type auditor struct {
	t      *testing.T
	src    string
	failed []string
	took   time.Duration
	start  time.Time
}

func newAuditor(t *testing.T) *auditor {
	t.Helper()
	src, err := os.ReadFile(axeScript)
	if err != nil {
		t.Fatalf("axe-core is not installed (%v): run `make axe`", err)
	}
	return &auditor{t: t, src: string(src), start: time.Now()}
}

// axeViolation is what the test reports of one axe violation.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// check runs axe on the page as it is and records every violation of
// impact serious or critical, named by screen.
func (a *auditor) check(pg *rod.Page, screen string) {
	a.t.Helper()
	start := time.Now()
	defer func() { a.took += time.Since(start) }()
	if !pg.MustEval(`() => typeof window.axe === 'object'`).Bool() {
		if _, err := (proto.RuntimeEvaluate{Expression: a.src}).Call(pg); err != nil {
			a.t.Fatalf("%s: inject axe-core: %v", screen, err)
		}
	}
	exclude, _ := json.Marshal(axeExclude)
	res := pg.Timeout(30*time.Second).MustEval(`async (exclude) => {
		// Transitions end before the colours are read.
		await new Promise(r => setTimeout(r, 250));
		const r = await axe.run({include: [document], exclude: exclude.map(s => [s])}, {resultTypes: ['violations']});
		return JSON.stringify(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical'))
	}`, json.RawMessage(exclude)).String()
	var vs []axeViolation
	if err := json.Unmarshal([]byte(res), &vs); err != nil {
		a.t.Fatalf("%s: axe result: %v", screen, err)
	}
	for _, v := range vs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s (%s): %s", screen, v.ID, v.Impact, v.Help)
		for i, n := range v.Nodes {
			if i == 6 {
				fmt.Fprintf(&b, "\n\t… and %d more", len(v.Nodes)-i)
				break
			}
			fmt.Fprintf(&b, "\n\t%v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " "))
		}
		a.failed = append(a.failed, b.String())
	}
}

// theme makes the page's OS theme light or dark (the app follows it).
func theme(t *testing.T, pg *rod.Page, scheme string) {
	t.Helper()
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}).Call(pg); err != nil {
		t.Fatal(err)
	}
}

// screen audits the page as it is, light and dark at 1280 px and light on
// a phone, and photographs it at every width (and dark at 1280 px) into
// artifacts/screen-<name>-<width>[-dark].png, with the element of the
// selector show (if any) scrolled to the top of its scroller.
func (a *auditor) screen(pg *rod.Page, name, show string) {
	a.t.Helper()
	for _, s := range screenWidths {
		sized(pg, s.w, s.h)
		theme(a.t, pg, "light")
		if show != "" {
			pg.MustEval(`(sel) => document.querySelector(sel).scrollIntoView({block: 'start'})`, show)
		}
		if s.w != 1920 {
			a.check(pg, fmt.Sprintf("%s (light, %d px)", name, s.w))
		}
		pg.MustScreenshot(artifact(fmt.Sprintf("screen-%s-%d.png", name, s.w)))
		if s.w == 1280 {
			theme(a.t, pg, "dark")
			a.check(pg, name+" (dark, 1280 px)")
			pg.MustScreenshot(artifact(fmt.Sprintf("screen-%s-%d-dark.png", name, s.w)))
			theme(a.t, pg, "light")
		}
	}
	sized(pg, 1280, 800)
	a.t.Logf("%s done at %v (axe %v)", name, time.Since(a.start).Round(time.Millisecond), a.took.Round(time.Millisecond))
}

// Every screen has no serious or critical accessibility violation (axe-core,
// light and dark), and is photographed at 390, 1280 and 1920 px for people
// to look at: a chat with each kind of tool card, a waiting question, a
// plan under review, the inbox, search, the shortcuts, the chat's menu, the
// rename dialog, settings, the welcome page, an unknown chat, and the
// phone's drawer.
func TestA11yScreens(t *testing.T) {
	start := time.Now()
	a := newAuditor(t)
	p := startParley(t)
	if err := os.WriteFile(filepath.Join(p.dir, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&notes, "note %d: keep the build green\n", i)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "notes.txt"), []byte(notes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	newNotes := strings.Replace(notes.String(), "note 3: keep the build green", "note 3: <b>ship</b> on Friday", 1)

	// A chat with each kind of tool card: a task list, an approved edit, an
	// approved command, and a write over an existing file waiting for
	// approval with its diff.
	tasks := `{"tasks":[` +
		`{"content":"Read the notes","status":"completed","activeForm":"Reading the notes"},` +
		`{"content":"Rewrite the notes","status":"in_progress","activeForm":"Rewriting the notes"},` +
		`{"content":"Check the build","status":"pending","activeForm":"Checking the build"}]}`
	p.Model.Push(
		scripted.Reply{Text: "Here is the plan, and the code as it is:\n\n```go\nfunc main() {\n\tprintln(\"hello\")\n}\n```\n\n| step | state |\n|---|---|\n| read | done |\n| write | next |\n",
			ToolCalls: []scripted.ToolCall{{ID: "t1", Name: "task_write", Args: tasks}}},
		scripted.Reply{Text: "Changing the greeting.", ToolCalls: []scripted.ToolCall{{ID: "e1", Name: "edit_file",
			Args: `{"path":"main.go","old_str":"\tprintln(\"hello\")\n","new_str":"\tprintln(\"hello, world\")\n"}`}}},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "x1", Name: "execute_command", Args: `{"command":"echo built 2>&1"}`}}},
		scripted.Reply{Text: "Now the notes.", ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: writeArgs(t, "notes.txt", newNotes)}}},
	)
	cards := p.newThread()
	pg := p.page("/t/" + cards)
	sendMsg(t, pg, "tidy the notes and greet the world")
	for _, call := range []string{"e1", "x1"} {
		waitJS(t, pg, `() => `+p.card(call)+`?.dataset.state === 'suspended' && `+p.card(call)+`.querySelector('.approve-once') !== null`)
		pg.MustElement(p.sel(call) + ` .approve-once`).MustClick()
		waitJS(t, pg, `() => `+p.card(call)+`.dataset.state === 'done'`)
	}
	waitJS(t, pg, `() => `+p.card("w1")+`?.dataset.state === 'suspended' && `+p.card("w1")+`.querySelector('[data-approval]') !== null`)
	blur(pg)
	a.screen(pg, "chat-cards", p.sel("w1"))
	// Every card open, with its Details: their bodies are checked too.
	pg.MustEval(`() => document.querySelectorAll('#messages [data-tool-call-id], #messages .tool-details, #messages [data-diff-more]').forEach(d => { d.open = true })`)
	a.screen(pg, "chat-cards-open", p.sel("e1"))

	// A question waiting for its answer, in another chat.
	p.Model.Push(scripted.Reply{Text: "I need to know one thing.", ToolCalls: []scripted.ToolCall{{ID: "q1", Name: "ask_user",
		Args: `{"question":"Which database?","options":[{"label":"SQLite","description":"one file, no server"},{"label":"Postgres","description":"a server"}]}`}}})
	question := p.newThread()
	qp := p.page("/t/" + question)
	sendMsg(t, qp, "set up the database")
	waitJS(t, qp, `() => document.querySelector('`+p.sel("q1")+`[data-state="suspended"] [data-question]') !== null`)
	a.screen(qp, "chat-question", p.sel("q1"))

	// A plan under review, in Plan mode.
	p.Model.Push(
		scripted.Reply{Text: "Writing the plan.", ToolCalls: []scripted.ToolCall{{ID: "w2", Name: "write_file",
			Args: writeArgs(t, ".parley/plans/dark-mode.md", "# Dark mode\n\n1. Add the colours.\n2. Follow the OS.\n3. Test both themes.\n")}}},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "p1", Name: "submit_plan", Args: `{"path":".parley/plans/dark-mode.md"}`}}},
	)
	plan := p.newThread()
	pp := p.page("/t/" + plan)
	pp.MustElement(`#mode-switch [data-mode=plan]`).MustClick()
	waitJS(t, pp, `() => document.querySelector('#mode-switch [data-mode=plan]').classList.contains('active')`)
	sendMsg(t, pp, "plan dark mode")
	waitJS(t, pp, `() => document.querySelector('`+p.sel("p1")+`[data-state="suspended"] [data-plan]') !== null`)
	a.screen(pp, "chat-plan", p.sel("p1"))

	// The inbox: the waiting approval, question and plan, and a notification.
	if code, body := p.postJSON(t, "/api/notifications", `{"threadId":"`+cards+`","source":"ci","kind":"build","priority":"high","summary":"Nightly build 118 failed"}`); code != 201 {
		t.Fatalf("notify: %d %s", code, body)
	}
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '4'`)
	pg.MustElement("#inbox-bell").MustClick()
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display !== 'none'`)
	a.screen(pg, "inbox", "")
	pg.MustElement("#inbox-panel .inbox-close").MustClick()
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display === 'none'`)

	// The shortcuts.
	blur(pg)
	pg.Keyboard.MustType(input.Key('?'))
	waitJS(t, pg, `() => document.querySelector('#shortcuts').open`)
	a.screen(pg, "shortcuts", "")
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.querySelector('#shortcuts').open`)

	// Search, with results.
	pg.MustElement("#search-open").MustClick()
	waitJS(t, pg, `() => document.querySelector('dialog#search[open]') !== null`)
	pg.MustElement("#search-q").MustInput("notes")
	waitJS(t, pg, `() => document.querySelector('dialog#search [data-search-hit], dialog#search .search-hit, dialog#search li a') !== null`)
	a.screen(pg, "search", "")
	pg.MustEval(`() => document.querySelector('dialog#search').close()`)

	// The chat's ⋯ menu, and the rename dialog.
	pg.MustElement("#chat-menu .chat-menu-btn").MustClick()
	waitJS(t, pg, `() => document.querySelector('#chat-menu').open`)
	a.screen(pg, "chat-menu", "")
	pg.MustEval(`() => { document.querySelector('#chat-menu').open = false }`)
	row := "#thread-" + cards
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .rename").MustClick()
	waitJS(t, pg, `() => document.querySelector('#rename-dialog')?.open === true`)
	a.screen(pg, "rename", "")
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => document.querySelector('#rename-dialog').open === false`)

	// The phone's drawer, open over the chat.
	sized(pg, 390, 844)
	pg.MustElement("#drawer-btn").MustClick()
	waitJS(t, pg, `() => document.querySelector('#drawer-btn').getAttribute('aria-expanded') === 'true'`)
	waitJS(t, pg, `() => document.querySelector('#sidebar').getBoundingClientRect().left === 0`)
	a.check(pg, "phone drawer (light, 390 px)")
	pg.MustScreenshot(artifact("screen-phone-drawer-390.png"))
	theme(t, pg, "dark")
	a.check(pg, "phone drawer (dark, 390 px)")
	pg.MustScreenshot(artifact("screen-phone-drawer-390-dark.png"))
	theme(t, pg, "light")

	// Settings, the welcome page and an unknown chat.
	a.screen(p.page("/settings"), "settings", "")
	a.screen(p.page("/"), "welcome", "")
	a.screen(p.page("/t/no-such-chat"), "not-found", "")

	t.Logf("axe took %v of the test's %v", a.took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if len(a.failed) > 0 {
		t.Errorf("%d serious or critical accessibility violations (axe-core):\n%s", len(a.failed), strings.Join(a.failed, "\n"))
	}
}
