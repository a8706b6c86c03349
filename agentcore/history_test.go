package agentcore

import (
	"encoding/json"
	"math"
	"runtime/metrics"
	"strings"
	"testing"
)

// The builder's snapshot is what the events said: text parts split by
// other parts, reasoning apart from the text, a call's streamed arguments,
// and Content the text of the text parts only.
func TestContentBuilderSnapshot(t *testing.T) {
	var b contentBuilder
	for _, e := range []Event{
		{Type: EventTextDelta, Text: "Let me "},
		{Type: EventTextDelta, Text: "look. "},
		{Type: EventReasoningDelta, Text: "thinking"},
		{Type: EventTextDelta, Text: "Now "},
		{Type: EventToolInputStart, ToolCallID: "c1", ToolName: "write_file"},
		{Type: EventToolCallDelta, ToolCallID: "c1", Text: `{"path":`},
		{Type: EventToolCallDelta, ToolCallID: "c1", Text: `"a.txt"}`},
	} {
		b.apply(e)
	}
	early := b.content()
	b.apply(Event{Type: EventStepStart, Step: 2})
	b.apply(Event{Type: EventTextDelta, Text: "done."})
	c := b.content()

	if c.Content != "Let me look. Now done." {
		t.Fatalf("content %q", c.Content)
	}
	var got []string
	for _, p := range c.Parts {
		switch {
		case p.ToolInvocation != nil:
			got = append(got, p.Type+":"+p.ToolInvocation.ArgsText)
		default:
			got = append(got, p.Type+":"+p.Text)
		}
	}
	want := []string{"text:Let me look. ", "reasoning:thinking", "text:Now ", `tool-invocation:{"path":"a.txt"}`, "step-start:", "text:done."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("parts\n got %q\nwant %q", got, want)
	}
	// An earlier snapshot does not change.
	if early.Content != "Let me look. Now " || len(early.Parts) != 4 || early.Parts[2].Text != "Now " {
		t.Fatalf("the earlier snapshot changed: %q %d parts", early.Content, len(early.Parts))
	}
}

// A resumed run writes on after what was stored: the stored text parts
// keep their text, a delta goes on with the last one, and Content is all
// of it.
func TestContentBuilderLoad(t *testing.T) {
	var b contentBuilder
	b.load(Content{Format: 2, Content: "One. Two.", Parts: []Part{
		{Type: "text", Text: "One. "},
		{Type: "tool-invocation", ToolInvocation: &ToolInvocation{State: "suspended", ToolCallID: "c1", ToolName: "ask"}},
		{Type: "text", Text: "Two."},
	}})
	if c := b.content(); c.Content != "One. Two." || c.Parts[2].Text != "Two." {
		t.Fatalf("loaded: %q, last part %q", c.Content, c.Parts[2].Text)
	}
	b.apply(Event{Type: EventTextDelta, Text: " Three."})
	c := b.content()
	if c.Content != "One. Two. Three." || c.Parts[0].Text != "One. " || c.Parts[2].Text != "Two. Three." {
		t.Fatalf("written on: %q, parts %q %q", c.Content, c.Parts[0].Text, c.Parts[2].Text)
	}
	if c.Parts[1].ToolInvocation.State != "suspended" {
		t.Fatalf("the call: %+v", c.Parts[1].ToolInvocation)
	}
}

// allocatedPer is the bytes allocated by one call of f, on average over
// runs calls.
func allocatedPer(runs int, f func()) float64 {
	var before, after runtimeMem
	before.read()
	for range runs {
		f()
	}
	after.read()
	return float64(after.total-before.total) / float64(runs)
}

// What a streamed delta costs, and what a snapshot of the reply (a store
// write, a page's frame) costs, does not grow with the reply: the text is
// one buffer, appended to, and a snapshot copies none of it. A reply of
// 10 MiB once cost about 70 times its size in memory, partly because
// every snapshot copied all of its text.
func TestContentBuilderCostDoesNotGrowWithTheReply(t *testing.T) {
	delta := strings.Repeat("x", 16)
	for _, kind := range []EventType{EventTextDelta, EventToolCallDelta} {
		t.Run(string(kind), func(t *testing.T) {
			var b *contentBuilder
			e := Event{Type: kind, ToolCallID: "c1", Text: delta}
			grow := func(n int) {
				for range n / len(delta) {
					b.apply(e)
				}
			}
			// Appending: the amortised cost of a growing buffer, a few
			// times a delta's bytes, whether the reply is 64 KiB or 4 MiB
			// long (measured over a doubling, so each measure holds the
			// same share of the buffer's growths). The least of three
			// replies: the count is the process's, and another goroutine
			// (a test's leftover) may allocate meanwhile.
			small, large := math.Inf(1), math.Inf(1)
			for range 3 {
				b = &contentBuilder{}
				if kind == EventToolCallDelta {
					b.apply(Event{Type: EventToolInputStart, ToolCallID: "c1", ToolName: "write_file"})
				}
				grow(64 << 10)
				small = min(small, allocatedPer(1, func() { grow(64 << 10) })/float64(64<<10/len(delta)))
				grow(4<<20 - 128<<10)
				large = min(large, allocatedPer(1, func() { grow(4 << 20) })/float64(4<<20/len(delta)))
			}
			if large > 10*float64(len(delta)) || small > 10*float64(len(delta)) {
				t.Errorf("a %d-byte delta allocates %.0f bytes at 64 KiB, %.0f at 4 MiB", len(delta), small, large)
			}
			// A snapshot of an 8 MiB reply costs what one of a few parts
			// does, not its text.
			snap := allocatedPer(20, func() { _ = b.content() })
			for range 4 { // the least of five: another goroutine may allocate meanwhile
				snap = min(snap, allocatedPer(20, func() { _ = b.content() }))
			}
			if snap > 1024 {
				t.Errorf("a snapshot of an 8 MiB reply allocates %.0f bytes", snap)
			}
			c := b.content()
			n := len(c.Content)
			if kind == EventToolCallDelta {
				n = len(c.Parts[0].ToolInvocation.ArgsText)
			}
			if want := 8 << 20; n != want {
				t.Fatalf("the snapshot holds %d bytes, want %d", n, want)
			}
		})
	}
}

// The stored form of a snapshot is the same as ever: Content and the
// text parts carry the text.
func TestContentBuilderJSON(t *testing.T) {
	var b contentBuilder
	b.apply(Event{Type: EventTextDelta, Text: "Hello"})
	b.apply(Event{Type: EventTextDelta, Text: ", world"})
	got, err := json.Marshal(b.content())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(TextContent("Hello, world"))
	if string(got) != string(want) {
		t.Fatalf("stored as\n%s\nwant\n%s", got, want)
	}
}

// runtimeMem reads the bytes this process has allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	m.total = s[0].Value.Uint64()
}
