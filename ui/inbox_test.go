package ui_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// inboxPage reads the inbox stream's first patch: the bell and the list.
func (e *apiEnv) inboxPage() string {
	e.t.Helper()
	resp := e.send("GET", "/inbox/stream", "")
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 8192)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if strings.Contains(b.String(), `id="inbox-list"`) && strings.Contains(b.String(), "</ul>") {
			break
		}
		if err != nil {
			break
		}
	}
	return b.String()
}

func count(page string) string {
	i := strings.Index(page, `id="inbox-count" class="inbox-count">`)
	if i < 0 {
		return "0"
	}
	rest := page[i+len(`id="inbox-count" class="inbox-count">`):]
	return rest[:strings.Index(rest, "<")]
}

func TestInboxListsFailedRunsAndSetsAside(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	e.model.Push(scripted.Reply{Status: 400, ErrorBody: `{"error":{"message":"model overloaded today"}}`})
	e.call("POST", "/api/agents/parley/send-message", `{"message":"go","resourceId":"me","threadId":"`+th+`"}`, 200)
	waitThread(t, e, th)
	page := e.inboxPage()
	if count(page) != "1" || !strings.Contains(page, `data-kind="failed"`) || !strings.Contains(page, "model overloaded today") {
		t.Fatalf("inbox with a failed run: count %s\n%s", count(page), page)
	}
	if !strings.Contains(page, `class="btn btn-small btn-send inbox-retry"`) || !strings.Contains(page, `@post(&#34;/t/`+th+`/retry&#34;)`) {
		t.Fatalf("a failed run offers no Retry in its chat:\n%s", page)
	}
	i := strings.Index(page, `data-key="run/`)
	key := page[i+len(`data-key="`):]
	key = key[:strings.Index(key, `"`)]

	// Not now hides it for a while; dismiss for good.
	resp := e.send("POST", "/inbox/act", `{"key":"`+key+`","action":"snooze"}`)
	if resp.StatusCode != 204 {
		t.Fatalf("snooze: %d", resp.StatusCode)
	}
	if c := count(e.inboxPage()); c != "0" {
		t.Fatalf("after snooze count %s", c)
	}
	for body, want := range map[string]int{
		`{"key":"` + key + `","action":"archive"}`:    400, // only notifications archive
		`{"key":"bogus","action":"dismiss"}`:          400,
		`{"key":"n/` + th + `/nope","action":"seen"}`: 404,
		`not json`: 400,
	} {
		if resp := e.send("POST", "/inbox/act", body); resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", body, resp.StatusCode, want)
		}
	}

	// A later run that worked makes the failure history.
	e.model.Push(scripted.Reply{Text: "fine now"})
	e.call("POST", "/api/agents/parley/send-message", `{"message":"again","resourceId":"me","threadId":"`+th+`"}`, 200)
	waitThread(t, e, th)
	if resp := e.send("POST", "/inbox/act", `{"key":"`+key+`","action":"dismiss"}`); resp.StatusCode != 204 {
		t.Fatalf("dismiss %d", resp.StatusCode)
	}
	if c := count(e.inboxPage()); c != "0" {
		t.Fatalf("count %s", c)
	}
}

// A failure retried lists no more; if the retry fails too, only it does.
func TestInboxFailedRetryListsOnce(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	e.model.Push(scripted.Reply{Status: 400, ErrorBody: `{"error":{"message":"first failure"}}`},
		scripted.Reply{Status: 400, ErrorBody: `{"error":{"message":"second failure"}}`})
	e.call("POST", "/api/agents/parley/send-message", `{"message":"go","resourceId":"me","threadId":"`+th+`"}`, 200)
	waitThread(t, e, th)
	resp := e.send("POST", "/t/"+th+"/retry", "")
	resp.Body.Close()
	waitThread(t, e, th)
	page := e.inboxPage()
	if count(page) != "1" || strings.Contains(page, "first failure") || !strings.Contains(page, "second failure") {
		t.Fatalf("after a failed retry: count %s\n%s", count(page), page)
	}
}

