package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// heldReply streams text but holds after its third chunk until release is
// called: the test does what it must while the reply is surely going,
// whatever the machine's load.
func heldReply(t *testing.T, text string) (scripted.Reply, func()) {
	t.Helper()
	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return scripted.Reply{Text: text, Delay: 5 * time.Millisecond, OnChunk: func(i int, _ string, _ time.Time) {
		if i == 2 {
			<-gate
		}
	}}, release
}

// postJSON posts body to the running Parley like a script would.
func (p *parley) postJSON(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(p.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// A notification posted over HTTP shows up in the inbox at once, with the
// bell's count; marking it seen takes it out.
func TestInboxShowsNotificationLive(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#inbox-bell') !== null && document.querySelector('#inbox-count') === null`)
	// A chat page keeps one stream open: the chat's carries the inbox too
	// (browsers allow six connections per server).
	if evalString(pg, `() => String(document.querySelector('#inbox-root').hasAttribute('data-init'))`) != "false" {
		t.Fatal("a chat page opened a second stream for the inbox")
	}

	// Low priority: kept in the inbox, summarised, never waking the agent.
	code, body := p.postJSON(t, "/api/notifications", `{"threadId":"`+id+`","source":"ci","kind":"build","priority":"low","summary":"Nightly build 118 passed"}`)
	if code != 201 {
		t.Fatalf("notify: %d %s", code, body)
	}
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '1'`)
	code, _ = p.postJSON(t, "/api/notifications", `{"threadId":"`+id+`","source":"github","kind":"review","priority":"high","summary":"Ana requested changes on PR 7","dedupeKey":"pr7","payload":{"url":"https://code.example/acme/app/pull/7"}}`)
	if code != 201 {
		t.Fatal("second notification refused")
	}
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '2'`)
	// The bell and its count keep clear of New chat beside them.
	if hit := evalString(pg, `() => { const r = (s) => document.querySelector(s).getBoundingClientRect(), n = r('#new-chat');
		return ['#inbox-bell', '#inbox-count'].filter(s => { const b = r(s); return b.right > n.left && b.left < n.right && b.bottom > n.top && b.top < n.bottom }).join(' ') }`); hit != "" {
		pg.MustScreenshot(artifact("inbox-bell-overlap.png"))
		t.Fatalf("%s covers New chat", hit)
	}

	// Alt+I opens the inbox, Esc closes it, the bell opens it again.
	pg.KeyActions().Press(input.AltLeft).Type(input.KeyI).MustDo()
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display !== 'none'`)
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display === 'none'`)
	pg.MustElement("#inbox-bell").MustClick()
	waitJS(t, pg, `() => getComputedStyle(document.querySelector('#inbox-panel')).display !== 'none'`)
	items := evalString(pg, `() => [...document.querySelectorAll('#inbox-list .inbox-item')].map(li => li.dataset.kind + ':' + li.querySelector('.inbox-title').innerText).join('|')`)
	if !strings.Contains(items, "notification:Ana requested changes on PR 7") || !strings.Contains(items, "notification:Nightly build 118 passed") {
		t.Fatalf("inbox items %q", items)
	}
	if first := evalString(pg, `() => document.querySelector('#inbox-list .inbox-item .inbox-title').innerText`); first != "Ana requested changes on PR 7" {
		t.Fatalf("newest first: %q", first)
	}
	if link := evalString(pg, `() => document.querySelector('#inbox-list .inbox-item .inbox-link-out')?.href || ''`); link != "https://code.example/acme/app/pull/7" {
		t.Fatalf("the notification's link: %q", link)
	}
	// Filter by priority: only the high one stays visible.
	pg.MustElement(`#inbox-panel select[data-bind\:inbox-priority]`).MustSelect("High")
	waitJS(t, pg, `() => [...document.querySelectorAll('#inbox-list .inbox-item')].filter(li => li.offsetParent !== null).length === 1`)
	pg.MustScreenshot(artifact("inbox-light.png"))
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}).Call(pg); err != nil {
		t.Fatal(err)
	}
	pg.MustScreenshot(artifact("inbox-dark.png"))
	pg.MustElement(`#inbox-panel select[data-bind\:inbox-priority]`).MustSelect("Any priority")

	pg.MustElement(`#inbox-list .inbox-item[data-kind=notification] .inbox-seen`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '1'`)
	// "Not now" hides it without deciding anything.
	pg.MustElement(`#inbox-list .inbox-item[data-kind=notification] .inbox-snooze`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-count') === null`)
	list := p.getJSON(t, "/api/notifications?threadId="+id)
	if !strings.Contains(list, `"status":"seen"`) || !strings.Contains(list, `"snoozedUntil"`) {
		t.Fatalf("records after seen and snooze: %s", list)
	}

	// "Mark all seen" clears what the source filter shows, then the rest.
	for _, n := range []string{
		`"source":"ci","kind":"build","summary":"Build 119 failed"`,
		`"source":"ci","kind":"deploy","summary":"Deploy 12 done"`,
		`"source":"mail","kind":"inbox","summary":"Mail from Ana"`,
	} {
		if code, body := p.postJSON(t, "/api/notifications", `{"threadId":"`+id+`",`+n+`}`); code != 201 {
			t.Fatalf("notify: %d %s", code, body)
		}
	}
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '3'`)
	pg.MustElement("#inbox-sources").MustSelect("ci")
	waitJS(t, pg, `() => [...document.querySelectorAll('#inbox-list .inbox-item')].filter(li => li.offsetParent !== null).length === 2`)
	pg.MustScreenshot(artifact("inbox-seen-all.png"))
	pg.MustElement("#inbox-seen-all").MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-count')?.innerText === '1'`)
	pg.MustElement("#inbox-sources").MustSelect("All sources")
	if left := evalString(pg, `() => document.querySelector('#inbox-list .inbox-item .inbox-title').innerText`); left != "Mail from Ana" {
		t.Fatalf("after clearing ci, the inbox holds %q", left)
	}
	pg.MustElement("#inbox-seen-all").MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-count') === null && document.querySelector('#inbox-seen-all') === null`)
}

