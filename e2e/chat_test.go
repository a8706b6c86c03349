package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// A person types on the home page, presses Enter, and watches the reply
// stream in; a reload shows the same reply from the store.
func TestReplyStreamsAndSurvivesReload(t *testing.T) {
	p := startParley(t)
	reply := "Streaming " + words(40)
	p.Model.Push(scripted.Reply{Text: reply, Delay: 25 * time.Millisecond})

	pg := p.page("/")
	recordStates(pg)
	pg.MustElement("textarea[name=text]").MustInput("Tell me something")
	pg.Keyboard.MustType(input.Enter)

	waitJS(t, pg, `() => location.pathname.startsWith('/t/')`)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	got := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`)
	if got != reply {
		t.Fatalf("final reply = %q, want %q", got, reply)
	}
	seen := states(pg)
	intermediate := 0
	for _, s := range seen {
		if s != reply && strings.HasPrefix(reply, s) {
			intermediate++
		}
	}
	if intermediate < 3 {
		t.Fatalf("saw %d intermediate DOM states (%q), want at least 3: the reply did not stream", intermediate, seen)
	}
	if user := evalString(pg, `() => document.querySelector('#messages .msg-user .msg-body').innerText.trim()`); user != "Tell me something" {
		t.Fatalf("user message = %q", user)
	}
	if title := evalString(pg, `() => document.querySelector('#sidebar .thread.active .thread-title').innerText`); title != "Tell me something" {
		t.Fatalf("thread title in sidebar = %q", title)
	}
	pg.MustScreenshot(artifact("reply-streamed.png"))

	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if again := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`); again != reply {
		t.Fatalf("after reload the reply is %q", again)
	}
}

// Stop keeps the partial reply, marks it stopped, and the thread goes on.
func TestStopKeepsPartialReply(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Text: words(400), Delay: 20 * time.Millisecond})
	p.Model.Push(scripted.Reply{Text: "Second answer."})

	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("Write a lot")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => (document.querySelector('#messages .msg-assistant .msg-body')?.innerText || '').split(' ').length > 10`)
	pg.MustElement("#stop").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=interrupted]') !== null`)

	partial := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`)
	if note := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-note').innerText`); note != "Stopped" {
		t.Fatalf("note = %q, want Stopped", note)
	}
	if partial == "" || partial == words(400) {
		t.Fatalf("partial reply = %q", partial)
	}
	ms := p.messages(id)
	last := ms[len(ms)-1]
	if last.Status != agentcore.StatusInterrupted || last.Content.Text() != partial {
		t.Fatalf("stored reply: status %s, text %q; page shows %q", last.Status, last.Content.Text(), partial)
	}
	time.Sleep(200 * time.Millisecond) // a stopped run must not write on
	if again := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`); again != partial {
		t.Fatalf("the reply grew after Stop: %q", again)
	}

	// The thread is usable again: Send is back and a new message works.
	waitJS(t, pg, `() => document.querySelector('#send') !== null`)
	pg.MustElement("#draft").MustInput("And now?")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelectorAll('#messages .msg-assistant[data-status=complete]').length === 1`)
	if got := evalString(pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText`); !strings.Contains(got, "Second answer.") {
		t.Fatalf("second reply = %q", got)
	}
}

// A run belongs to its thread: two tabs on the thread both stream it, and
// closing the tab that started it stops nothing.
func TestTwoTabsStreamTheSameRun(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	reply := "Both tabs " + words(50)
	p.Model.Push(scripted.Reply{Text: reply, Delay: 25 * time.Millisecond})

	a := p.page("/t/" + id)
	b := p.page("/t/" + id)
	recordStates(b)
	b.MustReload() // install the recorder on b's document
	b.MustWaitLoad()
	waitJS(t, b, `() => document.querySelector('#messages') !== null`)
	time.Sleep(100 * time.Millisecond) // b's stream is open

	a.MustElement("#draft").MustInput("Hello from tab A")
	a.Keyboard.MustType(input.Enter)
	waitJS(t, a, `() => (document.querySelector('#messages .msg-assistant .msg-body')?.innerText || '').length > 20`)
	_ = a.Close() // the tab that started the run goes away

	waitJS(t, b, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if got := evalString(b, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`); got != reply {
		t.Fatalf("tab B shows %q", got)
	}
	partials := 0
	for _, s := range states(b) {
		if s != reply && strings.HasPrefix(reply, s) {
			partials++
		}
	}
	if partials < 3 {
		t.Fatalf("tab B saw %d intermediate states, want at least 3", partials)
	}
	if ms := p.messages(id); ms[len(ms)-1].Status != agentcore.StatusComplete {
		t.Fatalf("run did not finish after tab A closed: %s", ms[len(ms)-1].Status)
	}
}

