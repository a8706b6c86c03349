package ui_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// A reply far larger than a frame reaches the page a pace at a time, each
// large frame asking the page to acknowledge it. A page that answers gets
// the next frame at once; one that never answers still gets the whole
// reply, each frame after ackTimeout: a lost answer never stalls a stream.
func TestStreamFlowControl(t *testing.T) {
	text := paragraphs(40 << 10)
	for _, answer := range []bool{true, false} {
		t.Run(fmt.Sprintf("answer=%v", answer), func(t *testing.T) {
			e, th, lines := watchedThread(t)
			// In pieces larger than the page's pace, so that it is behind
			// however fast the machine: every paced frame waits for it.
			var pieces []string
			for rest := text; rest != ""; {
				n := min(len(rest), 10<<10)
				pieces, rest = append(pieces, rest[:n]), rest[n:]
			}
			// The rest waits until the page has the reply's first frame: a
			// run that ended before the stream's first frame (a starved
			// machine, four pieces) would come whole, no frame paced.
			shown := make(chan struct{})
			e.model.Push(scripted.Reply{Text: text, Tokens: pieces, OnChunk: func(i int, _ string, _ time.Time) {
				if i == 0 {
					select {
					case <-shown:
					case <-time.After(10 * time.Second):
					}
				}
			}})
			start := time.Now()
			if code, body := e.post("/t/"+th+"/send", `{"draft":"go"}`); code != 200 {
				t.Fatalf("send: %d %s", code, body)
			}
			asked, isShown := 0, false
			deadline := time.After(30 * time.Second)
			for {
				select {
				case l := <-lines:
					if !isShown && strings.Contains(l.text, "msg-assistant") {
						close(shown)
						isShown = true
					}
					if u := ackOf(t, l.text); u != "" {
						asked++
						if answer {
							acknowledge(t, e, u)
						}
					}
					if strings.Contains(l.text, "msg-assistant status-complete") {
						took := time.Since(start)
						if asked < 3 {
							t.Fatalf("%d frames asked for an answer, want one per paced frame", asked)
						}
						t.Logf("%d frames asked; complete after %v", asked, took)
						if answer && took > time.Duration(asked)*ackTimeout/2 {
							t.Fatalf("answered frames took %v: the stream waited for timeouts", took)
						}
						return
					}
				case <-deadline:
					t.Fatalf("the reply was not complete after 30 s (%d frames asked)", asked)
				}
			}
		})
	}
}

// ackTimeout is ui's (flow.go).
const ackTimeout = 500 * time.Millisecond

// What follows a text the page is behind (a tool's card, a question)
// waits for the text: the card comes after the text's last paragraph, not
// before it, below text still to come (a question a reader scrolled to
// was pushed away, and the view followed it as the text grew).
func TestStreamHoldsWhatFollowsText(t *testing.T) {
	text := paragraphs(40 << 10)
	last := text[strings.LastIndex(strings.TrimSuffix(text, "\n\n"), "Paragraph "):]
	last = last[:strings.IndexByte(last, ',')]
	e, th, lines := watchedThread(t)
	e.model.Push(scripted.Reply{Text: text, ChunkSize: 10 << 10, ToolCalls: []scripted.ToolCall{{Name: "weather", Args: `{"city":"Oslo"}`}}})
	if code, body := e.post("/t/"+th+"/send", `{"draft":"go"}`); code != 200 {
		t.Fatalf("send: %d %s", code, body)
	}
	seen := false
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if u := ackOf(t, l.text); u != "" {
				acknowledge(t, e, u)
			}
			seen = seen || strings.Contains(l.text, last+",")
			if strings.Contains(l.text, `data-tool-name="weather"`) {
				if !seen {
					t.Fatalf("the card came before the text's last paragraph (%s)", last)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no card after 30 s (the last paragraph seen: %v)", seen)
		}
	}
}

// paragraphs is about size bytes of numbered paragraphs.
func paragraphs(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Paragraph %d, long enough to be a line of a real reply.\n\n", i)
	}
	return b.String()
}

// watchedThread is a new thread with its page's stream open: each line the
// stream sends arrives on lines, until the test ends. It returns once the
// stream has sent the thread's state (empty), as a page has it before its
// reader types: a reply sent sooner shows in that state as far as it got,
// and what follows it is not paced from its start.
func watchedThread(t *testing.T) (*apiEnv, string, chan streamLine) {
	e := newAPIEnv(t)
	th := e.thread()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	lines := make(chan streamLine, 4096)
	e.openStream(ctx, 0, "/t/"+th+"/stream", lines)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l.text, `id="messages-empty"`) {
				return e, th, lines
			}
		case <-deadline:
			t.Fatal("the stream sent no state of the new thread in 10 s")
		}
	}
}

var ackURL = regexp.MustCompile(`parleyAck\(([^)]*)\)`)

// ackOf is the acknowledgement URL a stream line asks the page to post,
// or "".
func ackOf(t *testing.T, line string) string {
	t.Helper()
	m := ackURL.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	var u string
	if _, err := fmt.Sscanf(html.UnescapeString(m[1]), "%q", &u); err != nil {
		t.Fatalf("ack url %s: %v", m[1], err)
	}
	return u
}

// acknowledge posts the page's acknowledgement u.
func acknowledge(t *testing.T, e *apiEnv, u string) {
	t.Helper()
	if code, _ := e.post(u, ""); code != 204 {
		t.Fatalf("ack: %d", code)
	}
}
