package agentcore

import (
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