// Model text can never run script in the page.
func TestModelTextRunsNoScript(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	evil := "Look: <img src=x onerror=\"window.__xss='img'\"> and <script>window.__xss='script'</script> " +
		"<svg onload=\"window.__xss='svg'\"></svg> [click](javascript:window.__xss='link') " +
		"<a href=\"javascript:window.__xss='a'\">a</a> <iframe src=\"javascript:window.__xss='iframe'\"></iframe> done"
	p.Model.Push(scripted.Reply{Text: evil, ChunkSize: 3, Delay: 5 * time.Millisecond})

	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("<img src=x onerror=\"window.__xss='user'\">")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	for _, a := range pg.MustElements("#messages a") {
		a.MustClick() // a javascript: link that survived would run now
	}
	time.Sleep(200 * time.Millisecond)
	if x := pg.MustEval(`() => window.__xss === undefined ? '' : String(window.__xss)`).String(); x != "" {
		t.Fatalf("model text ran script: window.__xss = %q", x)
	}
	if n := pg.MustEval(`() => document.querySelectorAll('#messages script, #messages iframe, #messages [onerror], #messages [onload]').length`).Int(); n != 0 {
		t.Fatalf("%d dangerous elements in the DOM", n)
	}
	if !strings.Contains(evalString(pg, `() => document.querySelector('#messages .msg-assistant').innerText`), "done") {
		t.Fatal("the rest of the reply is missing")
	}
}

// A provider failure shows its reason in the chat, and the thread stays usable.
func TestProviderErrorShownAndThreadUsable(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: sk-bad","type":"invalid_request_error","code":"invalid_api_key"}}`})
	p.Model.Push(scripted.Reply{Text: "Recovered."})

	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("hi")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=error] .msg-error') !== null`)
	if e := evalString(pg, `() => document.querySelector('.msg-error').innerText`); !strings.Contains(e, "Incorrect API key") {
		t.Fatalf("error shown = %q, want the provider's reason", e)
	}
	pg.MustElement("#draft").MustInput("again")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
}

