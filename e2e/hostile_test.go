package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/components"
)

// payload is a value an attacker controls — an id in a shared file, a
// provider's tool-call id, an MCP tool's name, a file name — built to run
// if it were ever joined into a Datastar expression: it breaks out of a
// '…', "…" or `…` literal, a template, a script element or a line, then
// sets window.__pwned and fetches a canary address.
func payloads() []string {
	run := func(n int) string { return fmt.Sprintf("window.__pwned=%d;fetch('/canary/%d')", n, n) }
	return []string{
		`');` + run(1) + `;('`,
		`");` + strings.ReplaceAll(run(2), "'", `"`) + `;("`,
		`\');` + run(3) + `;//`,
		`</script><script>` + run(4) + `</script>`,
		"\u2028');" + run(5) + ";('\u2029",
		"`+(" + strings.ReplaceAll(run(6), ";", ",") + ")+`",
		"${" + strings.ReplaceAll(run(7), ";", ",") + "}",
	}
}

// canary watches a page for what a payload does: a request to /canary/…
// (caught by the page's own request interception, before the network) and
// the window flag.
type canary struct {
	t    *testing.T
	hits atomic.Int64
	last atomic.Value
}

// openWatched opens u (logged in) in a fresh context with the canary armed
// before the first request.
func (c *canary) openWatched(u string) *rod.Page {
	c.t.Helper()
	pg := incognito(c.t).MustPage("")
	router := pg.HijackRequests()
	router.MustAdd("*/canary/*", func(h *rod.Hijack) {
		c.hits.Add(1)
		c.last.Store(h.Request.URL().String())
		h.Response.SetBody("")
	})
	go router.Run()
	c.t.Cleanup(func() { _ = router.Stop() })
	// A payload that asks must not hold the test: every dialog is dismissed.
	pg.MustEvalOnNewDocument(`window.prompt = () => null; window.confirm = () => false; window.alert = () => {};`)
	pg.MustNavigate(signedIn(u))
	pg.MustWaitLoad()
	return pg
}

// clean fails the test if anything a payload does happened on pg.
func (c *canary) clean(pg *rod.Page, where string) {
	c.t.Helper()
	time.Sleep(300 * time.Millisecond) // a stray request would be on its way by now
	if v := pg.MustEval(`() => window.__pwned === undefined ? '' : String(window.__pwned)`).String(); v != "" {
		c.t.Fatalf("%s: a payload ran (window.__pwned = %s)", where, v)
	}
	if n := c.hits.Load(); n > 0 {
		c.t.Fatalf("%s: %d requests to the canary, the last %v", where, n, c.last.Load())
	}
}

// clickEverything clicks every button and submits every form of the page,
// with something typed in every empty text field, as a curious user would;
// dialogs answer "cancel". What the clicks do is not checked here, only
// that no payload runs.
func clickEverything(t *testing.T, pg *rod.Page, root string) {
	t.Helper()
	pg.MustEval(`async (root) => {
		const scope = document.querySelector(root) || document;
		for (const f of scope.querySelectorAll('textarea, input[type=text], input:not([type])')) if (!f.value) f.value = 'x';
		const els = [...scope.querySelectorAll('button, [data-on\\:click]')];
		for (const el of els) {
			if (!el.isConnected || el.closest('form[data-confirm]') || el.id === 'send' || el.id === 'send-now') continue;
			// A button that would submit a plain form leaves the page: not a
			// place an expression runs.
			// Fork posts the page's one plain form (app.js) the same way.
			const plain = el.form && !el.form.getAttributeNames().some(n => n.startsWith('data-on:submit'));
			if (plain && el.type === 'submit' || el.matches('button.msg-fork[data-fork]')) continue;
			try { el.click(); } catch (e) {}
			await new Promise(r => setTimeout(r, 40));
		}
		for (const f of scope.querySelectorAll('form')) {
			if (!f.isConnected || f.hasAttribute('data-confirm') || f.id === 'composer' || !f.getAttributeNames().some(n => n.startsWith('data-on:submit'))) continue;
			try { f.requestSubmit(); } catch (e) {}
			await new Promise(r => setTimeout(r, 40));
		}
	}`, root)
}

