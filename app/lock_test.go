package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// asParleyEnv makes this test binary run as the parley command, so that the
// lock tests can start Parley as separate processes, as a user would.
const asParleyEnv = "PARLEY_TEST_RUN_AS_PARLEY"

func TestMain(m *testing.M) {
	if os.Getenv(asParleyEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// processWait bounds every wait on a Parley process: its start (migrations,
// MCP) or its exit.
const processWait = 30 * time.Second

// parleyProcess is `parley serve` on dir in a process of its own.
type parleyProcess struct {
	cmd    *exec.Cmd
	url    string // what it printed, once it runs
	stderr *syncBuffer
	exited chan struct{}
	err    error // Wait's, once exited is closed
}

type syncBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	written chan struct{} // if set, closed on the first write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil && s.b.Len() == 0 && len(p) > 0 {
		close(s.written)
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func parleyCommand(dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "serve", "--demo", "--addr", "127.0.0.1:0", "--data", dir, "--workspace", dir)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, asParleyEnv+"=1")
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// startServe starts `parley serve` on dir and returns once it says it
// runs, or fails the test with what it said instead.
func startServe(t *testing.T, dir string) *parleyProcess {
	t.Helper()
	p := &parleyProcess{cmd: parleyCommand(dir), stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start parley serve: %v", err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, out)
	}()
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	select {
	case line := <-lines:
		const prefix = "Parley is running at "
		if !strings.HasPrefix(line, prefix) {
			<-p.exited
			t.Fatalf("parley serve printed %q (%v), stderr:\n%s", line, p.err, p.stderr)
		}
		p.url = strings.TrimSpace(strings.TrimPrefix(line, prefix))
	case <-time.After(processWait):
		t.Fatalf("parley serve did not say it runs within %s; stderr:\n%s", processWait, p.stderr)
	}
	return p
}

// stop interrupts p as Ctrl-C does and waits for a clean exit.
func (p *parleyProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt parley serve: %v", err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("parley serve on Ctrl-C: %v; stderr:\n%s", p.err, p.stderr)
		}
	case <-time.After(processWait):
		t.Fatalf("parley serve did not exit within %s of Ctrl-C", processWait)
	}
}

// serveRefused runs `parley serve` on dir, which must refuse at once, and
// returns its error line.
func serveRefused(t *testing.T, dir string) string {
	t.Helper()
	cmd := parleyCommand(dir)
	stdout, stderr := syncBuffer{written: make(chan struct{})}, syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start parley serve: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-stdout.written:
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("a second parley serve on the folder runs: it printed %q", stdout.String())
	case <-time.After(processWait):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("a second parley serve on the folder still runs after %s; stdout %q", processWait, stdout.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("a second parley serve on the folder: %v, want exit status 1; stdout %q, stderr:\n%s", err, stdout.String(), stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("a refused parley serve printed %q", stdout.String())
	}
	return strings.TrimSpace(stderr.String())
}

func readRecord(t *testing.T, dir string) (lockRecord, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec lockRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("parley.lock holds %q: %v", raw, err)
	}
	return rec, string(raw)
}

