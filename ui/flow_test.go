package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/ui/markdown"
)

// A frame that waits for the page's answer waits ackTimeout at most: a
// lost answer never stalls the stream. An answer to an older frame does
// not end the wait for a newer one; a newer answer does.
func TestGateLostAckDoesNotStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		defer g.stop()
		if g.waiting || g.expired() != nil {
			t.Fatal("a new gate waits")
		}
		n := g.ask(true)
		start := time.Now()
		select {
		case <-g.expired():
			g.timedOut()
		case <-time.After(time.Minute):
			t.Fatal("no timeout")
		}
		if waited := time.Since(start); waited != ackTimeout || g.waiting {
			t.Fatalf("waited %v (waiting %v), want %v", waited, g.waiting, ackTimeout)
		}

		m := g.ask(true)
		if m != n+1 {
			t.Fatalf("frames %d then %d", n, m)
		}
		g.acked(n) // late answer to the frame before
		if !g.waiting {
			t.Fatal("an old frame's answer ended the wait")
		}
		g.deliver(m)
		g.acked(<-g.acks)
		if g.waiting || g.expired() != nil {
			t.Fatal("the answer did not end the wait")
		}
	})
}

// A page behind its reply gets frames as large as it draws in time: the
// pace starts at paceMin, doubles up to paceMax while the page answers
// within paceQuick, halves when it answers after paceSlow or not at all;
// frames that mostly replace open it to paceMax.
func TestGatePaceFollowsThePage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		defer g.stop()
		answer := func(after time.Duration) int {
			n := g.ask(true)
			time.Sleep(after)
			g.acked(n)
			return g.pace
		}
		if g.pace != paceMin {
			t.Fatalf("a new stream's pace is %d, want %d", g.pace, paceMin)
		}
		want := []int{2 * paceMin, 4 * paceMin, paceMax, paceMax}
		for i, w := range want {
			if got := answer(paceQuick); got != w {
				t.Fatalf("after %d quick answers the pace is %d, want %d", i+1, got, w)
			}
		}
		if got := answer(paceSlow); got != paceMax {
			t.Fatalf("an answer between quick and slow changed the pace to %d", got)
		}
		if got := answer(paceSlow + time.Millisecond); got != paceMax/2 {
			t.Fatalf("after a slow answer the pace is %d, want %d", got, paceMax/2)
		}
		for range 5 {
			answer(time.Second / 5)
		}
		if g.pace != paceMin {
			t.Fatalf("slow answers leave the pace at %d, want %d", g.pace, paceMin)
		}
		answer(0)
		answer(0)
		g.ask(true)
		<-g.expired()
		g.timedOut()
		if g.pace != 2*paceMin {
			t.Fatalf("an unanswered frame after a pace of %d leaves it at %d, want %d", 4*paceMin, g.pace, 2*paceMin)
		}
		g.ask(true)
		<-g.expired()
		g.timedOut()
		n := g.ask(true)
		g.acked(n)
		g.acked(n) // a second answer to the same frame counts once
		if g.pace != 2*paceMin {
			t.Fatalf("pace %d after one quick answer given twice, want %d", g.pace, 2*paceMin)
		}
		// A frame that mostly replaced costs what it replaced: the pace
		// does not shrink for it, it opens.
		n = g.ask(false)
		time.Sleep(paceSlow * 4)
		g.acked(n)
		if g.pace != paceMax {
			t.Fatalf("pace %d after a slow frame that mostly replaced, want %d", g.pace, paceMax)
		}
	})
}

// deliver never blocks, and keeps the newest answer.
func TestGateDeliverKeepsNewest(t *testing.T) {
	g := newGate()
	for _, n := range []uint64{3, 7, 5} {
		g.deliver(n)
	}
	if got := <-g.acks; got != 7 {
		t.Fatalf("got %d, want 7", got)
	}
}

// POST /t/{id}/ack hands the answer to the stream with the token; one for
// a stream that is gone is no error, a malformed one is.
func TestAckHandler(t *testing.T) {
	s := testServer(t, nil)
	h := s.Handler()
	g := newGate()
	s.gates.Store(g.token, g)
	hdr := map[string]string{"Origin": "http://127.0.0.1:7777"}
	if w := do(h, "POST", "/t/x/ack?s="+g.token+"&n=4", hdr); w.Code != http.StatusNoContent {
		t.Fatalf("ack: %d %s", w.Code, w.Body)
	}
	if got := <-g.acks; got != 4 {
		t.Fatalf("delivered %d", got)
	}
	if w := do(h, "POST", "/t/x/ack?s=gone&n=4", hdr); w.Code != http.StatusNoContent {
		t.Fatalf("ack of an ended stream: %d", w.Code)
	}
	if w := do(h, "POST", "/t/x/ack?s="+g.token+"&n=x", hdr); w.Code != http.StatusBadRequest {
		t.Fatalf("bad ack: %d", w.Code)
	}
}

// What a frame adds makes it wait for the page; re-sending a fast reply's
// open paragraph does not, unless it is large.
func TestFrameBytesCountWhatAFrameAdds(t *testing.T) {
	v := &chatStream{sse: datastar.NewSSE(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))}
	open := strings.Repeat("x", 5<<10)
	if err := v.apply([]markdown.Op{{Mode: markdown.Replace, ID: "m-o1", HTML: open}}); err != nil {
		t.Fatal(err)
	}
	if v.frameBytes >= ackMin {
		t.Fatalf("a 5 KiB open block re-sent counts %d bytes: every frame of a fast reply would wait", v.frameBytes)
	}
	if err := v.apply([]markdown.Op{{Mode: markdown.Before, ID: "m-o1", HTML: open}}); err != nil {
		t.Fatal(err)
	}
	if v.frameBytes < ackMin {
		t.Fatalf("5 KiB of finished blocks count %d bytes", v.frameBytes)
	}
	v.frameBytes = 0
	if err := v.apply([]markdown.Op{{Mode: markdown.Replace, ID: "m-o1", HTML: strings.Repeat("y", ackReplaceMin)}}); err != nil {
		t.Fatal(err)
	}
	if v.frameBytes < ackMin {
		t.Fatal("a large open block re-sent does not count")
	}
}
