package app

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"parley/agentcore"
)

// A big reply needs memory while it streams (its text, each store write
// of it, what the pages and API clients are sent), all of it garbage once
// its run has ended. Go collects only when the heap grows again or every
// two minutes, and hands freed memory back to the system slowly: after a
// 10 MiB reply the server kept a few hundred MB for minutes. So when runs
// have ended and the heap holds much more than is live, it is collected
// and returned at once.
const (
	// memorySettle is how long after the last run ended the heap is
	// looked at: the streams that carried a reply finish sending it.
	memorySettle = 2 * time.Second
	// memorySlack is how much more than the live heap Go may hold before
	// handing it back is worth a collection (a few ms on an idle heap, at
	// most once per run ended). At 64 MiB a 10 MiB reply, whose reading
	// back no longer leaves several times its size of garbage, left 4-6x
	// its size resident; an ordinary reply leaves a few MiB.
	memorySlack = 16 << 20
)

// subscriber is what events come from: the runtime (or a bus in tests).
type subscriber interface {
	Subscribe(thread string, types ...agentcore.EventType) *agentcore.Subscription
}

// returnMemory watches for runs ending and, memorySettle after the last
// one, calls release when held says the heap holds more than memorySlack
// beyond what is live. stop ends it.
func returnMemory(events subscriber, held func() uint64, release func()) (stop func()) {
	sub := events.Subscribe("", agentcore.EventFinish, agentcore.EventAbort, agentcore.EventError)
	done := make(chan struct{})
	go func() {
		defer sub.Close()
		settle := time.NewTimer(memorySettle)
		settle.Stop()
		for {
			select {
			case <-done:
				settle.Stop()
				return
			case <-sub.Ready():
				sub.Drain()
				settle.Reset(memorySettle)
			case <-settle.C:
				if held() > memorySlack {
					release()
				}
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// heapBeyondLive is how much heap memory Go holds (in use by objects, live
// or not yet collected, or free and not yet returned) beyond what is live.
// It collects first: the last collection may have run mid-reply, while the
// reply was still live, and measured against that nothing looks worth
// returning (a 10 MiB reply then left 11-15x its size held). Runs end at a
// person's pace, so the collection, a few ms on an idle heap, is cheap.
func heapBeyondLive() uint64 {
	runtime.GC()
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	held := s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64()
	live := s[3].Value.Uint64()
	if held < live {
		return 0
	}
	return held - live
}

// releaseMemory collects twice (a pooled buffer, such as a JSON encoder's
// that grew to a whole reply, survives the first) and returns what is free
// to the system.
func releaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