// Two Parleys on one data folder: the second refuses, naming the first's
// address and pid, and the first's reply — streaming while the second
// tried — completes and is never marked interrupted. Once the first has
// stopped, the next start succeeds; a Parley killed outright leaves its
// record behind, which blocks nothing.
func TestOneParleyPerDataFolder(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()

	// The first Parley, in this process, on a scripted model that holds
	// its reply mid-stream until told to go on.
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	streaming, goOn := make(chan struct{}), make(chan struct{})
	letGo := sync.OnceFunc(func() { close(goOn) })
	t.Cleanup(letGo)
	model.Push(scripted.Reply{Text: "The first half, and the second half.", OnChunk: func(i int, _ string, _ time.Time) {
		if i == 2 {
			close(streaming)
			<-goOn
		}
	}})
	in, err := Open(ctx, Config{DataDir: dir, Workspace: dir, Model: DemoModel, Getenv: func(string) string { return "" }}, Options{Scripted: model})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- in.ServeOn(serveCtx, ln) }()
	firstStopped := false
	stopFirst := func() {
		if firstStopped {
			return
		}
		firstStopped = true
		stopServing()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		in.Close()
	}
	t.Cleanup(stopFirst)
	firstURL := "http://" + ln.Addr().String()

	th, err := in.Runtime.CreateThread(ctx, agentcore.Thread{ResourceID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := in.Runtime.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "Tell me both halves."})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-streaming:
	case <-time.After(processWait):
		t.Fatal("the reply did not start streaming")
	}

	// The second, a process of its own, while the reply streams.
	want := fmt.Sprintf("parley: Parley is already running on this data folder at %s (pid %d)", firstURL, os.Getpid())
	if got := serveRefused(t, dir); got != want {
		t.Errorf("the second parley serve said\n%s\nwant\n%s", got, want)
	}
	if m, err := in.Store.GetMessage(ctx, sent.MessageID); err == nil && m.Status == agentcore.StatusInterrupted {
		t.Fatal("the first Parley's live reply was marked interrupted by the second")
	}

	letGo()
	if err := in.Runtime.Wait(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	m, err := in.Store.GetMessage(ctx, sent.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != agentcore.StatusComplete || m.Content.Text() != "The first half, and the second half." {
		t.Errorf("the first Parley's reply: %s %q, want complete and whole", m.Status, m.Content.Text())
	}

	// Stopped, the first lets the folder go: the next Parley, a process,
	// starts and records its own address and pid (and no token).
	stopFirst()
	third := startServe(t, dir)
	t.Logf("the third Parley (pid %d) printed %s", third.cmd.Process.Pid, third.url)
	rec, raw := readRecord(t, dir)
	if rec.PID != third.cmd.Process.Pid || rec.URL == "" || !strings.HasPrefix(third.url, rec.URL) {
		t.Errorf("parley.lock of the running Parley holds %s; it printed %s and has pid %d", raw, third.url, third.cmd.Process.Pid)
	}
	if strings.Contains(raw, "token") {
		t.Errorf("parley.lock holds a token: %s", raw)
	}
	// Process against process: the refusal names the other process.
	want = fmt.Sprintf("parley: Parley is already running on this data folder at %s (pid %d)", rec.URL, third.cmd.Process.Pid)
	if got := serveRefused(t, dir); got != want {
		t.Errorf("a parley serve beside a running one said\n%s\nwant\n%s", got, want)
	}
	third.stop(t)

	// Killed outright: its record stays, its lock does not.
	killed := startServe(t, dir)
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-killed.exited
	if rec, raw := readRecord(t, dir); rec.PID != killed.cmd.Process.Pid {
		t.Fatalf("after a kill parley.lock holds %s, want the killed process's record", raw)
	}
	after := startServe(t, dir)
	if rec, raw := readRecord(t, dir); rec.PID != after.cmd.Process.Pid {
		t.Errorf("after the stale record parley.lock holds %s, want pid %d", raw, after.cmd.Process.Pid)
	}
	after.stop(t)
}

// The lock within one process: a second taker is refused with the holder's
// record, released it is free again, and a record nobody holds is
// overwritten.
func TestDataLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("parley.lock has mode %v, want 0600", fi.Mode().Perm())
	}
	if err := l.setURL("http://127.0.0.1:4321/?token=secret"); err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	var running *RunningError
	if !errors.As(err, &running) || running.URL != "http://127.0.0.1:4321" || running.PID != os.Getpid() {
		t.Fatalf("second lock: %v, want the holder's address without the token, and pid %d", err, os.Getpid())
	}
	if want := fmt.Sprintf("Parley is already running on this data folder at http://127.0.0.1:4321 (pid %d)", os.Getpid()); err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
	l.release()
	l.release() // twice is harmless
	if err := l.setURL("http://127.0.0.1:1"); err != nil {
		t.Errorf("setURL after release: %v", err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, lockFile)); len(raw) != 0 {
		t.Errorf("a released lock still holds %q", raw)
	}

	// A record left by a Parley that is gone (no lock held on it).
	stale := `{"pid":999999999,"url":"http://127.0.0.1:1"}`
	if err := os.WriteFile(filepath.Join(dir, lockFile), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = lockDataDir(dir)
	if err != nil {
		t.Fatalf("a stale parley.lock blocked: %v", err)
	}
	defer l.release()
	if rec, raw := readRecord(t, dir); rec.PID != os.Getpid() || rec.URL != "" {
		t.Errorf("after taking a stale lock it holds %s", raw)
	}
}

// Open holds the lock until Close, so no path to the database skips it.
func TestOpenHoldsTheLock(t *testing.T) {
	dir := t.TempDir()
	c := Config{DataDir: dir, Workspace: dir, Getenv: func(string) string { return "" }}
	in, err := Open(t.Context(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in.lock.setURL("http://127.0.0.1:1") // as serving would; else the refusal waits for it
	var running *RunningError
	if _, err := Open(t.Context(), c, Options{}); !errors.As(err, &running) || running.URL != "http://127.0.0.1:1" {
		in.Close()
		t.Fatalf("a second Open on the folder: %v, want a *RunningError", err)
	}
	in.Close()
	again, err := Open(t.Context(), c, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

// A second Parley gives the first a moment to record its address, then
// refuses with what it has.
func TestDataLockWaitsForTheAddress(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	synctest.Test(t, func(t *testing.T) {
		go func() {
			time.Sleep(lockAddressWait / 2)
			l.setURL("http://127.0.0.1:5555")
		}()
		start := time.Now()
		_, err := lockDataDir(dir)
		if want := "Parley is already running on this data folder at http://127.0.0.1:5555 (pid " + strconv.Itoa(os.Getpid()) + ")"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		if d := time.Since(start); d < lockAddressWait/2 || d >= lockAddressWait {
			t.Errorf("refused after %s, want once the address is there (%s)", d, lockAddressWait/2)
		}
	})
	// An address never comes: after the wait, the refusal without one.
	l.write(lockRecord{PID: os.Getpid()})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := lockDataDir(dir)
		if want := "Parley is already running on this data folder (pid " + strconv.Itoa(os.Getpid()) + ")"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		if d := time.Since(start); d < lockAddressWait {
			t.Errorf("refused after %s, want after %s", d, lockAddressWait)
		}
	})
}

// A second desktop opens its window on the running Parley with the login
// link its data folder's token makes, or cannot (and refuses).
func TestRunningLoginURL(t *testing.T) {
	dir := t.TempDir()
	running := &RunningError{URL: "http://127.0.0.1:7777", PID: 42}
	if _, err := runningLoginURL(dir, running); err == nil {
		t.Error("a login link without a token file")
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := runningLoginURL(dir, running)
	if want := "http://127.0.0.1:7777/?token=0123456789abcdef0123"; err != nil || got != want {
		t.Errorf("login link %q, %v; want %q", got, err, want)
	}
	if _, err := runningLoginURL(dir, &RunningError{PID: 42}); err == nil {
		t.Error("a login link for a Parley that recorded no address")
	}
}
