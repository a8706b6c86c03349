package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore/scripted"
)

// docsServer is a streamable-HTTP MCP server with one tool, lookup.
func docsServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "lookup", Description: "Look a topic up in the team's docs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Topic string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The docs on " + in.Topic + ": Parley is written in Go."}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// In Settings: a provider's address and key are saved (the key never
// comes back to the page) and its connection test answers; an MCP server
// added there turns ready with its tools, live; the theme switches; and
// the model calls the server's tool in a chat, after approval.
func TestSettingsProvidersAndMCP(t *testing.T) {
	docs := docsServer(t) // closed after Parley: its client's stream ends first
	p := startParley(t)
	pg := p.page("/settings")
	const key = "sk-e2e-never-shown-0123456789wxyz"
	// Datastar has bound the page once the server list's stream is live.
	const live = `document.querySelector('#mcp-servers[data-live]') !== null`

	waitJS(t, pg, `() => `+live)

	// A provider: address, key, connection test.
	pg.MustElement("#base-openai-compatible").MustInput(p.Model.URL())
	pg.MustElement(`#provider-openai-compatible form[action$="/base"] button`).MustClick()
	waitJS(t, pg, `() => `+live+` && document.querySelector('[data-flash="openai-compatible"]')?.innerText.includes('Address saved')`)
	pg.MustElement(`#provider-openai-compatible input[name=key]`).MustInput(key)
	pg.MustElement(`#provider-openai-compatible form[action$="/key"] button`).MustClick()
	waitJS(t, pg, `() => `+live+` && document.querySelector('#provider-openai-compatible [data-key-status]')?.innerText.includes('ends in wxyz')`)
	if html := evalString(pg, `() => document.documentElement.outerHTML`); strings.Contains(html, key) || strings.Contains(html, key[:16]) {
		t.Fatal("the page shows the saved key")
	}
	pg.MustElement(`[data-test="openai-compatible"]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#test-openai-compatible.ok')?.innerText.includes('connected: 1 models offered')`)
	pg.MustElement(`[data-test="anthropic"]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#test-anthropic.failed')?.innerText.includes('ANTHROPIC_API_KEY')`)

	// An MCP server: added, then ready with its tool, without a reload.
	pg.MustElement(`#mcp-form input[name=name]`).MustInput("docs")
	pg.MustElement(`#mcp-form input[name=url]`).MustInput(docs)
	pg.MustElement("#mcp-save").MustClick()
	waitJS(t, pg, `() => `+live+` && document.querySelector('[data-flash="mcp"]')?.innerText.includes('Saved docs')`)
	waitJS(t, pg, `() => document.querySelector('[data-mcp="docs"][data-state="ready"] [data-tool="docs_lookup"]') !== null`)
	pg.MustReload()
	waitJS(t, pg, `() => `+live)
	if got := evalString(pg, `() => document.querySelector('#policy-mcp').innerText`); !strings.Contains(got, "docs_lookup") {
		t.Fatalf("the mcp approval row does not list the tool: %q", got)
	}
	pg.MustElement("#appearance").MustScrollIntoView()
	pg.MustScreenshot(artifact("settings-light.png"))
	pg.MustElement("#mcp").MustScrollIntoView()
	pg.MustScreenshot(artifact("settings-mcp-light.png"))

	// The theme: applied at once, kept for every page after.
	bg := func() string { return evalString(pg, `() => getComputedStyle(document.body).backgroundColor`) }
	light := bg()
	pg.MustElement("#theme").MustSelect("Dark")
	waitJS(t, pg, `(light) => getComputedStyle(document.body).backgroundColor !== light`, light)
	pg.MustElement("#appearance").MustScrollIntoView()
	pg.MustScreenshot(artifact("settings-dark.png"))
	pg.MustElement("#mcp").MustScrollIntoView()
	pg.MustScreenshot(artifact("settings-mcp-dark.png"))
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) { // the theme's post lands
		raw, _, _ := p.In.Store.GetSetting(context.Background(), "preferences")
		if strings.Contains(string(raw), `"theme":"dark"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the theme was not saved: %s", raw)
		}
	}
	chat := p.page("/")
	waitJS(t, chat, `() => document.documentElement.dataset.theme === 'dark'`)

	// The model calls the server's tool in a chat.
	id := p.newThread()
	p.Model.Push(
		scripted.Reply{Text: "Let me check the docs.", ToolCalls: []scripted.ToolCall{{ID: "m1", Name: "docs_lookup", Args: `{"topic":"languages"}`}}},
		scripted.Reply{Text: "Parley is written in Go."},
	)
	cp := p.page("/t/" + id)
	cp.MustElement("#draft").MustInput("what is Parley written in?")
	cp.Keyboard.MustType(input.Enter)
	card := p.card("m1")
	waitJS(t, cp, `() => `+card+`?.querySelector('[data-approval]')?.innerText.includes('“mcp” category')`)
	cp.MustElement(p.sel("m1") + ` .approve-once`).MustClick()
	waitJS(t, cp, `() => `+card+`.dataset.state === 'done'`)
	if got := evalString(cp, `() => `+card+`.querySelector('.tool-result').textContent`); !strings.Contains(got, "The docs on languages: Parley is written in Go.") {
		t.Fatalf("tool result shown: %q", got)
	}
	waitJS(t, cp, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Parley is written in Go.')`)
	// What the model was sent: the tool, and then its result.
	reqs := p.Model.Requests()
	var offered bool
	for _, tl := range reqs[0].Tools {
		offered = offered || tl.Function.Name == "docs_lookup"
	}
	if !offered || !strings.Contains(string(reqs[len(reqs)-1].Body), "Parley is written in Go.") {
		t.Fatalf("the model was not offered the tool or not sent its result")
	}
}
