package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// colorScheme makes the page render as the OS would in light or dark.
func colorScheme(t *testing.T, pg *rod.Page, scheme string) {
	t.Helper()
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}).Call(pg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
}

// fetchFile fetches a link of the page as the browser downloads it and
// returns its body and Content-Disposition.
func fetchFile(t *testing.T, pg *rod.Page, selector string) (string, string) {
	t.Helper()
	res := pg.MustEval(`async (sel) => {
		const r = await fetch(document.querySelector(sel).href);
		return {status: r.status, cd: r.headers.get('Content-Disposition') || '', body: await r.text(), download: document.querySelector(sel).hasAttribute('download')};
	}`, selector)
	if res.Get("status").Int() != 200 || !res.Get("download").Bool() {
		t.Fatalf("%s: status %d, download attribute %v", selector, res.Get("status").Int(), res.Get("download").Bool())
	}
	return res.Get("body").String(), res.Get("cd").String()
}

// A reply shows its tokens, the header the thread's total and context fill;
// the chat menu exports the thread as Markdown and as JSON; the JSON,
// imported from the sidebar, opens as a new chat with the same messages;
// a broken file is refused with its reason and creates nothing.
func TestExportImportInBrowser(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Text: "Here is **the plan**: export, then import.", Usage: scripted.Usage{PromptTokens: 1840, CompletionTokens: 120}})
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "How do I move a chat?")
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete] [data-usage]') !== null`)
	if u := evalString(pg, `() => document.querySelector('.msg-assistant [data-usage]').innerText`); u != "1.8k in · 120 out · $0" {
		t.Fatalf("reply footer %q", u)
	}
	waitJS(t, pg, `() => document.querySelector('#thread-usage .tu-tokens')?.innerText === '1.8k in · 120 out'`)
	if ctx := evalString(pg, `() => document.querySelector('#thread-usage .ctx').getAttribute('aria-valuenow') + ' ' + document.querySelector('#thread-usage .ctx-text').innerText`); ctx != "1 2k / 128k" {
		t.Fatalf("context meter %q", ctx)
	}

	pg.MustElement("#chat-menu summary").MustClick()
	waitJS(t, pg, `() => document.querySelector('#chat-menu').open && document.querySelector('#export-json').offsetParent !== null`)
	pg.MustScreenshot(artifact("export-menu-light.png"))
	colorScheme(t, pg, "dark")
	pg.MustScreenshot(artifact("export-menu-dark.png"))
	colorScheme(t, pg, "light")

	md, cd := fetchFile(t, pg, "#export-md")
	if !strings.Contains(cd, `filename=parley-how-do-i-move-a-chat.md`) || !strings.Contains(md, "# How do I move a chat?") ||
		!strings.Contains(md, "Here is **the plan**: export, then import.") || !strings.Contains(md, "*1,840 tokens in · 120 out*") {
		t.Fatalf("markdown (%s):\n%s", cd, md)
	}
	js, cd := fetchFile(t, pg, "#export-json")
	var file struct {
		Version  int `json:"version"`
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Format int `json:"format"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(js), &file); err != nil || !strings.HasSuffix(cd, ".json") {
		t.Fatalf("JSON export (%s): %v\n%s", cd, err, js)
	}
	if file.Version != 1 || len(file.Messages) != 2 || file.Messages[1].Role != "assistant" || file.Messages[1].Content.Format != 2 {
		t.Fatalf("JSON export %+v", file)
	}

	// The menu closes with Esc, and with a click elsewhere.
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => !document.querySelector('#chat-menu').open`)
	pg.MustElement("#chat-menu summary").MustClick()
	waitJS(t, pg, `() => document.querySelector('#chat-menu').open`)
	pg.MustElement("#messages").MustClick()
	waitJS(t, pg, `() => !document.querySelector('#chat-menu').open`)

	// Import it back from the home page's sidebar.
	path := filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	home := p.page("/")
	home.MustElement("#import-file").MustSetFiles(path)
	waitJS(t, home, `() => location.pathname.startsWith('/t/') && location.pathname !== '/t/`+id+`'`)
	waitJS(t, home, `() => document.querySelectorAll('#messages .msg').length === 2`)
	if got := evalString(home, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText.trim()`); got != "Here is the plan: export, then import." {
		t.Fatalf("imported reply %q", got)
	}
	if u := evalString(home, `() => document.querySelector('#thread-usage .tu-tokens').innerText`); u != "1.8k in · 120 out" {
		t.Fatalf("imported usage %q", u)
	}
	newID := strings.TrimPrefix(evalString(home, `() => location.pathname`), "/t/")
	if msgs := p.messages(newID); len(msgs) != 2 || msgs[1].Content.Text() != "Here is **the plan**: export, then import." {
		t.Fatalf("stored import %+v", msgs)
	}

	// A file cut short: refused by name, nothing created.
	threads := len(p.threads())
	bad := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(bad, []byte(js[:len(js)/2]), 0o600); err != nil {
		t.Fatal(err)
	}
	home.MustElement("#import-file").MustSetFiles(bad)
	waitJS(t, home, `() => document.querySelector('#import-status.import-error')?.innerText.includes('looks truncated')`)
	if msg := evalString(home, `() => document.querySelector('#import-status').innerText`); !strings.Contains(msg, "Nothing was changed.") {
		t.Fatalf("error shown: %q", msg)
	}
	if n := len(p.threads()); n != threads {
		t.Fatalf("%d threads after a refused import, want %d", n, threads)
	}
	home.MustScreenshot(artifact("import-error-light.png"))
	colorScheme(t, home, "dark")
	home.MustScreenshot(artifact("import-error-dark.png"))
}

// threads lists this Parley's stored threads.
func (p *parley) threads() []agentcore.Thread {
	p.t.Helper()
	ts, err := p.In.Store.ListThreads(context.Background(), agentcore.ThreadQuery{})
	if err != nil {
		p.t.Fatal(err)
	}
	return ts
}
