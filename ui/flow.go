package ui

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/components"
)

// Flow control of a chat stream. A page applies what one network read
// brings in one task: when it falls behind a fast reply, the frames that
// piled up meanwhile arrive together and make the next task longer still,
// until the page freezes for whole seconds (1 MiB of reply at full speed).
// So a frame that carries much (ackMin, or a page behind its reply) ends
// with a request to acknowledge it, which the page answers once it has
// applied and drawn it; the stream sends nothing more until then. The
// model's text meanwhile waits on the server, where the next frame takes
// up to a pace of it, so the page gets one frame per task, as fast as it
// can draw them. An answer that never comes (a page that is gone, a lost
// request) holds the stream back at most ackTimeout.

// ackMin is the patch size from which a frame waits for the page: a
// frame of a few tokens is drawn in well under a frame's time, and asking
// for every one would cost a request per frame for nothing.
const ackMin = 4 << 10

// ackReplaceMin is the size from which a replaced open block counts
// towards ackMin: below it, waiting for the page would cost a fast reply
// a round trip per frame (the end of a 20,000 tok/s stream came up to
// 100 ms late) for a patch the page draws at once.
const ackReplaceMin = 16 << 10

// ackTimeout is how long a stream waits for an acknowledgement before it
// sends again anyway: a page that draws a frame in longer than this is
// frozen whatever we do, and a lost answer must not stop the stream.
const ackTimeout = 500 * time.Millisecond

// The pace of a page behind its reply (liveReply's paced) follows how
// fast the page answers frames that mostly add to it: one it answers
// within paceQuick was drawn within a frame's time, and the next may
// carry twice as much, up to paceMax; one it answers after paceSlow made
// a task longer than a user can miss (input waits behind it), and the
// next carries half, down to paceMin, as after one it does not answer at
// all (ackTimeout). A stream starts at paceMin: a page's first frames of
// a reply are its slowest (code not yet optimised, words not yet shaped,
// layout objects made for the first time), and took 60-95 ms at 8 KiB and
// 54-75 ms at 2 KiB; at 1 KiB most runs have none over 50 ms. A frame
// that mostly replaces (a long open paragraph, a card) costs the page what
// it replaces whatever the pace, and a smaller pace would only make more
// of them: the pace goes to paceMax (a 140 KB paragraph written at 20,000 tokens a second came
// 0.3-0.6 s late to the screen at paceMin).
const (
	paceMin   = 1 << 10
	paceMax   = 8 << 10
	paceQuick = 2 * frame
	paceSlow  = 3 * frame
)

// gate is one stream's flow control: whether a frame waits for the page,
// and how much text the next frame of a page behind its reply carries.
type gate struct {
	token   string      // the stream's, in the page's acknowledgements
	acks    chan uint64 // acknowledged frame numbers, newest kept
	seq     uint64      // the last frame asked to be acknowledged
	waiting bool        // that frame is not acknowledged yet
	asked   time.Time   // when it was asked
	adds    bool        // it mostly added to the page (askAck)
	timer   *time.Timer // ends the wait after ackTimeout
	pace    int         // the most Markdown the next frame sends of a text
}

func newGate() *gate {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail
	return &gate{token: hex.EncodeToString(b[:]), acks: make(chan uint64, 1), pace: paceMin}
}

// ask starts waiting for the acknowledgement of a new frame, which mostly
// added to the page when adds says so, and returns its number.
func (g *gate) ask(adds bool) uint64 {
	g.seq++
	g.waiting = true
	g.asked = time.Now()
	g.adds = adds
	if g.timer == nil {
		g.timer = time.NewTimer(ackTimeout)
	} else {
		g.timer.Reset(ackTimeout)
	}
	return g.seq
}

// expired is the timer's channel while the gate waits, else nil.
func (g *gate) expired() <-chan time.Time {
	if !g.waiting {
		return nil
	}
	return g.timer.C
}

// acked takes the page's acknowledgement of frame n: the wait ends when it
// is the frame waited for (or a later one).
func (g *gate) acked(n uint64) {
	if n >= g.seq && g.waiting {
		g.waiting = false
		switch took := time.Since(g.asked); {
		case !g.adds:
			g.pace = paceMax
		case took <= paceQuick:
			g.pace = min(2*g.pace, paceMax)
		case took > paceSlow:
			g.pace = max(g.pace/2, paceMin)
		}
	}
}

// timedOut ends the wait: the acknowledgement is late or lost, which
// counts as a slow answer.
func (g *gate) timedOut() {
	g.waiting = false
	g.pace = max(g.pace/2, paceMin)
}

func (g *gate) stop() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// deliver hands the page's acknowledgement of frame n to the stream,
// never blocking: when one is already queued, the newer one wins.
func (g *gate) deliver(n uint64) {
	for {
		select {
		case g.acks <- n:
			return
		default:
		}
		select {
		case old := <-g.acks:
			n = max(n, old)
		default:
		}
	}
}

// askAck ends the frame with a request to acknowledge it: app.js's
// parleyAck posts the URL once the page has drawn the frame. The request
// is an element whose data-init calls it and removes the element (the
// page's CSP runs no inline script; Datastar's expressions it does run).
// It goes into the stream's own element, found by id: a selector such as
// "body" makes the page search its whole document for every frame (1 MiB
// of reply is 200,000 elements; over such a stream the searches took
// 245 ms of the page's script, a V8 profile showed).
func (v *chatStream) askAck() error {
	n := v.gate.ask(v.frameAdded >= v.frameReplaced)
	u := "/t/" + url.PathEscape(v.id) + "/ack?s=" + v.gate.token + "&n=" + strconv.FormatUint(n, 10)
	return v.sse.PatchElements(renderString(components.AckRequest(u)), datastar.WithSelectorID(components.StreamID), datastar.WithModeAppend())
}

// ack answers POST /t/{id}/ack?s=token&n=frame, a page's acknowledgement
// that it has drawn a frame of its chat's stream. A stream that has ended
// is no error: its page just had not heard yet.
func (s *Server) ack(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseUint(r.URL.Query().Get("n"), 10, 64)
	if err != nil {
		http.Error(w, "bad acknowledgement: want ?s=stream&n=frame", http.StatusBadRequest)
		return
	}
	if g, ok := s.gates.Load(r.URL.Query().Get("s")); ok {
		g.(*gate).deliver(n)
	}
	w.WriteHeader(http.StatusNoContent)
}

// sent counts the bytes of HTML a frame patches, for ackMin.
func (v *chatStream) sent(html string) { v.frameBytes += len(html) }