// hostileMCP serves tools whose names and descriptions carry the payloads.
func hostileMCP(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1.0.0"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}) // it logs each bad name
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	answer := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: payloads()[0]}}}, nil
	}
	for _, p := range payloads() {
		srv.AddTool(&mcp.Tool{Name: p, Description: p, InputSchema: empty}, answer)
	}
	srv.AddTool(&mcp.Tool{Name: "fine", Description: strings.Join(payloads(), " "), InputSchema: empty}, answer)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// The attack of issue 10, tried on every screen: a chat imported with
// hostile thread and message ids, a provider whose tool-call ids are
// hostile (a question, an approval, a plan, read-only calls), a workspace
// file and an MCP server's tools named with the same payloads. Every screen
// is opened and every button on it clicked; the canary never fires. First,
// the canary is shown to fire on an expression joined the old way.
func TestHostileIDsNeverRun(t *testing.T) {
	mcpURL := hostileMCP(t)
	p := startParley(t)
	c := &canary{t: t}
	pl := payloads()

	// A workspace file named with a payload ("/" cannot be in a name).
	fileName := strings.ReplaceAll(pl[0], "/", "_") + ".txt"
	if err := os.WriteFile(filepath.Join(p.dir, fileName), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// 1. The imported chat: ids carrying every payload, text too.
	var imported string
	for i, bad := range pl {
		body := hostileThreadFile(t, bad, strings.Join(pl, "\n\n"))
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/api/memory/threads/import", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Threads     []struct{ ID string }
			ReplacedIDs int    `json:"replacedIds"`
			Note        string `json:"note"`
		}
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(res.Threads) != 1 || res.ReplacedIDs == 0 || !strings.Contains(res.Note, "were replaced") {
			t.Fatalf("import of payload %d: %d %+v %v", i, resp.StatusCode, res, err)
		}
		imported = res.Threads[0].ID
	}

	// The canary works: an expression joined the old way runs the payload
	// as soon as it is clicked.
	pg := c.openWatched(p.URL + "/t/" + imported)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	pg.MustEval(`(bad) => {
		const b = document.createElement('button');
		b.id = 'joined-the-old-way';
		b.setAttribute('data-on:click', "@post('/t/" + bad + "/pin')");
		document.body.append(b);
	}`, pl[0])
	waitJS(t, pg, `() => document.querySelector('#joined-the-old-way') !== null`)
	time.Sleep(100 * time.Millisecond) // Datastar binds added elements on its next tick
	pg.MustElement("#joined-the-old-way").MustClick()
	waitJS(t, pg, `() => window.__pwned === 1`)
	deadline := time.Now().Add(waitTimeout)
	for c.hits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c.hits.Load() == 0 {
		t.Fatal("the canary missed a payload that ran: the test could not see an attack")
	}
	c.hits.Store(0)

	// The imported chat itself: opened, every button clicked.
	pg = c.openWatched(p.URL + "/t/" + imported)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	if got := evalString(pg, `() => document.querySelector('#messages').innerText`); !strings.Contains(got, "window.__pwned=4") {
		t.Fatalf("the payloads are not shown as text: %q", got)
	}
	c.clean(pg, "imported chat, opened")
	clickEverything(t, pg, "#sidebar")
	clickEverything(t, pg, "#chat")
	c.clean(pg, "imported chat, every button clicked")

	// 2. A provider that names its tool calls with the payloads.
	th := p.newThread()
	p.Model.Push(
		scripted.Reply{Text: "Looking around.", ToolCalls: []scripted.ToolCall{
			{ID: pl[0], Name: "find_files", Args: `{"pattern":"*.txt"}`},
			{ID: pl[1], Name: "view", Args: mustArgs(t, map[string]any{"path": fileName})},
		}, ExactIDs: true},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: pl[2], Name: "write_file", Args: mustArgs(t, map[string]any{"path": "out-" + fileName, "content": pl[3]})}}, ExactIDs: true},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: pl[3], Name: "ask_user", Args: mustArgs(t, map[string]any{
			"question": pl[4], "options": []map[string]string{{"label": pl[5], "description": pl[6]}, {"label": "plain"}}})}}, ExactIDs: true},
		scripted.Reply{Text: "Done: " + pl[6]},
	)
	pg = c.openWatched(p.URL + "/t/" + th)
	sendMsg(t, pg, "look around")
	const approval = `document.querySelector('[data-tool-name="write_file"][data-state="suspended"] .approve-once')`
	waitJS(t, pg, `() => `+approval+` !== null`)
	c.clean(pg, "approval card")
	pg.MustElement(`[data-tool-name="write_file"] .approve-once`).MustClick()
	waitJS(t, pg, `() => document.querySelector('[data-tool-name="ask_user"][data-state="suspended"] .q-option') !== null`)
	c.clean(pg, "question card")
	pg.MustElement(`[data-tool-name="ask_user"] .q-option`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Done:')`)
	for _, m := range p.messages(th) {
		for _, part := range m.Content.Parts {
			if ti := part.ToolInvocation; ti != nil && strings.ContainsAny(ti.ToolCallID, `'"\<$`+"`") {
				t.Fatalf("a provider's call id was stored as it came: %q", ti.ToolCallID)
			}
		}
	}
	clickEverything(t, pg, "#chat")
	c.clean(pg, "chat with the provider's calls, every button clicked")

	// 3. A plan submitted under a payload id, approved.
	plan := p.newThread()
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: pl[4], Name: "write_file",
			Args: mustArgs(t, map[string]any{"path": ".parley/plans/p.md", "content": "# " + pl[5] + "\n\n1. " + pl[6] + "\n"})}}, ExactIDs: true},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: pl[5], Name: "submit_plan", Args: `{"path":".parley/plans/p.md"}`}}, ExactIDs: true},
		scripted.Reply{Text: "Implementing."},
	)
	pg = c.openWatched(p.URL + "/t/" + plan)
	pg.MustElement(`#mode-switch [data-mode=plan]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=plan]').classList.contains('active')`)
	sendMsg(t, pg, "plan it")
	waitJS(t, pg, `() => document.querySelector('[data-tool-name="submit_plan"][data-state="suspended"] .plan-approve') !== null`)
	c.clean(pg, "plan card")
	pg.MustElement(".plan-approve").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Implementing.')`)
	c.clean(pg, "plan approved")

	// 4. The inbox, with a waiting approval and question under payload ids,
	// answered there; then every button in it.
	waiting := p.newThread()
	p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: pl[6], Name: "write_file", Args: mustArgs(t, map[string]any{"path": "inbox-" + fileName, "content": "x"})}}, ExactIDs: true})
	p.Model.Push(scripted.Reply{Text: "Denied, fine."})
	if _, err := p.In.Runtime.Send(context.Background(), agentcore.SendRequest{ThreadID: waiting, Text: "write it"}); err != nil {
		t.Fatal(err)
	}
	pg = c.openWatched(p.URL + "/settings")
	pg.MustElement("#inbox-bell").MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-panel .inbox-deny') !== null`)
	c.clean(pg, "inbox")
	pg.MustElement("#inbox-panel .inbox-deny").MustClick()
	waitJS(t, pg, `() => document.querySelector('#inbox-panel .inbox-deny') === null`)
	clickEverything(t, pg, "#inbox-panel")
	c.clean(pg, "inbox, every button clicked")

	// 5. Search: the payloads as the query and in the hits.
	pg = c.openWatched(p.URL + "/")
	pg.KeyActions().Press(input.ControlLeft).Type('k').MustDo()
	waitJS(t, pg, `() => document.activeElement?.id === 'search-q'`)
	pg.MustElement("#search-q").MustInput("pwned")
	waitJS(t, pg, `() => document.querySelectorAll('.search-hit').length > 0`)
	c.clean(pg, "search hits")
	pg.MustElement(".search-hit").MustClick()
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	c.clean(pg, "a search hit opened")

	// 6. Settings: an MCP server whose tools are named with the payloads.
	pg = c.openWatched(p.URL + "/settings")
	waitJS(t, pg, `() => document.querySelector('#mcp-servers[data-live]') !== null`)
	pg.MustElement(`#mcp-form input[name=name]`).MustInput("hostile")
	pg.MustElement(`#mcp-form input[name=url]`).MustInput(mcpURL)
	pg.MustElement("#mcp-save").MustClick()
	waitJS(t, pg, `() => document.querySelector('[data-mcp="hostile"][data-state="ready"] [data-tool="hostile_fine"]') !== null`)
	if got := evalString(pg, `() => document.querySelector('[data-mcp="hostile"]').innerText`); !strings.Contains(got, "MCP rule for tool names") {
		t.Fatalf("the refused tool names are not said: %q", got)
	}
	c.clean(pg, "settings with the MCP server")
	clickEverything(t, pg, "main")
	c.clean(pg, "settings, every button clicked")
}

