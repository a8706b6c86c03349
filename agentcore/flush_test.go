package agentcore

import (
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
