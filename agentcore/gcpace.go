package agentcore

import (
	"runtime/debug"
	"sync"
)

// While a big reply streams, Go's collector runs more often. With the
// default GOGC of 100 the heap may grow to twice what the last collection
// found live before the next one: a reply of N bytes is live (its one
// buffer, and the buffer it is being copied out of while it grows), so a
// 10 MiB reply let the heap reach four to five times its size of mostly
// garbage (the events of the stream, the store's writes), which the
// process keeps resident. With GOGC at tightGCPercent the heap grows by a
// quarter of what is live instead; a collection of such a heap is cheap,
// as the reply's buffer holds no pointers to scan.
const (
	// tightFrom is how much text or argument a run streams before the
	// collector is tightened: smaller replies cost a few MiB at most.
	tightFrom = 2 << 20
	// tightGCPercent is GOGC while a big reply streams.
	tightGCPercent = 25
)

// gcPace counts the runs that hold the collector tight; the first sets
// GOGC to tightGCPercent and the last puts back what it was.
var gcPace struct {
	mu   sync.Mutex
	runs int
	prev int
}

// setGCPercent is debug.SetGCPercent; a test records its calls.
var setGCPercent = debug.SetGCPercent

// tightenGC holds the collector tight until the returned func is called
// (once).
func tightenGC() (loosen func()) {
	gcPace.mu.Lock()
	if gcPace.runs == 0 {
		prev := setGCPercent(tightGCPercent)
		if prev < tightGCPercent {
			setGCPercent(prev) // GOGC set by the user: already tighter, or off (a memory limit rules)
		}
		gcPace.prev = prev
	}
	gcPace.runs++
	gcPace.mu.Unlock()
	return sync.OnceFunc(func() {
		gcPace.mu.Lock()
		defer gcPace.mu.Unlock()
		if gcPace.runs--; gcPace.runs == 0 {
			setGCPercent(gcPace.prev)
		}
	})
}
