package e2e

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBinary runs `parley serve --demo` from the built binary (the desktop
// build has every command) and returns its base URL once it listens.
func startBinary(t *testing.T, data string) (*exec.Cmd, string) {
	t.Helper()
	watch(t)
	bin := os.Getenv("PARLEY_DESKTOP_BIN")
	if bin == "" {
		t.Fatal("PARLEY_DESKTOP_BIN is not set: run the e2e tests with `make test` or `make e2e`, which build bin/parley-desktop")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--demo", "--addr", addr, "--data", data)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "http://"+addr+"/?token=") {
		t.Fatalf("parley serve printed %q, %v; want its login address", line, err)
	}
	login, _ := url.Parse(strings.TrimSpace(line[strings.Index(line, "http://"):]))
	rememberToken("http://"+addr, login.Query().Get("token"))
	return cmd, "http://" + addr
}

// Kill -9 in the middle of a reply: at the next start the partial reply is
// there, marked interrupted, and the thread takes new messages.
func TestCrashMidReplyShowsInterrupted(t *testing.T) {
	data := t.TempDir()
	cmd, base := startBinary(t, data)

	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/threads", url.Values{"text": {"give me the long answer"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	thread := resp.Header.Get("Location")
	if !strings.HasPrefix(thread, "/t/") {
		t.Fatalf("POST /threads: %s, Location %q", resp.Status, thread)
	}
	time.Sleep(1500 * time.Millisecond) // the demo streams ~80 tokens/s: well into the reply
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	_, base = startBinary(t, data)
	pg := incognito(t).MustPage(signedIn(base + thread))
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=interrupted]') !== null`)
	note := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-note').innerText`)
	if !strings.HasPrefix(note, "Interrupted") {
		t.Fatalf("note = %q", note)
	}
	text := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText`)
	if !strings.Contains(text, "A longer answer") {
		t.Fatalf("the partial reply was lost: %q", text)
	}
	pg.MustElement("#draft").MustInput("hello again")
	pg.MustElement("#send").MustClick()
	waitJS(t, pg, `() => document.querySelectorAll('#messages .msg-assistant').length === 2`)
}