func (p *parley) getJSON(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(p.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// A question asked in one chat is answered from the inbox on another page;
// the run goes on in its thread.
func TestInboxAnswersQuestion(t *testing.T) {
	p := startParley(t)
	pg, id := ask(t, p, `{"question":"Which region?","options":[{"label":"eu-west"},{"label":"us-east"}]}`)
	_ = pg
	home := p.page("/")
	waitJS(t, home, `() => document.querySelector('#inbox-count')?.innerText === '1'`)
	// The sidebar marks the chat that needs you.
	waitJS(t, home, `(id) => document.querySelector('#thread-' + id + ' .needs-you') !== null`, id)
	home.MustElement("#inbox-bell").MustClick()
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=question] .inbox-title')?.innerText === 'Which region?'`)
	home.MustScreenshot(artifact("inbox-question.png"))
	home.MustElement(`#inbox-list .inbox-item[data-kind=question] .inbox-answer[data-label="us-east"]`).MustClick()
	// The run resumes in its thread: the open chat shows the answer and the reply.
	if got := answered(t, p, pg); got != "User answered: us-east" {
		t.Fatalf("model told %q", got)
	}
	waitJS(t, home, `() => document.querySelector('#inbox-count') === null`)
	waitJS(t, home, `(id) => document.querySelector('#thread-' + id) !== null && document.querySelector('#thread-' + id + ' .needs-you') === null`, id)
	if msgs := p.messages(id); len(msgs) < 2 {
		t.Fatalf("thread has %d messages", len(msgs))
	}
}

// A message sent with "Send now" while the agent works reaches it in the
// same run, and the chat shows it between the two parts of the reply.
func TestSendNowReachesRunningAgent(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	held, release := heldReply(t, "Looking at the code "+words(20))
	p.Model.Push(held, scripted.Reply{Text: "Also covering the tests, as you asked."})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("refactor the parser")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#send-now') !== null && document.querySelector('#queue') !== null`)
	pg.MustElement("#draft").MustInput("and cover it with tests")
	pg.MustScreenshot(artifact("composer-while-running.png"))
	pg.Keyboard.MustType(input.Enter) // Enter is Send now while a reply streams
	// Until the agent reads it, the message says how it will reach it.
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-user .msg-badge')].some(b => b.innerText.startsWith('Steering'))`)
	pg.MustScreenshot(artifact("steering.png"))
	release()
	waitJS(t, pg, `() => document.querySelector('#send') !== null && document.querySelectorAll('#messages .msg-assistant[data-status=complete]').length === 2`)
	reqs := p.Model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (the same run read the message)", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "user" || last.Content != "and cover it with tests" {
		t.Fatalf("second model input ends with %s %q", last.Role, last.Content)
	}
	order := evalString(pg, `() => [...document.querySelectorAll('#messages .msg')].map(m => m.classList.contains('msg-user') ? 'U:' + m.querySelector('.msg-body').innerText.trim() : 'A').join(' ')`)
	if !strings.HasPrefix(order, "U:refactor the parser A U:and cover it with tests A") {
		t.Fatalf("chat order %q", order)
	}
	msgs := p.messages(id)
	if len(msgs) != 4 || msgs[1].RunID != msgs[3].RunID {
		t.Fatalf("stored %d messages; the reply halves belong to one run", len(msgs))
	}
}

