package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/ui/exchange"
)

const (
	// besideLongPrompt starts the serve's reply that streams while the
	// desktop starts: "long" gets the demo's long answer (~10 s).
	besideLongPrompt = "give me the long answer"
	// besidePrompt is typed into the desktop's window: a short reply.
	besidePrompt = "Hello from the desktop beside serve"
	// besideOpening is what desktopOnRunning logs when it opens its window
	// on the Parley that holds the data folder.
	besideOpening = "Parley already runs on this data folder: opening a window on it"
	// besidePoll spaces the reads of the serve's streaming reply.
	besidePoll = 100 * time.Millisecond
)

// `parley desktop` on a data folder a `parley serve` holds opens its window
// on that serve, logged in, and starts no server of its own; the serve's
// reply, streaming meanwhile, completes and is never marked interrupted.
//
// What is proven, and how:
//   - the desktop starts while the serve's long reply streams (the serve's
//     export of the chat says "streaming" when the desktop logs that it
//     opens a window on the running Parley, with the serve's address and
//     pid);
//   - it starts no second server: it never prints "Parley desktop serving
//     on" and publishes no desktop.json;
//   - its window shows the serve's app, logged in: the home page is drawn
//     (brand-coloured pixels), and a message typed into the window with
//     xdotool is stored by the serve as a new chat, exactly as typed, and
//     answered. The pixels alone would not tell: the login page's Continue
//     button is brand-coloured too; but it takes the keys into its token
//     field and stores nothing (a desktop built to open the window without
//     the token fails here, with the login page in the timeout screenshot);
//   - the serve's long reply completes with the demo's whole text and its
//     status, read every 100 ms from the serve's export, is never
//     "interrupted" (nor "error");
//   - parley.lock names the serve's address and pid throughout; after
//     SIGTERM the desktop exits 0 and the serve still runs and answers.
//
// Screenshots land in e2e/artifacts/beside-serve-*.png.
func TestDesktopBesideServe(t *testing.T) {
	bin := desktopBinary(t)
	old, _ := filepath.Glob(artifact("beside-serve-*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}

	data := t.TempDir()
	serve, base := startBinary(t, data)
	pid := serve.Process.Pid
	checkLockRecord(t, data, base, pid)

	long := postThread(t, base, besideLongPrompt)
	reply := watchReply(t, base, long)
	reply.waitStreaming(t)

	// The desktop, while the reply streams.
	d, _ := launchDesktop(t, bin, data)
	waitStderr(t, d, besideOpening)
	if st, text := reply.now(); st != agentcore.StatusStreaming {
		t.Fatalf("the serve's reply was %q (%d bytes) when the desktop opened on it, want it still streaming: the test did not overlap them", st, len(text))
	}
	if want := fmt.Sprintf("url=%s pid=%d", base, pid); !strings.Contains(d.stderr.String(), want) {
		t.Fatalf("the desktop's log does not name the running serve (%s):\n%s", want, d.stderr.String())
	}

	win := d.waitWindow()
	home := d.waitShot("the home page in the window", func(img image.Image) bool {
		return accentPixels(img) > 1000
	})
	saveShot(t, home, "beside-serve-1-home.png")
	checkLockRecord(t, data, base, pid)

	// Keys typed into the window reach the serve's app: it is logged in.
	d.xdo("windowfocus", "--sync", win)
	d.xdo("type", "--delay", "20", besidePrompt)
	typed := d.waitShot("the typed text in the composer", func(img image.Image) bool {
		return changedPixels(home.img, img) > 200
	})
	saveShot(t, typed, "beside-serve-2-typed.png")
	d.xdo("key", "Return")

	sent := waitTypedChat(t, d, base, long)
	wantShort := scripted.Demo(scripted.Request{Messages: []scripted.Message{{Role: "user", Content: besidePrompt}}}).Text
	waitReplyText(t, base, sent, wantShort)
	time.Sleep(time.Second) // the window's stream draws the end of the reply
	saveShot(t, d.shot(), "beside-serve-3-answered.png")

	// The serve's reply, streaming all along, completes and was never
	// marked interrupted.
	wantLong := scripted.Demo(scripted.Request{Messages: []scripted.Message{{Role: "user", Content: besideLongPrompt}}}).Text
	statuses := reply.wait(t)
	if _, text := threadTexts(t, base, long); text != wantLong {
		t.Fatalf("the serve's reply, read through the API, is not the demo's long answer:\n%q", text)
	}
	t.Logf("the serve's reply went through %v while the desktop started beside it", statuses)

	// No second server.
	if out := d.stdout.String(); strings.Contains(out, "Parley desktop serving on") {
		t.Fatalf("the desktop started a server of its own: %q", out)
	}
	if _, err := os.Stat(filepath.Join(data, "desktop.json")); !os.IsNotExist(err) {
		t.Fatalf("the desktop published desktop.json in the serve's data folder (%v): it started a server of its own", err)
	}

	d.quit()
	checkLockRecord(t, data, base, pid)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("parley serve is gone after the desktop quit: %v", err)
	}
	var list struct {
		Threads []agentcore.Thread `json:"threads"`
	}
	apiGet(t, base, "/api/memory/threads?resourceId=default", &list)
	if len(list.Threads) != 2 {
		t.Fatalf("after the desktop quit the serve lists %d chats, want 2 (its own and the window's)", len(list.Threads))
	}
	if st, _ := replyStatus(t, base, long); st != agentcore.StatusComplete {
		t.Fatalf("after the desktop quit the serve's reply is %q, want complete", st)
	}
}

// `parley desktop` on a folder whose lock is held but whose token it cannot
// read (here a directory where the file was) cannot log a window in: it
// refuses as a second serve does, naming the running Parley, exits 1, and
// opens no window. The serve goes on.
func TestDesktopBesideServeUnreadableToken(t *testing.T) {
	bin := desktopBinary(t)
	data := t.TempDir()
	serve, base := startBinary(t, data)
	pid := serve.Process.Pid
	// The serve keeps the token it read at start; the folder's copy is
	// made unreadable. A directory, because the tests may run as root,
	// whom a mode of 000 does not stop.
	token := filepath.Join(data, "token")
	if err := os.Remove(token); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(token, 0o700); err != nil {
		t.Fatal(err)
	}

	d, _ := launchDesktop(t, bin, data)
	deadline := time.After(desktopStartTimeout)
	for exited := false; !exited; {
		if out, _ := xtool("xdotool", "search", "--onlyvisible", "--name", "^Parley$"); len(strings.Fields(string(out))) > 0 {
			saveShot(t, d.shot(), "beside-serve-refused-window.png")
			t.Fatalf("a window titled Parley is open: the desktop did not refuse")
		}
		select {
		case <-d.exited:
			exited = true
		case <-deadline:
			t.Fatalf("the desktop still runs %s after starting on a folder whose token it cannot read", desktopStartTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var exit *exec.ExitError
	if !errors.As(d.err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the desktop ended with %v, want exit status 1", d.err)
	}
	if out := d.stdout.String(); out != "" {
		t.Fatalf("the refused desktop printed %q", out)
	}
	stderr := strings.TrimSpace(d.stderr.String())
	want := fmt.Sprintf("parley: Parley is already running on this data folder at %s (pid %d)", base, pid)
	if lines := strings.Split(stderr, "\n"); lines[len(lines)-1] != want {
		t.Fatalf("the refused desktop's last line is not\n%s\nit said:\n%s", want, stderr)
	}
	if !strings.Contains(stderr, "cannot open a window on the running Parley") || !strings.Contains(stderr, "read the running Parley's token") {
		t.Fatalf("the refused desktop does not say why it opened no window:\n%s", stderr)
	}
	if strings.Contains(stderr, besideOpening) {
		t.Fatalf("the refused desktop says it opens a window:\n%s", stderr)
	}

	checkLockRecord(t, data, base, pid)
	var list struct {
		Threads []agentcore.Thread `json:"threads"`
	}
	apiGet(t, base, "/api/memory/threads?resourceId=default", &list)
}

// checkLockRecord fails the test unless data's parley.lock names the Parley
// at base with pid.
func checkLockRecord(t *testing.T, data, base string, pid int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(data, "parley.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		PID int    `json:"pid"`
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil || rec.PID != pid || rec.URL != base {
		t.Fatalf("parley.lock holds %q (%v), want pid %d and url %s", raw, err, pid, base)
	}
}

// postThread starts a chat on base with text, as the home page's composer
// does, and returns its id.
func postThread(t *testing.T, base, text string) string {
	t.Helper()
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/threads", url.Values{"text": {text}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id, ok := strings.CutPrefix(resp.Header.Get("Location"), "/t/")
	if !ok || id == "" {
		t.Fatalf("POST /threads: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	return id
}

// apiGet GETs path from base (with its token) and decodes the JSON answer.
func apiGet(t *testing.T, base, path string, v any) {
	t.Helper()
	if err := getJSON(base+path, v); err != nil {
		t.Fatal(err)
	}
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s\n%s", u, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w\n%s", u, err, body)
	}
	return nil
}

// threadTexts returns the thread's first user message and first reply, as
// the JSON API gives them.
func threadTexts(t *testing.T, base, threadID string) (user, reply string) {
	t.Helper()
	var list struct {
		Messages []agentcore.Message `json:"messages"`
	}
	apiGet(t, base, "/api/memory/threads/"+threadID+"/messages?perPage=false", &list)
	for _, m := range list.Messages {
		switch {
		case m.Role == agentcore.RoleUser && user == "":
			user = m.Content.Text()
		case m.Role == agentcore.RoleAssistant && reply == "":
			reply = m.Content.Text()
		}
	}
	return user, reply
}

// replyStatus reads the thread's first reply and its status from the
// serve's export of the chat (the JSON API does not carry statuses); ""
// while there is no reply.
func replyStatus(t *testing.T, base, threadID string) (agentcore.MessageStatus, string) {
	t.Helper()
	st, text, err := exportedReply(base, threadID)
	if err != nil {
		t.Fatal(err)
	}
	return st, text
}

func exportedReply(base, threadID string) (agentcore.MessageStatus, string, error) {
	var f exchange.File
	if err := getJSON(base+"/t/"+threadID+"/export.json", &f); err != nil {
		return "", "", err
	}
	for _, m := range f.Messages {
		if m.Role == agentcore.RoleAssistant {
			st := m.Status
			if st == "" { // the export leaves out "complete"
				st = agentcore.StatusComplete
			}
			return st, m.Content.Text(), nil
		}
	}
	return "", "", nil
}

// replyWatch reads a thread's reply every besidePoll until it is complete
// or failed, keeping every status it went through.
type replyWatch struct {
	mu       sync.Mutex
	statuses []agentcore.MessageStatus // in order, repeats left out
	text     string
	err      error
	done     chan struct{}
}

func watchReply(t *testing.T, base, threadID string) *replyWatch {
	w := &replyWatch{done: make(chan struct{})}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); <-w.done })
	go func() {
		defer close(w.done)
		for {
			st, text, err := exportedReply(base, threadID)
			w.mu.Lock()
			w.err = err
			if st != "" && (len(w.statuses) == 0 || w.statuses[len(w.statuses)-1] != st) {
				w.statuses = append(w.statuses, st)
			}
			w.text = text
			w.mu.Unlock()
			if err != nil || (st != "" && st != agentcore.StatusStreaming) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(besidePoll):
			}
		}
	}()
	return w
}

// now returns the status and text last read.
func (w *replyWatch) now() (agentcore.MessageStatus, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.statuses) == 0 {
		return "", w.text
	}
	return w.statuses[len(w.statuses)-1], w.text
}

