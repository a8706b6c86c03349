package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
)

// bearer sends a fixed Authorization header (a wrong token, or none: "-").
type bearer struct{ value string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.value)
	return http.DefaultTransport.RoundTrip(r) // tokenTransport: "-" is no header
}

// mcpClient connects an MCP client (the official go-sdk) to a Parley, as
// another agent would: the token as a Bearer header.
func mcpClient(t *testing.T, base, authorization string) (*mcp.ClientSession, error) {
	t.Helper()
	var rt http.RoundTripper = http.DefaultTransport // tokenTransport adds the right token
	if authorization != "" {
		rt = bearer{authorization}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/api/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// callTool calls a tool and returns its text, its structured result and
// whether it is a tool error; a protocol failure fails the test.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol failure: %v", name, args, err)
	}
	return toolText(res), structured(t, res), res.IsError
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.StructuredContent == nil {
		return nil
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// Every tool from an outside MCP client: chats listed and read, a
// notification filed (deduplicated, hostile text shown as text), every
// kind of bad argument a tool error that names it, a wrong token refused.
func TestMCPServerTools(t *testing.T) {
	p := startParley(t)
	if _, err := mcpClient(t, p.URL, "Bearer not-the-token"); err == nil {
		t.Fatal("a wrong token was let in")
	}
	if _, err := mcpClient(t, p.URL, "-"); err == nil {
		t.Fatal("no token was let in")
	}
	cs, err := mcpClient(t, p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"list_chats", "read_chat", "notify", "ask_user", "request_approval"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	id := p.newThread()
	code, body := p.postJSON(t, "/api/agents/parley/generate", `{"messages":"Hello <script>x</script>","memory":{"thread":"`+id+`","resource":"default"}}`)
	if code != 200 {
		t.Fatalf("generate: %d %s", code, body)
	}
	_, out, isErr := callTool(t, cs, "list_chats", map[string]any{"limit": 5})
	if isErr || !strings.Contains(mustJSON(out), `"id":"`+id+`"`) || !strings.Contains(mustJSON(out), "updatedAt") {
		t.Fatalf("list_chats: %v", out)
	}
	text, out, isErr := callTool(t, cs, "read_chat", map[string]any{"threadId": id})
	if isErr || !strings.Contains(text, "[user · complete") || !strings.Contains(text, "Hello <script>x</script>") ||
		!strings.Contains(text, "[assistant · complete") || !strings.Contains(text, "Default scripted reply.") {
		t.Fatalf("read_chat: %q", text)
	}
	if out["messages"] != float64(2) || out["before"] != nil {
		t.Fatalf("read_chat of two messages: %v", out)
	}
	// Paged: one message, then the one before it.
	text, out, _ = callTool(t, cs, "read_chat", map[string]any{"threadId": id, "limit": 1})
	if !strings.Contains(text, "assistant") || out["before"] == nil {
		t.Fatalf("read_chat page 1: %q %v", text, out)
	}
	text, out, _ = callTool(t, cs, "read_chat", map[string]any{"threadId": id, "limit": 1, "before": out["before"]})
	if !strings.Contains(text, "[user") || out["before"] != nil {
		t.Fatalf("read_chat page 2: %q %v", text, out)
	}

	hostile := `<img src=x onerror=alert(1)>`
	_, note, isErr := callTool(t, cs, "notify", map[string]any{"threadId": id, "summary": hostile, "priority": "low", "kind": "probe",
		"dedupeKey": "probe-1", "payload": map[string]any{"n": 1}})
	if isErr || note["id"] == "" {
		t.Fatalf("notify: %v", note)
	}
	_, again, _ := callTool(t, cs, "notify", map[string]any{"threadId": id, "summary": hostile, "priority": "low", "kind": "probe", "dedupeKey": "probe-1"})
	if again["id"] != note["id"] || again["coalescedCount"] != float64(2) {
		t.Fatalf("the same dedupeKey made a second notification: %v then %v", note, again)
	}

	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_chats", map[string]any{"limit": 100000}, "limit must be between 1 and 200"},
		{"list_chats", map[string]any{"limit": "ten"}, "limit"},
		{"list_chats", map[string]any{"extra": 1}, "extra"},
		{"read_chat", map[string]any{}, "threadId"},
		{"read_chat", map[string]any{"threadId": "../../etc"}, "threadId must be a chat id"},
		{"read_chat", map[string]any{"threadId": "nope"}, "no chat has id nope"},
		{"read_chat", map[string]any{"threadId": id, "limit": -1}, "limit must be between"},
		{"notify", map[string]any{"threadId": id, "summary": " "}, "summary is required"},
		{"notify", map[string]any{"threadId": id, "summary": "x", "priority": "critical"}, `invalid priority "critical"`},
		{"notify", map[string]any{"threadId": id, "summary": strings.Repeat("x", 5000)}, "summary is 5000 bytes"},
		{"notify", map[string]any{"threadId": id, "summary": "x", "payload": strings.Repeat("x", 300<<10)}, "payload is"},
		{"notify", map[string]any{"threadId": "nope", "summary": "x"}, "no chat has id nope"},
		{"ask_user", map[string]any{"threadId": id, "question": ""}, "the question is empty"},
		{"ask_user", map[string]any{"threadId": id, "question": "q", "id": "a b"}, "id must be"},
		{"ask_user", map[string]any{"threadId": id, "question": "q", "options": []string{""}}, "options[0]"},
		{"ask_user", map[string]any{"threadId": "nope", "question": "q"}, "no chat has id nope"},
		{"request_approval", map[string]any{"threadId": id, "action": strings.Repeat("y", 5000)}, "more than the 4000 allowed"},
	}
	for _, c := range bad {
		text, _, isErr := callTool(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s(%.80v): isError %v, %q; want an error naming %q", c.tool, c.args, isErr, text, c.want)
		}
	}

	// The hostile summary is text in the inbox, never an element.
	pg := p.page("/t/" + id)
	sel := `li.inbox-item[data-key^="n/` + id + `/"] .inbox-title`
	waitJS(t, pg, `(sel, want) => [...document.querySelectorAll(sel)].some(e => e.textContent === want)`, sel, hostile)
	if n := evalString(pg, `() => String(document.querySelectorAll('#inbox-panel img').length)`); n != "0" {
		t.Fatalf("the summary became %s element(s)", n)
	}
	// Nothing of what was filed was stored but the one record.
	notes, err := p.In.Runtime.Notifications(context.Background(), agentcore.NotificationQuery{ThreadID: id, Sources: []string{"mcp"}})
	if err != nil || len(notes) != 1 || notes[0].SourceID != "e2e-agent" {
		t.Fatalf("notifications: %v %+v", err, notes)
	}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// askResult is what a waiting MCP call came back with.
type askResult struct {
	text  string
	out   map[string]any
	isErr bool
	err   error
}

// askAsync calls tool and reports its result on the channel.
func askAsync(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) <-chan askResult {
	ch := make(chan askResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			ch <- askResult{err: err}
			return
		}
		ch <- askResult{text: toolText(res), out: structured(t, res), isErr: res.IsError}
	}()
	return ch
}

func waitAsk(t *testing.T, ch <-chan askResult) askResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("the waiting call failed: %v", r.err)
		}
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the waiting call did not return")
	}
	return askResult{}
}