func TestInboxNotificationsAndFocus(t *testing.T) {
	e := newAPIEnv(t, func(a *agentcore.Agent) {
		a.DeliveryPolicy = &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}
	})
	th := e.thread()
	e.call("POST", "/api/notifications", `{"threadId":"`+th+`","source":"ci","kind":"build","priority":"urgent","summary":"Build <b>9</b> failed","payload":{"url":"https://ci.example/9?a=1&b=2"}}`, 201)
	e.call("POST", "/api/notifications", `{"threadId":"`+th+`","source":"ci","kind":"lint","summary":"Lint","payload":{"url":"javascript:alert(1)"}}`, 201)
	page := e.inboxPage()
	if !strings.Contains(page, `href="https://ci.example/9?a=1&amp;b=2"`) || strings.Contains(page, "javascript:") {
		t.Fatalf("links: only the http(s) one is offered:\n%s", page)
	}
	if count(page) != "2" || !strings.Contains(page, "Build &lt;b&gt;9&lt;/b&gt; failed") || !strings.Contains(page, "data-alert") {
		t.Fatalf("inbox page:\n%s", page)
	}
	if strings.Contains(page, "<b>9</b>") {
		t.Fatal("a notification's summary reached the page unescaped")
	}

	if e.srv.Focused() {
		t.Fatal("focused before any page said so")
	}
	for body, want := range map[string]int{`{"page":"a","focused":true}`: 204, `{"page":"b","focused":true}`: 204, `{"focused":true}`: 400} {
		if resp := e.send("POST", "/inbox/focus", body); resp.StatusCode != want {
			t.Fatalf("%s: %d", body, resp.StatusCode)
		}
	}
	if !e.srv.Focused() {
		t.Fatal("two focused pages, Focused() is false")
	}
	e.send("POST", "/inbox/focus", `{"page":"a","focused":false}`)
	if !e.srv.Focused() {
		t.Fatal("page b still has the focus")
	}
	e.send("POST", "/inbox/focus", `{"page":"b","focused":false}`)
	if e.srv.Focused() {
		t.Fatal("no page has the focus, Focused() is true")
	}
}

// Taking back a message the agent has read, or one that is not there, and
// retrying a reply that did not fail, say so in the composer and change
// nothing.
func TestUnsendRefusals(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	e.model.Push(scripted.Reply{Text: "read it"})
	v := e.call("POST", "/api/agents/parley/send-message", `{"message":"hello","resourceId":"me","threadId":"`+th+`"}`, 200)
	waitThread(t, e, th)
	id, _ := get(v, "signal", "id").(string)
	for path, want := range map[string]string{
		"/t/" + th + "/unsend/" + id: "Not taken back: the agent has already read that message.",
		"/t/" + th + "/unsend/nope":  "Not taken back: message nope of thread " + th + ": not found",
		"/t/" + th + "/retry":        "Not retried: nothing to retry: the chat&#39;s last reply did not fail and was not stopped",
		"/t/nope/retry":              "Not retried: retry in thread nope: ",
	} {
		resp := e.send("POST", path, "")
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s answered:\n%s\nwant %q", path, raw, want)
		}
	}
	msgs := e.call("GET", "/api/memory/threads/"+th+"/messages", "", 200)
	if n := len(get(msgs, "messages").([]any)); n != 2 {
		t.Fatalf("%d messages after refused take-backs, want 2", n)
	}
}