// waitStreaming waits until the reply streams and has some text.
func (w *replyWatch) waitStreaming(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(desktopStartTimeout)
	for {
		st, text := w.now()
		if st == agentcore.StatusStreaming && text != "" {
			return
		}
		select {
		case <-w.done:
			t.Fatalf("the serve's reply did not stream: %v, %q (%v)", w.statuses, text, w.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the serve's reply did not start streaming within %s (%v)", desktopStartTimeout, w.statuses)
		}
		time.Sleep(besidePoll)
	}
}

// wait waits for the end of the reply and fails the test unless it
// completed without ever being interrupted; it returns the statuses seen.
func (w *replyWatch) wait(t *testing.T) []agentcore.MessageStatus {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(desktopReplyTimeout):
		t.Fatalf("the serve's reply did not complete within %s (%v)", desktopReplyTimeout, w.statuses)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("reading the serve's reply: %v", w.err)
	}
	if slices.Contains(w.statuses, agentcore.StatusInterrupted) || len(w.statuses) == 0 || w.statuses[len(w.statuses)-1] != agentcore.StatusComplete {
		t.Fatalf("the serve's reply went through %v, want streaming then complete, never interrupted; it reads:\n%q", w.statuses, w.text)
	}
	return slices.Clone(w.statuses)
}

