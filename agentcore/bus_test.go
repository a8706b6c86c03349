package agentcore

import (
	"strings"
	"testing"
)

// A reader that falls mergeFrom events behind gets a stream's waiting
// deltas as one event with all their text, in order; other events, and
// deltas of another call, step or kind, stay as they came. A reader that
// keeps up gets every delta.
func TestBusMergesWaitingDeltas(t *testing.T) {
	b := NewBus()
	s := b.Subscribe("t")
	defer s.Close()
	delta := func(typ EventType, call, text string) Event {
		return Event{Type: typ, ThreadID: "t", RunID: "r", MessageID: "m", Step: 1, ToolCallID: call, Text: text}
	}
	for range 3 {
		b.Publish(delta(EventTextDelta, "", "x"))
	}
	if q := s.Drain(); len(q) != 3 {
		t.Fatalf("a reader that keeps up got %d events for 3 deltas", len(q))
	}
	var behind []Event
	for range mergeFrom {
		behind = append(behind, Event{Type: EventToolResult, ThreadID: "t"})
	}
	in := append(behind,
		delta(EventTextDelta, "", "Hel"), delta(EventTextDelta, "", "lo "), delta(EventTextDelta, "", "there"),
		delta(EventReasoningDelta, "", "hmm"),
		delta(EventTextDelta, "", "!"),
		Event{Type: EventToolInputStart, ThreadID: "t", ToolCallID: "c1"},
		delta(EventToolCallDelta, "c1", `{"a":`), delta(EventToolCallDelta, "c1", `1}`),
		delta(EventToolCallDelta, "c2", `{}`),
	)
	for _, e := range in {
		b.Publish(e)
	}
	var got []string
	for _, e := range s.Drain()[mergeFrom:] {
		got = append(got, string(e.Type)+":"+e.ToolCallID+":"+e.Text)
	}
	want := []string{"text-delta::Hello there", "reasoning-delta::hmm", "text-delta::!", "tool-call-input-streaming-start:c1:",
		`tool-call-delta:c1:{"a":1}`, "tool-call-delta:c2:{}"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("drained\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
