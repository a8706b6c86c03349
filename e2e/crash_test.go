package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBinary runs `parley serve --demo` from the built binary (the desktop
// build has every command), with env added to its environment, and returns
// its base URL once it listens.
func startBinary(t *testing.T, data string, env ...string) (*exec.Cmd, string) {
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
	cmd.Env = append(os.Environ(), env...)
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
// there, marked interrupted, and the thread takes new messages. The
// messages API tells it from a reply the user stopped and one the provider
// failed, which the same process wrote before it was killed.
func TestCrashMidReplyShowsInterrupted(t *testing.T) {
	data := t.TempDir()
	// A provider that refuses every request, as OpenAI does a bad one.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"The model does not exist.","type":"invalid_request_error"}}`)
	}))
	defer refusing.Close()
	env := []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + refusing.URL}
	cmd, base := startBinary(t, data, env...)

	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := func(form url.Values) string {
		t.Helper()
		resp, err := client.PostForm(base+"/threads", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		thread := resp.Header.Get("Location")
		if !strings.HasPrefix(thread, "/t/") {
			t.Fatalf("POST /threads: %s, Location %q", resp.Status, thread)
		}
		return thread
	}
	stopped := start(url.Values{"text": {"give me the long answer"}})
	time.Sleep(500 * time.Millisecond)
	if resp, err := client.PostForm(base+stopped+"/stop", nil); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("stop: %v %v", resp, err)
	}
	failed := start(url.Values{"text": {"hello"}, "model": {"openai/gpt-4o"}})
	thread := start(url.Values{"text": {"give me the long answer"}})
	time.Sleep(1500 * time.Millisecond) // the demo streams ~80 tokens/s: well into the reply
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	_, base = startBinary(t, data, env...)
	for path, want := range map[string]string{thread: "interrupted", stopped: "stopped", failed: "failed"} {
		resp, err := client.Get(base + "/api/memory/threads/" + strings.TrimPrefix(path, "/t/") + "/messages")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Messages []struct{ Role, Status string }
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || len(list.Messages) != 2 || list.Messages[1].Role != "assistant" || list.Messages[1].Status != want {
			t.Fatalf("the messages API on %s: %+v (%v), want the reply %s", path, list.Messages, err, want)
		}
	}

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