// "Mark all seen" clears the unread notifications of the chosen source and
// priority, those past the newest listed included; nothing else.
func TestInboxSeenAll(t *testing.T) {
	e := newAPIEnv(t, func(a *agentcore.Agent) {
		a.DeliveryPolicy = &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}
	})
	th := e.thread()
	e.call("POST", "/api/notifications", `{"threadId":"`+th+`","source":"ci","kind":"build","priority":"urgent","summary":"Build failed"}`, 201)
	e.call("POST", "/api/notifications", `{"threadId":"`+th+`","source":"ci","kind":"lint","priority":"low","summary":"Lint warnings"}`, 201)
	e.call("POST", "/api/notifications", `{"threadId":"`+th+`","source":"mail","kind":"inbox","priority":"urgent","summary":"Mail from Ana"}`, 201)
	page := e.inboxPage()
	if count(page) != "3" || !strings.Contains(page, `id="inbox-seen-all"`) || strings.Contains(page, `id="inbox-older"`) {
		t.Fatalf("three notifications: count %s\n%s", count(page), page)
	}
	for body, want := range map[string]int{`{"priority":"loud"}`: 400, `not json`: 400} {
		if resp := e.send("POST", "/inbox/seen-all", body); resp.StatusCode != want {
			t.Errorf("seen-all %s: %d, want %d", body, resp.StatusCode, want)
		}
	}
	if c := count(e.inboxPage()); c != "3" {
		t.Fatalf("a refused seen-all changed the inbox: count %s", c)
	}
	if resp := e.send("POST", "/inbox/seen-all", `{"source":"ci","priority":"urgent"}`); resp.StatusCode != 204 {
		t.Fatalf("seen-all ci/urgent: %d", resp.StatusCode)
	}
	page = e.inboxPage()
	if count(page) != "2" || strings.Contains(page, "Build failed") || !strings.Contains(page, "Lint warnings") || !strings.Contains(page, "Mail from Ana") {
		t.Fatalf("after seen-all ci/urgent: count %s\n%s", count(page), page)
	}

	// Past the newest listed: the list says more wait, and seen-all clears them.
	for i := range 201 {
		if _, err := e.rt.Notify(t.Context(), agentcore.NotificationInput{Source: "bulk", Kind: "tick", Summary: fmt.Sprintf("tick %d", i)},
			agentcore.NotifyTarget{ThreadID: th}); err != nil {
			t.Fatal(err)
		}
	}
	page = e.inboxPage()
	if !strings.Contains(page, `id="inbox-older"`) || strings.Contains(page, "Mail from Ana") {
		t.Fatalf("203 unread: the oldest are not listed and the list says so\n%.2000s", page)
	}
	if resp := e.send("POST", "/inbox/seen-all", `{"source":"","priority":""}`); resp.StatusCode != 204 {
		t.Fatalf("seen-all: %d", resp.StatusCode)
	}
	page = e.inboxPage()
	if count(page) != "0" || strings.Contains(page, `id="inbox-seen-all"`) || strings.Contains(page, `id="inbox-older"`) {
		t.Fatalf("after seen-all: count %s\n%s", count(page), page)
	}
	ns, err := e.rt.Notifications(t.Context(), agentcore.NotificationQuery{Statuses: []agentcore.NotificationStatus{agentcore.NoteSeen}})
	if err != nil || len(ns) != 204 {
		t.Fatalf("seen notifications: %d, %v; want 204", len(ns), err)
	}
}

// A reply's text is served as stored, for its Copy button; only from its
// own chat.
func TestMessageText(t *testing.T) {
	e := newAPIEnv(t)
	th, other := e.thread(), e.thread()
	e.model.Push(scripted.Reply{Text: "**Bold** and `code`"})
	e.call("POST", "/api/agents/parley/send-message", `{"message":"hello","resourceId":"me","threadId":"`+th+`"}`, 200)
	waitThread(t, e, th)
	msgs := get(e.call("GET", "/api/memory/threads/"+th+"/messages", "", 200), "messages").([]any)
	reply, _ := msgs[len(msgs)-1].(map[string]any)["id"].(string)
	for path, want := range map[string]struct {
		status int
		body   string
	}{
		"/t/" + th + "/messages/" + reply + "/text":    {200, "**Bold** and `code`"},
		"/t/" + other + "/messages/" + reply + "/text": {404, "is not in chat " + other},
		"/t/" + th + "/messages/nope/text":             {404, "not found"},
	} {
		resp := e.send("GET", path, "")
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want.status || !strings.Contains(string(raw), want.body) {
			t.Errorf("GET %s: %d %q, want %d with %q", path, resp.StatusCode, raw, want.status, want.body)
		}
	}
}
