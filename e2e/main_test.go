// Package e2e drives the real Parley server with a real browser (Debian's
// chromium through go-rod) and the scripted model server standing in for the
// model. One browser is shared by every test; each test gets its own Parley,
// data folder and incognito context.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/app"
)

// chromiumBin is Debian's chromium; rod must never download a browser.
const chromiumBin = "/usr/bin/chromium"

// waitTimeout bounds every wait on the page.
const waitTimeout = 15 * time.Second

// testDeadline bounds everything one test does with the browser, and the
// whole test (its cleanup included) for the watchdog. The longest test takes
// under 20 s; the benchmarks (-bench) take minutes.
func testDeadline() time.Duration {
	if *benchFlag {
		return 15 * time.Minute
	}
	return 3 * time.Minute
}

var benchFlag = flag.Bool("bench", false, "run the token-to-screen benchmarks (make bench)")

var shared struct {
	once    sync.Once
	browser *rod.Browser
	err     error
	cleanup func()
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The tests' own requests (to Parley, to the desktop app) must not wait
	// for ever on a server that stopped answering.
	http.DefaultClient.Timeout = time.Minute
	// Every request needs a Parley's token; the tests' own requests carry
	// the token of the Parley they go to.
	http.DefaultTransport = tokenTransport{http.DefaultTransport}
	watchSuite()
	code := m.Run()
	if shared.cleanup != nil {
		shared.cleanup()
	}
	os.Exit(code)
}