// waitStderr waits until the desktop's log holds line, and fails if it
// serves on its own or exits first.
func waitStderr(t *testing.T, d *desktop, line string) {
	t.Helper()
	deadline := time.Now().Add(desktopStartTimeout)
	for !strings.Contains(d.stderr.String(), line) {
		if strings.Contains(d.stdout.String(), "Parley desktop serving on") {
			t.Fatalf("the desktop started a server of its own beside the running serve: %q", d.stdout.String())
		}
		select {
		case <-d.exited:
			t.Fatalf("the desktop exited (%v) without logging %q", d.err, line)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the desktop did not log %q within %s", line, desktopStartTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitTypedChat waits for the chat the window's composer made on the serve
// (any chat but except) and checks its first message is exactly what was
// typed. Nothing stored means the keys did not reach a logged-in app.
func waitTypedChat(t *testing.T, d *desktop, base, except string) string {
	t.Helper()
	deadline := time.Now().Add(desktopStartTimeout)
	for {
		var list struct {
			Threads []agentcore.Thread `json:"threads"`
		}
		apiGet(t, base, "/api/memory/threads?resourceId=default", &list)
		for _, th := range list.Threads {
			if th.ID == except {
				continue
			}
			user, _ := threadTexts(t, base, th.ID)
			if user == "" {
				continue
			}
			if user != besidePrompt {
				t.Fatalf("the serve stored %q from the window, want the typed %q", user, besidePrompt)
			}
			return th.ID
		}
		if time.Now().After(deadline) {
			saveShot(t, d.shot(), "beside-serve-timeout.png")
			t.Fatalf("the serve stored no chat from the window within %s: the window is not logged in to it (see artifacts/beside-serve-timeout.png)", desktopStartTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitReplyText waits until the thread's first reply is want.
func waitReplyText(t *testing.T, base, threadID, want string) {
	t.Helper()
	deadline := time.Now().Add(desktopReplyTimeout)
	for {
		_, reply := threadTexts(t, base, threadID)
		if reply == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply in chat %s is %q after %s, want %q", threadID, reply, desktopReplyTimeout, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
