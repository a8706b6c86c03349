package ui_test

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

// streamLine is one line a stream sent, with the stream's index.
type streamLine struct {
	stream int
	text   string
}

// openStream opens a long-lived stream and sends each line it reads to
// lines, until ctx ends.
func (e *apiEnv) openStream(ctx context.Context, i int, path string, lines chan<- streamLine) {
	e.t.Helper()
	resp := e.do(e.request(ctx, "GET", path))
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			select {
			case lines <- streamLine{i, sc.Text()}:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// The inbox is computed once per change, however many pages are open: five
// inbox streams and five chat streams, one notification, one computation,
// and every page shows it.
func TestInboxComputedOncePerChange(t *testing.T) {
	e := newAPIEnv(t, func(a *agentcore.Agent) {
		a.DeliveryPolicy = &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}
	})
	threads := []string{e.thread(), e.thread()}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var paths []string
	for i := range 5 {
		paths = append(paths, "/inbox/stream", "/t/"+threads[i%2]+"/stream")
	}
	lines := make(chan streamLine, 1024)
	for i, p := range paths {
		e.openStream(ctx, i, p, lines)
	}
	// waitAll waits until every stream has sent a line containing want.
	waitAll := func(want string) {
		t.Helper()
		seen := map[int]bool{}
		deadline := time.After(10 * time.Second)
		for len(seen) < len(paths) {
			select {
			case l := <-lines:
				if strings.Contains(l.text, want) {
					seen[l.stream] = true
				}
			case <-deadline:
				t.Fatalf("%d of %d streams showed %q", len(seen), len(paths), want)
			}
		}
	}
	// settle lets any computation a burst started end (the inbox
	// coalesces a burst for ~100 ms).
	settle := func() { time.Sleep(500 * time.Millisecond) }

	waitAll(`id="inbox-list"`)
	settle()
	before := e.srv.InboxComputations()

	e.call("POST", "/api/notifications", `{"threadId":"`+threads[0]+`","source":"ci","kind":"build","summary":"Build 42 failed"}`, 201)
	waitAll("Build 42 failed")
	settle()
	if n := e.srv.InboxComputations() - before; n != 1 {
		t.Fatalf("one notification with %d pages open: the inbox was computed %d times, want 1", len(paths), n)
	}
}