// browser returns the shared headless chromium, launching it on first use.
func browser(t testing.TB) *rod.Browser {
	t.Helper()
	shared.once.Do(func() {
		if _, err := os.Stat(chromiumBin); err != nil {
			shared.err = fmt.Errorf("chromium is not installed at %s (apt-get install chromium; .ci/run does it): %w", chromiumBin, err)
			return
		}
		l := launcher.New().Bin(chromiumBin).Headless(true).NoSandbox(true).Leakless(false).
			Set("disable-gpu").Set("disable-background-networking").Set("disable-component-update").
			Set("disable-sync").Set("no-first-run").Set("disable-quic").
			Set("disable-background-timer-throttling").Set("disable-renderer-backgrounding").
			Set("disable-backgrounding-occluded-windows")
		u, err := l.Launch()
		if err != nil {
			shared.err = fmt.Errorf("launch chromium: %w", err)
			return
		}
		b := rod.New().ControlURL(u)
		if err := b.Connect(); err != nil {
			shared.err = fmt.Errorf("connect to chromium: %w", err)
			return
		}
		shared.browser = b
		shared.cleanup = func() { _ = b.Close(); l.Kill(); l.Cleanup() }
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.browser
}

// parley is one running Parley with its scripted model.
type parley struct {
	t     testing.TB
	URL   string
	Model *scripted.Server
	In    *app.Instance
	dir   string
	tools map[string]*agentcore.Tool
	stop  func()
	// calls are Parley's ids for the script's tool calls, fed by callSub.
	calls   *callIDs
	callSub *agentcore.Subscription
}

// callIDs are the ids Parley issued for the scripted model's tool calls, by
// the ids the script gave them. Parley shows and answers a call only under
// its own id (the provider's goes back to the provider and nowhere else),
// so a test that names a call by its script's id looks Parley's up here.
// They are read from the runtime's tool-call events, and outlive a restart.
type callIDs struct {
	mu       sync.Mutex
	latest   map[string]string    // script's id → Parley's, for the latest call so named
	inThread map[[2]string]string // thread and script's id → Parley's
}

func newCallIDs() *callIDs {
	return &callIDs{latest: map[string]string{}, inThread: map[[2]string]string{}}
}

// note records the tool-call events of sub.
func (c *callIDs) note(sub *agentcore.Subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range sub.Drain() {
		if e.ProviderCallID == "" {
			continue // a repeated or missing id: the call goes by Parley's alone
		}
		c.latest[e.ProviderCallID] = e.ToolCallID
		c.inThread[[2]string{e.ThreadID, e.ProviderCallID}] = e.ToolCallID
	}
}

// callIn is Parley's id for the call the script named pid in thread (in
// any thread if "": the latest call so named), waiting up to waitTimeout
// for the model to make it.
func (p *parley) callIn(thread, pid string) string {
	p.t.Helper()
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) {
		p.calls.note(p.callSub)
		p.calls.mu.Lock()
		id, ok := p.calls.latest[pid]
		if thread != "" {
			id, ok = p.calls.inThread[[2]string{thread, pid}]
		}
		p.calls.mu.Unlock()
		if ok {
			return id
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the model made no tool call %q (thread %q) within %v", pid, thread, waitTimeout)
		}
	}
}

// call is Parley's id for the latest call the script named pid.
func (p *parley) call(pid string) string {
	p.t.Helper()
	return p.callIn("", pid)
}

// sel is the CSS selector of the card of the latest call the script named
// pid. Parley's ids are letters, digits, '-' and '_': safe in a selector
// and in a JS string.
func (p *parley) sel(pid string) string {
	p.t.Helper()
	return `[data-tool-call-id="` + p.call(pid) + `"]`
}

// card is a JS expression for the card of the latest call the script named
// pid.
func (p *parley) card(pid string) string {
	p.t.Helper()
	return `document.querySelector('` + p.sel(pid) + `')`
}

// startParley runs a real Parley on a free loopback port, on the scripted
// model, with its own data folder (also its workspace).
func startParley(t testing.TB, tools ...map[string]*agentcore.Tool) *parley {
	t.Helper()
	watch(t)
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	model.SetDefault(func(scripted.Request) scripted.Reply {
		return scripted.Reply{Text: "Default scripted reply."}
	})
	return launch(t, t.TempDir(), model, mergeTools(tools), newCallIDs())
}

func launch(t testing.TB, dir string, model *scripted.Server, tools map[string]*agentcore.Tool, calls *callIDs) *parley {
	t.Helper()
	return launchWith(t, dir, model, tools, calls, nil)
}

// launchWith is launch with the app's options adjusted by opt.
func launchWith(t testing.TB, dir string, model *scripted.Server, tools map[string]*agentcore.Tool, calls *callIDs, opt func(*app.Options)) *parley {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := app.Options{Scripted: model, Tools: tools}
	if opt != nil {
		opt(&o)
	}
	in, err := app.Open(ctx, app.Config{
		DataDir: dir, Workspace: dir, Model: app.DemoModel,
		Getenv: func(string) string { return "" },
	}, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	callSub := in.Runtime.Subscribe("", agentcore.EventToolInputStart, agentcore.EventToolCall)
	done := make(chan error, 1)
	go func() { done <- in.ServeOn(ctx, ln) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		calls.note(callSub)
		callSub.Close()
		in.Close()
	})
	t.Cleanup(stop)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := "http://127.0.0.1:" + port
	rememberToken(base, in.Config.Token)
	return &parley{t: t, URL: base, Model: model, In: in, dir: dir, tools: tools, stop: stop, calls: calls, callSub: callSub}
}

// tokens are the running Parleys' tokens by host:port.
var tokens sync.Map

// rememberToken notes the token of the Parley at base.
func rememberToken(base, token string) {
	u, err := url.Parse(base)
	if err != nil || token == "" {
		panic(fmt.Sprintf("rememberToken(%q): %v", base, err))
	}
	tokens.Store(u.Host, token)
}

// tokenTransport adds the token of the Parley a request goes to, unless the
// request says otherwise (a test of auth itself sets its own header or
// none: "Authorization: -" is sent as no header at all).
type tokenTransport struct{ next http.RoundTripper }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch h := r.Header.Get("Authorization"); {
	case h == "-":
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
	case h == "":
		if tok, ok := tokens.Load(r.URL.Host); ok {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok.(string))
		}
	}
	return t.next.RoundTrip(r)
}

// signedIn is address u with the token of its Parley, which logs a browser
// in and sends it on to u.
func signedIn(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	tok, ok := tokens.Load(p.Host)
	if !ok {
		panic("no token known for " + p.Host)
	}
	q := p.Query()
	q.Set("token", tok.(string))
	p.RawQuery = q.Encode()
	return p.String()
}

// restart quits this Parley (open runs are stopped, as on a real quit) and
// starts a new one on the same data folder and model.
func (p *parley) restart() *parley {
	p.t.Helper()
	p.stop()
	return launch(p.t, p.dir, p.Model, p.tools, p.calls)
}

// page opens path in a fresh incognito context of the shared browser.
func (p *parley) page(path string) *rod.Page {
	p.t.Helper()
	pg := incognito(p.t).MustPage(signedIn(p.URL + path))
	pg.MustWaitLoad()
	return pg
}