// ask_user from an outside client: the question shows in the chat's inbox
// (as text), its link opens the answer page, the user answers there, and
// the waiting MCP call returns the answer. request_approval the same way.
func TestMCPAskUserAnsweredInBrowser(t *testing.T) {
	p := startParley(t)
	cs, err := mcpClient(t, p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	question := `Deploy to <b>staging</b> or production?`
	ch := askAsync(t, cs, "ask_user", map[string]any{"threadId": id, "question": question, "options": []string{"staging", "production"}, "id": "deploy-1"})

	pg := p.page("/t/" + id)
	item := `li.inbox-item[data-key^="n/` + id + `/"]`
	waitJS(t, pg, `(sel, want) => document.querySelector(sel + ' .inbox-title')?.textContent === want`, item, question)
	link := evalString(pg, `(sel) => document.querySelector(sel + ' .inbox-link-out').href`, item)
	if !strings.HasSuffix(link, "/mcp/asks/"+url.PathEscape(id)+"/deploy-1") {
		t.Fatalf("the question links to %q", link)
	}
	pg.MustNavigate(link).MustWaitLoad()
	waitJS(t, pg, `(want) => document.querySelector('#ask-text')?.textContent === want`, question)
	if evalString(pg, `() => document.querySelector('#ask-asker').textContent`) != "e2e-agent" {
		t.Fatal("the page does not say who asks")
	}
	pg.MustElement(`#ask-option-1`).MustClick()
	clickToLoad(t, pg, `#ask-submit`)
	waitJS(t, pg, `() => document.querySelector('#ask-done') !== null`)
	r := waitAsk(t, ch)
	if r.isErr || r.out["answer"] != "production" || r.out["id"] != "deploy-1" || r.text != "User answered: production" {
		t.Fatalf("ask_user returned %+v", r)
	}
	// Answered, it leaves the inbox; the page says nobody waits any more.
	pg.MustNavigate(link).MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#ask-gone') !== null`)

	// request_approval: denied, with a reason written on the page.
	ch = askAsync(t, cs, "request_approval", map[string]any{"threadId": id, "action": "Drop the <i>users</i> table", "id": "drop-1"})
	waitFor(t, func() bool { return askWaiting(t, p, id, "drop-1") })
	pg.MustNavigate(p.URL + "/mcp/asks/" + id + "/drop-1")
	waitJS(t, pg, `() => document.querySelector('#ask-text')?.textContent === 'Drop the <i>users</i> table'`)
	pg.MustElement(`#ask-reason`).MustInput("not on a Friday")
	clickToLoad(t, pg, `#ask-deny`)
	r = waitAsk(t, ch)
	if r.isErr || r.out["approved"] != false || r.out["reason"] != "not on a Friday" {
		t.Fatalf("request_approval returned %+v", r)
	}
}

// A Parley restart while ask_user waits: the call returns a tool error
// that says to call again with the same id; called again, it waits on the
// same inbox record, and the answer reaches it.
func TestMCPAskUserAcrossRestart(t *testing.T) {
	p := startParley(t)
	cs, err := mcpClient(t, p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	args := map[string]any{"threadId": id, "question": "Which branch?", "id": "branch-1"}
	ch := askAsync(t, cs, "ask_user", args)
	waitFor(t, func() bool { return len(askNotes(t, p, id)) == 1 })
	p = p.restart()
	r := waitAsk(t, ch)
	if !r.isErr || !strings.Contains(r.text, "call again with the same id (branch-1)") {
		t.Fatalf("after a restart the waiting call returned %+v", r)
	}
	cs, err = mcpClient(t, p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	ch = askAsync(t, cs, "ask_user", args)
	waitFor(t, func() bool { return askWaiting(t, p, id, "branch-1") })
	resp, err := http.PostForm(p.URL+"/mcp/asks/"+id+"/branch-1", url.Values{"custom": {"main"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r = waitAsk(t, ch)
	if r.isErr || r.out["answer"] != "main" {
		t.Fatalf("asked again after the restart: %+v", r)
	}
	if n := askNotes(t, p, id); len(n) != 1 || n[0].CoalescedCount != 2 || n[0].Status != agentcore.NoteArchived {
		t.Fatalf("asking again made another inbox record, or left it open: %+v", n)
	}
}

// askNotes are the outside asks filed in a thread.
func askNotes(t *testing.T, p *parley, threadID string) []agentcore.Notification {
	t.Helper()
	n, err := p.In.Runtime.Notifications(context.Background(), agentcore.NotificationQuery{ThreadID: threadID, Sources: []string{"mcp-ask"}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// askWaiting reports whether the answer page offers its form.
func askWaiting(t *testing.T, p *parley, threadID, id string) bool {
	t.Helper()
	resp, err := http.Get(p.URL + "/mcp/asks/" + threadID + "/" + id)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `id="ask-form"`)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A client that cancels its waiting ask_user takes the question out of the
// inbox: nobody waits for its answer any more.
func TestMCPAskUserCancelled(t *testing.T) {
	p := startParley(t)
	cs, err := mcpClient(t, p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: map[string]any{"threadId": id, "question": "Still there?", "id": "c-1"}})
		done <- err
	}()
	waitFor(t, func() bool { return askWaiting(t, p, id, "c-1") })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	waitFor(t, func() bool {
		n := askNotes(t, p, id)
		return len(n) == 1 && n[0].Status == agentcore.NoteDismissed && !askWaiting(t, p, id, "c-1")
	})
}
