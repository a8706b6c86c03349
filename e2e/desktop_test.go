package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

const (
	// desktopStartTimeout bounds each start-up step: the address line, the
	// window, the home page drawn in it.
	desktopStartTimeout = 20 * time.Second
	// desktopReplyTimeout bounds the demo's long reply (~10 s at its
	// scripted pace).
	desktopReplyTimeout = 40 * time.Second
	// desktopShotEvery spaces the screenshots taken while the reply streams.
	desktopShotEvery = 250 * time.Millisecond
	// desktopChanged is how many pixels must differ between two screenshots
	// for the window to count as redrawn: a line of new text is thousands,
	// the blinking stream cursor (8×17 px) is not.
	desktopChanged = 1500
	// desktopCaret is the most a still window changes: the composer's
	// blinking text caret (1×17 px, with antialiasing).
	desktopCaret = 60
	// desktopPrompt is what the test types into the window. The word "long"
	// gets the demo's long reply: ~10 s of streaming to watch, and scrolling.
	desktopPrompt = "Hello from the desktop smoke test, a long answer please"
)

// The desktop binary starts under X, shows Parley in a window, and a message
// typed into that window gets the demo model's reply streamed into it.
//
// What is proven, and how:
//   - the window loads the app: its home page, with the brand-coloured Send
//     button and icon, is drawn (pixels), and keystrokes typed with xdotool
//     reach its composer (the stored user message is exactly the typed text);
//   - pressing Enter in the window starts the run (the thread and reply
//     appear through the JSON API, read with the PARLEY_TOKEN bearer token:
//     the window itself is logged in by its one-time launch secret);
//   - the reply streams into the window: while the API shows the reply still
//     incomplete, successive screenshots keep changing (a page that stopped
//     getting patches would stand still; a navigation happens once);
//   - the stream's end reaches the window: after the reply is complete the
//     window settles (the streaming cursor is gone) and the final screenshot
//     is not blank and differs from the one before sending;
//   - SIGTERM closes the window and the process exits 0.
//
// Screenshots land in e2e/artifacts/desktop-*.png for people to look at.
func TestDesktopSmoke(t *testing.T) {
	bin := desktopBinary(t)
	old, _ := filepath.Glob(artifact("desktop-*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}

	d := startDesktop(t, bin)
	win := d.waitWindow()

	// The home page is drawn once the brand colour (icon, Send button) shows.
	home := d.waitShot("the home page in the window", func(img image.Image) bool {
		return accentPixels(img) > 1000
	})
	saveShot(t, home, "desktop-1-home.png")

	d.xdo("windowfocus", "--sync", win)
	d.xdo("type", "--delay", "20", desktopPrompt)
	typed := d.waitShot("the typed text in the composer", func(img image.Image) bool {
		return changedPixels(home.img, img) > 200
	})
	saveShot(t, typed, "desktop-2-typed.png")
	d.xdo("key", "Return")

	// Watch the window while the run writes the reply.
	want := scripted.Demo(scripted.Request{Messages: []scripted.Message{{Role: "user", Content: desktopPrompt}}}).Text
	var (
		threadID string
		shots    []desktopShot // taken while the reply was incomplete
		last     time.Time
		deadline = time.Now().Add(desktopReplyTimeout)
	)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no complete reply within %s (thread %q, %d screenshots)", desktopReplyTimeout, threadID, len(shots))
		}
		if threadID == "" {
			threadID = d.onlyThread()
			if threadID == "" {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		user, reply := d.texts(threadID)
		if user != "" && user != desktopPrompt {
			t.Fatalf("the stored user message is %q, want the typed %q", user, desktopPrompt)
		}
		if reply == want {
			break
		}
		if reply != "" && !strings.HasPrefix(want, reply) {
			t.Fatalf("the reply so far is not a prefix of scripted.Demo's reply (is %s older than the source? make desktop):\n%q", filepath.Base(bin), reply)
		}
		if time.Since(last) >= desktopShotEvery {
			last = time.Now()
			s := d.shot()
			s.replyLen = len(reply)
			shots = append(shots, s)
		}
		time.Sleep(50 * time.Millisecond)
	}

	redraws, pairs := 0, max(len(shots)-1, 0)
	var trace strings.Builder
	for i := 1; i < len(shots); i++ {
		n := changedPixels(shots[i-1].img, shots[i].img)
		fmt.Fprintf(&trace, "\n  screenshot %d: reply at %d bytes, %d pixels changed", i, shots[i].replyLen, n)
		if n > desktopChanged {
			redraws++
		}
	}
	for i, s := range shots {
		if i == len(shots)/3 || i == 2*len(shots)/3 {
			saveShot(t, s, fmt.Sprintf("desktop-3-streaming-%02d.png", i))
		}
	}
	// A redraw or two can be the navigation to the new thread; the rest are
	// the window's stream patching the reply in.
	if redraws < 5 || redraws*2 < pairs {
		t.Fatalf("the window changed between only %d of %d pairs of screenshots while the reply streamed: the reply did not stream into the window%s", redraws, pairs, trace.String())
	}
	t.Logf("the window changed between %d of %d pairs of screenshots while the reply streamed", redraws, pairs)

	// The finish reaches the window too: it settles without the cursor.
	final := d.waitStable()
	saveShot(t, final, "desktop-4-final.png")
	if top, colours := colourSpread(final.img); top > 0.85 || colours < 100 {
		t.Fatalf("the final screenshot looks blank: one colour covers %.0f%%, %d colours", top*100, colours)
	}
	if n := changedPixels(typed.img, final.img); n < 20*desktopChanged {
		t.Fatalf("the final screenshot differs from the one before sending by only %d pixels", n)
	}

	// A script on the same account finds the app and its token in
	// desktop.json (0600) and can notify a chat.
	published := filepath.Join(d.data, "desktop.json")
	fi, err := os.Stat(published)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("desktop.json: %v %v", fi, err)
	}
	var addr struct{ URL, Token string }
	if raw, err := os.ReadFile(published); err != nil || json.Unmarshal(raw, &addr) != nil || addr.URL != d.url || addr.Token != d.token {
		t.Fatalf("desktop.json holds %+v (%v), want %s and the launch token", addr, err, d.url)
	}
	req, _ := http.NewRequest("POST", addr.URL+"/api/notifications", strings.NewReader(`{"threadId":"`+threadID+`","source":"ci","kind":"build","priority":"low","summary":"Build 3 passed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+addr.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("notify the desktop app: %s", resp.Status)
	}

	d.stop()
	if _, err := os.Stat(published); !os.IsNotExist(err) {
		t.Fatalf("desktop.json is still there after the app quit (%v)", err)
	}
}

// desktopBinary returns PARLEY_DESKTOP_BIN, or fails the test when it or
// the X server and tools the desktop tests need are missing.
func desktopBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PARLEY_DESKTOP_BIN")
	if bin == "" {
		t.Fatal("PARLEY_DESKTOP_BIN is not set: build the window with `make desktop` and run this test with `make e2e` (it sets PARLEY_DESKTOP_BIN and runs under xvfb-run)")
	}
	if os.Getenv("DISPLAY") == "" {
		t.Fatal("DISPLAY is not set: the desktop tests need an X server; run them with `make e2e` (xvfb-run -a)")
	}
	for _, tool := range []string{"xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (apt-get install xdotool imagemagick; .ci/run does it): %v", tool, err)
		}
	}
	if !filepath.IsAbs(bin) {
		t.Fatalf("PARLEY_DESKTOP_BIN must be an absolute path, not %q", bin)
	}
	return bin
}

// desktop is one running parley-desktop.
type desktop struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	token  string
	data   string // the data folder
	stdout *lockedBuffer
	stderr *lockedBuffer
	exited chan struct{}
	err    error // Wait's result, once exited is closed
}

// startDesktop runs bin in demo mode with its own data folder, and an API
// token so the test can read threads over HTTP.
func startDesktop(t *testing.T, bin string) *desktop {
	t.Helper()
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	d, serving := launchDesktop(t, bin, filepath.Join(t.TempDir(), "data"), "PARLEY_TOKEN="+token)
	d.token = token
	select {
	case d.url = <-serving:
	case <-d.exited:
		t.Fatalf("parley-desktop exited before serving (%v):\n%s", d.err, d.stderr.String())
	case <-time.After(desktopStartTimeout):
		t.Fatalf("parley-desktop printed no \"Parley desktop serving on\" line within %s", desktopStartTimeout)
	}
	if u, err := url.Parse(d.url); err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" {
		t.Fatalf("parley-desktop serves on %q, want http://127.0.0.1:PORT", d.url)
	}
	// Without the token the server refuses: only the window (launch
	// secret) and token holders get in.
	resp, err := http.Get(d.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET / without credentials: %s, want 401", resp.Status)
	}
	// Nor does it answer to other host names (DNS rebinding).
	req, _ := http.NewRequest(http.MethodGet, d.url+"/", nil)
	req.Host = "parley.example"
	req.Header.Set("Authorization", "Bearer "+d.token)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("GET / with Host parley.example: %s, want 421", resp.Status)
	}
	return d
}

// launchDesktop runs `bin desktop --demo` on the data folder data, with env
// added to the test's environment, and returns at once; serving gets the
// address it prints once it serves. What it prints is kept in d.stdout and
// d.stderr, complete once d.exited is closed.
func launchDesktop(t *testing.T, bin, data string, env ...string) (*desktop, <-chan string) {
	t.Helper()
	watch(t)
	dir := t.TempDir()
	d := &desktop{t: t, data: data, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(bin, "desktop", "--demo", "--data", d.data, "--workspace", dir)
	d.cmd.Env = append(os.Environ(),
		// WebKit's caches and state stay in the test's folder.
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "share"),
	)
	d.cmd.Env = append(d.cmd.Env, env...)
	d.cmd.Stderr = d.stderr
	// WebKit's helper processes inherit stderr: Wait must not wait for
	// them to close it, and a kill must reach them too.
	d.cmd.WaitDelay = 5 * time.Second
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Through an io.Pipe, not StdoutPipe: Wait then waits until all of it
	// is copied, so what the process printed is all read once it exited.
	out, in := io.Pipe()
	d.cmd.Stdout = in
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	serving, scanned := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(d.stdout, sc.Text())
			if u, ok := strings.CutPrefix(sc.Text(), "Parley desktop serving on "); ok {
				select {
				case serving <- strings.TrimSpace(u):
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		d.err = d.cmd.Wait()
		in.Close()
		<-scanned
		close(d.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-d.exited:
		default:
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.exited
		}
		if t.Failed() {
			t.Logf("parley-desktop stdout:\n%s\nstderr:\n%s", d.stdout.String(), d.stderr.String())
		}
	})
	return d, serving
}

// xtool runs an X tool (xdotool, import) and returns what it printed; one
// stuck for half a minute is killed, so that it fails the test instead of
// hanging it. An error carries what the tool said on stderr.
func xtool(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return out, err
}

// waitWindow returns the X id of the window titled Parley.
func (d *desktop) waitWindow() string {
	d.t.Helper()
	deadline := time.Now().Add(desktopStartTimeout)
	for time.Now().Before(deadline) {
		out, _ := xtool("xdotool", "search", "--onlyvisible", "--name", "^Parley$")
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			return ids[0]
		}
		select {
		case <-d.exited:
			d.t.Fatalf("parley-desktop exited before its window showed (%v)", d.err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	d.t.Fatalf("no visible window titled Parley within %s", desktopStartTimeout)
	return ""
}

func (d *desktop) xdo(args ...string) {
	d.t.Helper()
	if _, err := xtool("xdotool", args...); err != nil {
		d.t.Fatalf("xdotool %s: %v", strings.Join(args, " "), err)
	}
}

// desktopShot is one screenshot of the whole X screen.
type desktopShot struct {
	png      []byte
	img      image.Image
	replyLen int // bytes of the reply stored when it was taken
}

func (d *desktop) shot() desktopShot {
	d.t.Helper()
	out, err := xtool("import", "-window", "root", "png:-")
	if err != nil {
		d.t.Fatalf("screenshot (import -window root): %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		d.t.Fatalf("decode screenshot: %v", err)
	}
	return desktopShot{png: out, img: img}
}

// waitShot takes screenshots until ok accepts one.
func (d *desktop) waitShot(what string, ok func(image.Image) bool) desktopShot {
	d.t.Helper()
	deadline := time.Now().Add(desktopStartTimeout)
	for {
		s := d.shot()
		if ok(s.img) {
			return s
		}
		if time.Now().After(deadline) {
			saveShot(d.t, s, "desktop-timeout.png")
			d.t.Fatalf("the window did not show %s within %s (see artifacts/desktop-timeout.png)", what, desktopStartTimeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitStable waits until the window stands still for over a second: four
// screenshots 400 ms apart differ by at most the text caret of the focused
// composer (a 1 px line). The stream cursor, a block that blinks every
// 500 ms while a reply streams, would differ by far more; it goes only when
// the stream's last patch arrives. The overlay scrollbar fades out meanwhile.
func (d *desktop) waitStable() desktopShot {
	d.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	prev := d.shot()
	for still := 0; still < 3; {
		if time.Now().After(deadline) {
			saveShot(d.t, prev, "desktop-timeout.png")
			d.t.Fatal("the window kept changing after the reply was complete: it did not get the end of the stream")
		}
		time.Sleep(400 * time.Millisecond)
		s := d.shot()
		if changedPixels(prev.img, s.img) <= desktopCaret {
			still++
		} else {
			still = 0
		}
		prev = s
	}
	return prev
}

// api GETs path with the bearer token and decodes the JSON answer.
func (d *desktop) api(path string, v any) {
	d.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		d.t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// onlyThread returns the id of the one thread, "" while there is none.
func (d *desktop) onlyThread() string {
	d.t.Helper()
	var list struct {
		Threads []agentcore.Thread `json:"threads"`
	}
	d.api("/api/memory/threads?resourceId=default", &list)
	switch len(list.Threads) {
	case 0:
		return ""
	case 1:
		return list.Threads[0].ID
	}
	d.t.Fatalf("%d threads, want the one made from the window", len(list.Threads))
	return ""
}

// texts returns the thread's first user message and first reply, as far as
// they are written.
func (d *desktop) texts(threadID string) (user, reply string) {
	d.t.Helper()
	var list struct {
		Messages []agentcore.Message `json:"messages"`
	}
	d.api("/api/memory/threads/"+threadID+"/messages?perPage=false", &list)
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

// stop sends SIGTERM, as a session ending would: the window closes, runs
// stop, the store closes (SQLite removes its WAL file only on a clean close
// of the last connection), and the process exits 0.
func (d *desktop) stop() {
	d.t.Helper()
	d.quit()
	if _, err := os.Stat(filepath.Join(d.data, "parley.db-wal")); !os.IsNotExist(err) {
		d.t.Fatalf("parley.db-wal is still there after exit (%v): the store was not closed", err)
	}
}

// quit sends SIGTERM and checks the process exits 0 without logging an
// error.
func (d *desktop) quit() {
	d.t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		d.t.Fatal(err)
	}
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		d.t.Fatal("parley-desktop did not exit within 10 s of SIGTERM")
	}
	if d.err != nil {
		d.t.Fatalf("parley-desktop exited with %v after SIGTERM:\n%s", d.err, d.stderr.String())
	}
	if s := d.stderr.String(); strings.Contains(s, "panic:") || strings.Contains(s, "level=ERROR") {
		d.t.Fatalf("parley-desktop logged an error:\n%s", s)
	}
}

func saveShot(t testing.TB, s desktopShot, name string) {
	if err := os.WriteFile(artifact(name), s.png, 0o644); err != nil {
		t.Errorf("save %s: %v", name, err)
	}
}

// changedPixels counts the pixels that differ between two same-size images.
func changedPixels(a, b image.Image) int {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy()
	}
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// accentPixels counts pixels of Parley's brand colour (#4f46e5).
func accentPixels(img image.Image) int {
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if channelNear(cr>>8, 0x4f) && channelNear(cg>>8, 0x46) && channelNear(cb>>8, 0xe5) {
				n++
			}
		}
	}
	return n
}

func channelNear(v, want uint32) bool { return v+12 >= want && v <= want+12 }

// colourSpread returns the share of the commonest colour and the number of
// distinct colours.
func colourSpread(img image.Image) (top float64, colours int) {
	count := map[[3]uint32]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			count[[3]uint32{cr, cg, cb}]++
		}
	}
	most := 0
	for _, n := range count {
		most = max(most, n)
	}
	return float64(most) / float64(r.Dx()*r.Dy()), len(count)
}

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