// incognito is a fresh incognito context of the shared browser, closed when
// the test ends. Nothing done through it can wait past the test's deadline,
// and a failed Must call fails the test (the next tests still run) instead
// of panicking the whole binary.
func incognito(t testing.TB) *rod.Browser {
	t.Helper()
	watch(t)
	b := browser(t).MustIncognito()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline())
	var ended atomic.Bool
	t.Cleanup(func() {
		ended.Store(true)
		cancel()
		_ = b.Close()
	})
	return b.Context(ctx).WithPanic(func(v any) {
		if ended.Load() { // a helper goroutine after the test: nothing is left to fail
			runtime.Goexit()
		}
		t.Errorf("%s: browser: %v", testLine(), v)
		t.FailNow()
	})
}

// newThread makes an empty thread and returns its id.
func (p *parley) newThread() string {
	p.t.Helper()
	th, err := p.In.Runtime.CreateThread(context.Background(), agentcore.Thread{ResourceID: "default"})
	if err != nil {
		p.t.Fatal(err)
	}
	return th.ID
}

// messages returns a thread's stored messages.
func (p *parley) messages(threadID string) []agentcore.Message {
	p.t.Helper()
	ms, err := p.In.Store.ListMessages(context.Background(), threadID, agentcore.MessageQuery{})
	if err != nil {
		p.t.Fatal(err)
	}
	return ms
}

// waitJS waits until the JS predicate is true on the page. A predicate
// that throws (an element not there yet) counts as false, not as a failure.
func waitJS(t testing.TB, pg *rod.Page, js string, args ...any) {
	t.Helper()
	safe := `function (...a) { try { return !!(` + js + `).apply(this, a) } catch (e) { return false } }`
	deadline := time.Now().Add(waitTimeout)
	for {
		err := pg.Timeout(time.Until(deadline)).Wait(rod.Eval(safe, args...))
		if err == nil {
			return
		}
		// A navigation (a form post, a redirect) can end the document the
		// predicate ran in: ask the next one, until the deadline.
		if navigated(err) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		t.Fatalf("waiting for %s: %v", js, err)
	}
}

// clickToLoad clicks an element that loads a new document (a link, a GET
// form) and waits until that document has loaded: a predicate alone can be
// true of the old page while the new one is still on its way, and the next
// navigation would then abort it.
func clickToLoad(t testing.TB, pg *rod.Page, sel string) {
	t.Helper()
	pg.MustEval(`() => { window.__parleyOld = true }`)
	pg.MustElement(sel).MustClick()
	waitJS(t, pg, `() => window.__parleyOld !== true && document.readyState === 'complete'`)
}

// navigated reports a CDP error that means the page changed documents under
// a call, not that the call failed.
func navigated(err error) bool {
	s := err.Error()
	return strings.Contains(s, "navigated or closed") || strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Cannot find context")
}

// evalString evaluates a JS function returning a string.
func evalString(pg *rod.Page, js string, args ...any) string {
	return pg.MustEval(js, args...).String()
}

// recordStates installs, on every new document of the page, an observer that
// records each distinct text of the last assistant message as it changes.
func recordStates(pg *rod.Page) {
	pg.MustEvalOnNewDocument(`
		window.__states = [];
		new MutationObserver(() => {
			const els = document.querySelectorAll('#messages .msg-assistant .msg-body');
			const el = els[els.length - 1];
			if (!el) return;
			const s = el.innerText.trim();
			if (s && window.__states[window.__states.length - 1] !== s) window.__states.push(s);
		}).observe(document, {subtree: true, childList: true, characterData: true});
	`)
}

// states returns what recordStates saw.
func states(pg *rod.Page) []string {
	var out []string
	for _, v := range pg.MustEval(`() => window.__states || []`).Arr() {
		out = append(out, v.String())
	}
	return out
}

// words makes a reply of n distinct words.
func words(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "word%03d ", i)
	}
	return strings.TrimSpace(b.String())
}

// artifact is where a test leaves a screenshot for people to look at.
func artifact(name string) string {
	dir := filepath.Join("artifacts")
	_ = os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, name)
}

func mergeTools(sets []map[string]*agentcore.Tool) map[string]*agentcore.Tool {
	out := map[string]*agentcore.Tool{}
	for _, set := range sets {
		for k, v := range set {
			out[k] = v
		}
	}
	return out
}