// A failed reply offers Retry (say, once the key is mended): the new reply
// is its next version (2/2), and ‹ brings the failed one back.
func TestRetryFailedReply(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: sk-old","type":"invalid_request_error","code":"invalid_api_key"}}`})
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "summarise the design")
	failed := `document.querySelector('#messages .msg-assistant[data-status=error]')`
	waitJS(t, pg, `() => getComputedStyle(`+failed+`.querySelector('.msg-retry')).display !== 'none'`)
	pg.MustScreenshot(artifact("retry-failed.png"))

	p.Model.Push(scripted.Reply{Text: "The design, in short: one core, two shells."})
	pg.MustElement(`#messages .msg-assistant[data-status=error] .msg-retry`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('one core, two shells')`)
	if order := evalString(pg, `() => [...document.querySelectorAll('#messages > article')].map(a => a.dataset.status).join(',')`); order != "complete,complete" {
		t.Fatalf("the chat reads %s, want the question and the new reply", order)
	}
	last := `[...document.querySelectorAll('#messages .msg-assistant')].pop()`
	waitJS(t, pg, `() => `+last+`.querySelector('.version-count')?.innerText === '2/2'`)
	pg.MustScreenshot(artifact("retry-done.png"))
	ms := p.messages(id)
	if len(ms) != 2 || ms[1].Status != agentcore.StatusComplete {
		t.Fatalf("after the retry the chat holds %d messages: %v", len(ms), ms)
	}
	reqs := p.Model.Requests()
	if last := reqs[len(reqs)-1].Messages; last[len(last)-1].Content != "summarise the design" {
		t.Fatalf("the retry asked the model with %+v last", last[len(last)-1])
	}
	// The failed attempt is the version before.
	pg.MustEval(`() => ` + last + `.querySelector('.version-prev').click()`)
	waitJS(t, pg, `() => `+failed+`?.querySelector('.version-count')?.innerText === '1/2'`)
}

// Copy on a reply puts its Markdown on the clipboard, as written.
func TestCopyReply(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	const reply = "**Bold** and `code`:\n\n- one\n- two"
	p.Model.Push(scripted.Reply{Text: reply})
	pg := p.page("/t/" + id)
	if err := (proto.BrowserGrantPermissions{BrowserContextID: pg.Browser().BrowserContextID, Origin: p.URL,
		Permissions: []proto.BrowserPermissionType{proto.BrowserPermissionTypeClipboardReadWrite, proto.BrowserPermissionTypeClipboardSanitizedWrite}}).Call(pg.Browser()); err != nil {
		t.Fatal(err)
	}
	sendMsg(t, pg, "format something")
	last := `[...document.querySelectorAll('#messages .msg-assistant')].pop()`
	waitJS(t, pg, `() => `+last+`.dataset.status === 'complete' && `+last+`.querySelector('.msg-copy') !== null`)
	if evalString(pg, `() => [...document.querySelectorAll('#messages .msg-user .msg-copy')].length + ''`) != "0" {
		t.Fatal("the user's own message offers Copy")
	}
	pg.MustElement("#messages .msg-assistant").MustHover()
	pg.MustScreenshot(artifact("copy-reply.png"))
	pg.MustElement("#messages .msg-assistant .msg-copy").MustClick()
	waitJS(t, pg, `() => `+last+`.querySelector('.msg-copy').innerText === 'Copied'`)
	got, err := pg.Eval(`async () => await navigator.clipboard.readText()`)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value.String() != reply {
		t.Fatalf("the clipboard holds %q, want the reply's Markdown %q", got.Value.String(), reply)
	}
}

// The sidebar: new chat, rename, pin and delete, as a person uses them.
func TestSidebarRenamePinDelete(t *testing.T) {
	p := startParley(t)
	first := p.newThread()
	second := p.newThread()
	pg := p.page("/t/" + first)

	// Rename in the page's dialog: Enter saves.
	pg.MustElement("#thread-" + first).MustHover()
	pg.MustElement("#thread-" + first + " .rename").MustClick()
	waitJS(t, pg, `() => document.querySelector('#rename-dialog')?.open === true`)
	pg.MustElement("#rename-dialog input").MustSelectAllText().MustInput("Renamed chat")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `(id) => document.querySelector('#thread-' + id + ' .thread-title').innerText === 'Renamed chat'`, first)
	waitJS(t, pg, `() => document.querySelector('#chat-header .chat-title').innerText === 'Renamed chat'`)

	// Pin the second thread: it moves to the top.
	pg.MustElement("#thread-" + second).MustHover()
	pg.MustElement("#thread-" + second + " .pin").MustClick()
	waitJS(t, pg, `(id) => document.querySelector('#sidebar .thread').id === 'thread-' + id && document.querySelector('#thread-' + id + '.pinned') !== null`, second)

	// Delete the open thread: back to the new-chat screen at once, with
	// Undo offered (dialogs_test.go); the chat reads as gone.
	pg.MustElement("#thread-" + first).MustHover()
	pg.MustElement("#thread-" + first + " .delete").MustClick()
	waitJS(t, pg, `() => location.pathname === '/'`)
	pg.MustWaitLoad()
	waitJS(t, pg, `(id) => document.querySelector('#thread-' + id) === null`, first)
	if _, err := p.In.Store.GetThread(t.Context(), first); err == nil {
		t.Fatal("deleted thread is still stored")
	}

	// New chat opens the welcome screen; nothing is stored until a message
	// is sent.
	pg.MustNavigate(p.URL + "/t/" + second)
	pg.MustWaitLoad()
	clickToLoad(t, pg, "#new-chat")
	waitJS(t, pg, `() => location.pathname === '/' && document.querySelector('.welcome textarea[name=text]') !== null`)
	if n := len(p.threads()); n != 1 {
		t.Fatalf("%d chats stored after New chat, want 1", n)
	}
}
