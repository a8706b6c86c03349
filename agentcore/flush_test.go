package agentcore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A long reply is written whole on every flush: the pause after a write
// grows with what it cost, so the store never takes more than a twentieth
// of the time, and a short reply is still written every flushInterval.
func TestFlushWaitGrowsWithTheWrite(t *testing.T) {
	if got := flushWait(100 * time.Microsecond); got != flushInterval {
		t.Fatalf("a cheap write waits %v, want %v", got, flushInterval)
	}
	if got := flushWait(10 * time.Millisecond); got != 200*time.Millisecond {
		t.Fatalf("a 10 ms write waits %v, want 200ms", got)
	}
}

// What a model answers becomes a title: one line, no label, quotes or full
// stop, cut like a first message's.
func TestCleanTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Dark theme plan":                   "Dark theme plan",
		"Title: \"Dark theme plan\".":       "Dark theme plan",
		"**Refactor the parser**\nbecause…": "Refactor the parser",
		"  “Quoted”  ":                      "Quoted",
		"":                                  "",
		strings.Repeat("word ", 30):         strings.TrimSpace(strings.Repeat("word ", 12)) + "…",
	} {
		if got := cleanTitle(in); got != want {
			t.Errorf("cleanTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// updateOnly is a store that records the statuses of the replies written.
type updateOnly struct {
	Store
	wrote []MessageStatus
}

func (s *updateOnly) UpdateMessage(_ context.Context, _ string, _ Content, st MessageStatus) error {
	s.wrote = append(s.wrote, st)
	return nil
}

// The final write of a big reply, and only that write, comes after the
// heap's free memory is handed back; text, reasoning and arguments count.
func TestReleaseBeforeBigFinalWrite(t *testing.T) {
	released := 0
	defer func(f func()) { releaseMemory = f }(releaseMemory)
	releaseMemory = func() { released++ }
	big := strings.Repeat("x", releaseBefore/2)
	for _, c := range []struct {
		name   string
		events []Event
		want   int
	}{
		{"short", []Event{{Type: EventTextDelta, Text: "hello"}}, 0},
		{"text", []Event{{Type: EventTextDelta, Text: big}, {Type: EventTextDelta, Text: big}}, 1},
		{"reasoning and text", []Event{{Type: EventReasoningDelta, Text: big}, {Type: EventTextDelta, Text: big}}, 1},
		{"arguments", []Event{{Type: EventToolInputStart, ToolCallID: "c1", ToolName: "write_file"},
			{Type: EventToolCallDelta, ToolCallID: "c1", Text: big + big}}, 1},
		{"called", []Event{{Type: EventToolInputStart, ToolCallID: "c1", ToolName: "write_file"},
			{Type: EventToolCall, ToolCallID: "c1", Args: json.RawMessage(`"` + big + big + `"`)}}, 1},
	} {
		released = 0
		store := &updateOnly{}
		rt := NewRuntime(store, nil)
		l := &liveRun{msgID: "m1"}
		for _, e := range c.events {
			l.apply(e)
		}
		for _, st := range []MessageStatus{StatusStreaming, StatusStreaming, StatusComplete} {
			if err := rt.write(l, st, nil); err != nil {
				t.Fatal(err)
			}
		}
		if released != c.want || len(store.wrote) != 3 {
			t.Errorf("%s: %d releases over %d writes, want %d over 3", c.name, released, len(store.wrote), c.want)
		}
	}
}
