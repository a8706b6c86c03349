package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore/scripted"
)

// The benches measure servers that run as their own processes, so that the
// CPU they report is the server's alone: not the test binary's, and not the
// scripted model server's (which runs in the test binary). Two servers take
// the same streams into the same Chromium page setup: Parley (bin/parley
// serve, on the scripted model through its OpenAI-compatible provider), and
// the floor, a bare pipe that decodes the model's SSE chunks and appends
// each delta to the page with one Datastar patch, doing nothing else.

// clockTicks is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which is 100 on every Linux ABI Go supports (getconf CLK_TCK).
const clockTicks = 100

// procCPU is a process's user+system CPU time so far, from /proc.
func procCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read the server's CPU time: %v", err)
	}
	// The command name in parentheses may hold spaces; the fields after
	// it are plain. utime and stime are fields 14 and 15 of the line.
	_, rest, ok := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// target is a server the benches stream into: Parley, in this process or
// its own, or the floor.
type target struct {
	URL   string
	Model *scripted.Server
	dir   string // its workspace ("" for the floor)
	pid   int    // its process (0: this one, whose CPU is not the server's)
	floor bool
	stop  func() // ends its process (nil in this one)
}

// cpu is the server's CPU time so far (0 for a Parley in this process:
// only the short passes use one, and they print no figures).
func (s target) cpu(t testing.TB) time.Duration {
	if s.pid == 0 {
		return 0
	}
	return procCPU(t, s.pid)
}

// target is this in-process Parley as a bench target.
func (p *parley) target() target { return target{URL: p.URL, Model: p.Model, dir: p.dir} }

// post sends a JSON body to the server and returns its answer's body.
func (s target) post(t testing.TB, path string, body any) []byte {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %v %s", path, resp.StatusCode, err, out)
	}
	return out
}

// newThread makes a thread through the API and returns its id.
func (s target) newThread(t testing.TB) string {
	t.Helper()
	var th struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(s.post(t, "/api/memory/threads", map[string]string{"resourceId": "default"}), &th); err != nil || th.ID == "" {
		t.Fatalf("create a thread: %v (%q)", err, th.ID)
	}
	return th.ID
}

// yolo lets the thread's tools run without approval.
func (s target) yolo(t testing.TB, id string) {
	t.Helper()
	s.post(t, "/t/"+id+"/yolo", map[string]bool{"on": true})
}

// say sends text as the composer does.
func (s target) say(t testing.TB, id, text string) {
	t.Helper()
	if out := s.post(t, "/t/"+id+"/send", map[string]string{"draft": text}); bytes.Contains(out, []byte("Not sent")) {
		t.Fatalf("send: %s", out)
	}
}

// runEnded is true on a thread page once the run has ended: its reply is
// complete and the composer offers Send again.
const runEnded = `() => {
	const els = document.querySelectorAll('#messages .msg-assistant');
	const last = els[els.length - 1];
	return !!last && last.dataset.status === 'complete' && !!document.querySelector('#send') && !document.querySelector('#stop');
}`

// waitJSFor is waitJS with its own timeout, for waits that outlast a
// stream.
func waitJSFor(t testing.TB, pg *rod.Page, d time.Duration, js string, args ...any) {
	t.Helper()
	safe := `function (...a) { try { return !!(` + js + `).apply(this, a) } catch (e) { return false } }`
	if err := pg.Timeout(d).Wait(rod.Eval(safe, args...)); err != nil {
		t.Fatalf("waiting for %s: %v", js, err)
	}
}

// startParleyProcess starts bin/parley serve on dir as its own process, on
// the scripted model through the OpenAI-compatible provider, and stops it
// when the test ends.
func startParleyProcess(t testing.TB, dir string, model *scripted.Server) target {
	t.Helper()
	cmd, url, _, stop := serveProcess(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--workspace", dir,
		"--model", "openai-compatible/scripted"}, "OPENAI_COMPATIBLE_BASE_URL="+model.URL())
	return target{URL: url, Model: model, dir: dir, pid: cmd.Process.Pid, stop: stop}
}

// newModel is a scripted model server for a test, answering what nothing
// was pushed for with a default reply.
func newModel(t testing.TB) *scripted.Server {
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	model.SetDefault(func(scripted.Request) scripted.Reply {
		return scripted.Reply{Text: "Default scripted reply."}
	})
	return model
}

// openThread opens the thread's page in a fresh incognito context, waits
// for its stream to be open, and returns it with a func that closes it.
func openThread(t testing.TB, s target, id string) (*rod.Page, func()) {
	t.Helper()
	b := incognito(t)
	pg := b.MustPage(signedIn(s.URL + "/t/" + id))
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	time.Sleep(150 * time.Millisecond) // the stream is open and synced
	return pg, func() { _ = b.Close() }
}

// serveProcess starts the parley binary with args (and env added to a bare
// environment), waits for it to say where it runs, remembers its token and
// returns it with its base URL, when it was started and a func that stops
// it (SIGINT, as a user's Ctrl-C), called when the test ends if not before.
func serveProcess(t testing.TB, args []string, env ...string) (*exec.Cmd, string, time.Time, func()) {
	t.Helper()
	cmd := exec.Command(parleyBin(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	if path := os.Getenv("PARLEY_CPUPROFILE"); path != "" {
		cmd.Env = append(cmd.Env, "PARLEY_CPUPROFILE="+path) // the server's profile, for pprof
	}
	cmd.Stderr = io.Discard
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		quit := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		defer quit.Stop()
		_ = cmd.Wait()
	})
	t.Cleanup(stop)
	lines := bufio.NewScanner(out)
	url := ""
	for url == "" && lines.Scan() {
		if _, u, ok := strings.Cut(lines.Text(), "running at "); ok {
			url = strings.TrimSpace(u)
		}
	}
	if url == "" {
		t.Fatal("parley serve never said where it runs")
	}
	login, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + login.Host
	rememberToken(base, login.Query().Get("token"))
	go io.Copy(io.Discard, out)
	return cmd, base, start, stop
}