// A queued message waits for the reply to end, then starts the next run.
func TestQueuedMessageStartsNextRun(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	held, release := heldReply(t, "First answer "+words(20))
	p.Model.Push(held, scripted.Reply{Text: "Second answer."})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("first question")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#queue') !== null`)
	pg.MustElement("#draft").MustInput("second question")
	pg.KeyActions().Press(input.AltLeft).Type(input.Enter).MustDo() // Alt+Enter queues
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-user .msg-badge')].some(b => b.innerText.startsWith('Queued'))`)
	release()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant[data-status=complete]')].some(m => m.innerText.includes('Second answer.'))`)
	reqs := p.Model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Content != "second question" {
		t.Fatalf("the queued turn's model input ends with %q", last.Content)
	}
	msgs := p.messages(id)
	if len(msgs) != 4 || msgs[1].RunID == msgs[3].RunID {
		t.Fatal("the queued message did not get a run of its own")
	}
	if badge := evalString(pg, `() => [...document.querySelectorAll('#messages .msg-badge')].map(b => b.innerText).join('|')`); badge != "" {
		t.Fatalf("badges left after the turn ran: %q", badge)
	}
}

// A tool call waiting for approval is allowed from the inbox on another
// page; the file is written and the run goes on. A failed run is listed
// until dismissed, or retried from there.
func TestInboxApprovesToolCall(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"notes.txt","content":"from the inbox\n"}`}}},
		scripted.Reply{Text: "Wrote notes.txt."},
	)
	sendMsg(t, pg, "write the notes")
	waitJS(t, pg, `() => `+p.card("w1")+`?.querySelector('[data-approval]') != null`)

	home := p.page("/")
	home.MustElement("#inbox-bell").MustClick()
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=approval] .inbox-title')?.innerText === 'Allow write_file?'`)
	if detail := evalString(home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=approval] .inbox-detail')?.innerText || ''`); detail != "notes.txt" {
		t.Fatalf("approval detail %q", detail)
	}
	home.MustElement(`#inbox-list .inbox-item[data-kind=approval] .inbox-allow`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote notes.txt.')`)
	if b, err := os.ReadFile(filepath.Join(p.dir, "notes.txt")); err != nil || string(b) != "from the inbox\n" {
		t.Fatalf("file after approval from the inbox: %q %v", b, err)
	}
	waitJS(t, home, `() => document.querySelector('#inbox-count') === null`)

	// A run that fails needs the user too, until dismissed.
	p.Model.Push(scripted.Reply{Status: 400, ErrorBody: `{"error":{"message":"the model is overloaded"}}`}) // not retried
	sendMsg(t, pg, "again")
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=failed] .inbox-title')?.innerText.includes('overloaded')`)
	home.MustElement(`#inbox-list .inbox-item[data-kind=failed] .inbox-dismiss`).MustClick()
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=failed]') === null && document.querySelector('#inbox-count') === null`)

	// Or retried from there: the chat gets its answer, the inbox lets go.
	p.Model.Push(scripted.Reply{Status: 400, ErrorBody: `{"error":{"message":"the model is overloaded again"}}`},
		scripted.Reply{Text: "Answered on the second try."})
	sendMsg(t, pg, "once more")
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=failed] .inbox-title')?.innerText.includes('overloaded again')`)
	home.MustElement(`#inbox-list .inbox-item[data-kind=failed] .inbox-retry`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Answered on the second try.')`)
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=failed]') === null && document.querySelector('#inbox-count') === null`)
}

// A queued message can be taken back to the message box before it runs:
// it leaves the chat and never reaches the model; nothing typed is lost.
func TestEditQueuedMessage(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	held, release := heldReply(t, "First answer "+words(20))
	p.Model.Push(held)
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "first question")
	waitJS(t, pg, `() => document.querySelector('#queue') !== null`)
	pg.MustElement("#draft").MustInput("second thoughts")
	pg.MustElement("#queue").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-user .msg-edit') !== null`)
	pg.MustElement("#messages .msg-user .msg-edit").MustClick()
	waitJS(t, pg, `() => document.querySelector('#draft').value === 'second thoughts' && document.querySelector('#messages .msg-edit') === null`)
	release()
	waitJS(t, pg, `() => document.querySelector('#send') !== null`) // the reply ended
	if n := len(p.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the message taken back ran", n)
	}
	if texts := evalString(pg, `() => [...document.querySelectorAll('#messages .msg-user')].map(m => m.innerText).join('|')`); strings.Contains(texts, "second thoughts") {
		t.Fatalf("the message taken back is still in the chat: %q", texts)
	}
}

// A plan waiting for review is approved from the inbox on another page;
// the model is told, and the chat goes on in Build mode.
func TestInboxApprovesPlan(t *testing.T) {
	p := startParley(t)
	pg, _ := planned(t, p)
	home := p.page("/")
	home.MustElement("#inbox-bell").MustClick()
	waitJS(t, home, `() => document.querySelector('#inbox-list .inbox-item[data-kind=plan] .inbox-approve') !== null`)
	p.Model.Push(scripted.Reply{Text: "Implementing the plan now."})
	home.MustElement(`#inbox-list .inbox-item[data-kind=plan] .inbox-approve`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Implementing the plan now.')`)
	if got := toolResultSeen(p, "p1"); got != "Plan approved. Proceed with implementation following the approved plan." {
		t.Fatalf("model told %q", got)
	}
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=build]').classList.contains('active')`)
	waitJS(t, home, `() => document.querySelector('#inbox-count') === null`)
}