// hostileThreadFile is a Parley export whose thread id and message ids are
// bad, with text as its messages' text and title.
func hostileThreadFile(t *testing.T, bad, text string) []byte {
	t.Helper()
	msg := func(id, role string) map[string]any {
		return map[string]any{"id": id, "threadId": bad, "resourceId": "default", "role": role,
			"content": map[string]any{"format": 2, "parts": []any{map[string]any{"type": "text", "text": text}}}, "createdAt": "2026-03-04T10:00:00Z"}
	}
	f := map[string]any{"format": "parley.thread", "version": 1, "exportedAt": "2026-03-04T10:00:00Z",
		"thread":   map[string]any{"id": bad, "resourceId": "default", "title": text[:60], "createdAt": "2026-03-04T10:00:00Z", "updatedAt": "2026-03-04T10:00:00Z"},
		"messages": []any{msg(bad, "user"), msg(bad+"2", "assistant")}}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What components.Expr puts in an attribute is, in Chromium, exactly the
// value given: the payloads, every character class, and a thousand random
// strings (the browser half of components.FuzzExpr).
func TestExprValuesInTheBrowser(t *testing.T) {
	p := startParley(t)
	c := &canary{t: t}
	values := append(payloads(), "", "\x00", "\r\n", "\t", "\\", "\u2028\u2029", "\uFEFF", "😀", "\U0010FFFF", "&amp;", "<b>", "]]>", "-->")
	r := rand.New(rand.NewPCG(10, 2026))
	for range 1000 {
		b := make([]rune, r.IntN(24))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = rune(r.IntN(0x80))
			case 1:
				special := []rune(`'"\<>&$` + "`{}\u2028\u2029")
				b[i] = special[r.IntN(len(special))]
			case 2:
				b[i] = rune(r.IntN(0x10000))
			default:
				b[i] = rune(0x10000 + r.IntN(0x100000))
			}
			if !utf8.ValidRune(b[i]) {
				b[i] = 'x'
			}
		}
		values = append(values, string(b))
	}
	var html strings.Builder
	for i, v := range values {
		fmt.Fprintf(&html, `<button class="expr-probe" data-i="%d" data-on:click="%s"></button>`, i, templ.EscapeString(components.Expr("window.__got[el.dataset.i] = %s", v)))
	}
	pg := c.openWatched(p.URL + "/settings")
	waitJS(t, pg, `() => document.querySelector('#mcp-servers[data-live]') !== null`)
	pg.MustEval(`(html) => { window.__got = {}; const d = document.createElement('div'); d.id = 'probes'; d.innerHTML = html; document.body.append(d); }`, html.String())
	time.Sleep(200 * time.Millisecond) // Datastar binds added elements on its next tick
	got := pg.MustEval(`() => { for (const b of document.querySelectorAll('.expr-probe')) b.click(); return window.__got; }`)
	answers := got.Map()
	for i, v := range values {
		want := strings.ToValidUTF8(v, "\uFFFD")
		g, ok := answers[fmt.Sprint(i)]
		if !ok || g.String() != want {
			t.Errorf("value %d %q reads %q in the browser", i, v, g.String())
		}
	}
	c.clean(pg, "expression probes")
}