// floorEnv makes the test binary, started again by startFloor, serve the
// floor instead of running tests; its value is the model's base URL.
const floorEnv = "PARLEY_BENCH_FLOOR_MODEL"

func init() {
	if model := os.Getenv(floorEnv); model != "" {
		serveFloor(model)
		os.Exit(0)
	}
}

// startFloor starts the floor as its own process (this test binary again),
// streaming from model.
func startFloor(t testing.TB, model *scripted.Server) target {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), floorEnv+"="+model.URL())
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the floor never said where it runs: %v", err)
	}
	go io.Copy(io.Discard, out)
	base := strings.TrimSpace(line)
	rememberToken(base, "floor") // the floor takes any token
	return target{URL: base, Model: model, pid: cmd.Process.Pid, floor: true}
}

// floorPage is the floor's thread page: Parley's structure for what the
// benches observe (a message body, the composer's Send and Stop), Datastar,
// and one stream.
const floorPage = `<!doctype html>
<html><head><meta charset="utf-8"><script type="module" src="/static/datastar.js"></script></head>
<body data-init="@get('/t/%s/stream', {openWhenHidden: true})">
<div id="messages"></div>
<div id="composer-actions"><button id="send">Send</button></div>
</body></html>`

// floorEvent is one patch the floor sends to a page.
type floorEvent func(*datastar.ServerSentEventGenerator) error

// serveFloor serves the floor on a free loopback port and prints its
// address. A send posts the message to the model and relays every delta
// of its stream to the thread's open page as an appended span; nothing is
// stored, coalesced or rendered.
func serveFloor(modelURL string) {
	datastarJS, err := os.ReadFile("../ui/static/datastar.js")
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	threads := map[string]chan floorEvent{}
	thread := func(id string) (chan floorEvent, bool) {
		mu.Lock()
		defer mu.Unlock()
		ch, ok := threads[id]
		return ch, ok
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /static/datastar.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(datastarJS)
	})
	mux.HandleFunc("GET /t/{id}", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := thread(r.PathValue("id")); !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, floorPage, r.PathValue("id"))
	})
	mux.HandleFunc("GET /t/{id}/stream", func(w http.ResponseWriter, r *http.Request) {
		events, ok := thread(r.PathValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		sse := datastar.NewSSE(w, r)
		for {
			select {
			case <-r.Context().Done():
				return
			case ev := <-events:
				if err := ev(sse); err != nil {
					return
				}
			}
		}
	})
	mux.HandleFunc("POST /api/memory/threads", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := fmt.Sprintf("floor%d", len(threads)+1)
		threads[id] = make(chan floorEvent, 1024)
		mu.Unlock()
		fmt.Fprintf(w, `{"id":%q}`, id)
	})
	mux.HandleFunc("POST /t/{id}/yolo", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("POST /t/{id}/send", func(w http.ResponseWriter, r *http.Request) {
		events, ok := thread(r.PathValue("id"))
		var sig struct {
			Draft string `json:"draft"`
		}
		if err := json.NewDecoder(r.Body).Decode(&sig); err != nil || !ok {
			http.Error(w, fmt.Sprintf("bad send: %v", err), http.StatusBadRequest)
			return
		}
		events <- func(sse *datastar.ServerSentEventGenerator) error {
			return sse.PatchElements(`<article class="msg msg-assistant" data-status="streaming"><div class="msg-body"></div></article>`,
				datastar.WithSelectorID("messages"), datastar.WithModeInner())
		}
		events <- func(sse *datastar.ServerSentEventGenerator) error {
			return sse.PatchElements(`<div id="composer-actions"><button id="stop">Stop</button></div>`)
		}
		go relay(modelURL, sig.Draft, events)
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	_ = srv.Serve(ln)
}

// relay streams the model's answer to text into events: each content or
// tool-argument delta is one appended span.
func relay(modelURL, text string, events chan<- floorEvent) {
	body, _ := json.Marshal(map[string]any{"model": "scripted", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": text}}})
	resp, err := http.Post(modelURL+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(data), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		piece := d.Content
		for _, tc := range d.ToolCalls {
			piece += tc.Function.Arguments
		}
		if piece == "" {
			continue
		}
		span := "<span>" + html.EscapeString(piece) + "</span>"
		events <- func(sse *datastar.ServerSentEventGenerator) error {
			return sse.PatchElements(span, datastar.WithSelector("#messages .msg-body"), datastar.WithModeAppend())
		}
	}
	events <- func(sse *datastar.ServerSentEventGenerator) error {
		return sse.ExecuteScript(`document.querySelector('#messages .msg-assistant').dataset.status = 'complete'`)
	}
	events <- func(sse *datastar.ServerSentEventGenerator) error {
		return sse.PatchElements(`<div id="composer-actions"><button id="send">Send</button></div>`)
	}
}
