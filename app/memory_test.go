package app

import (
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"parley/agentcore"
)

// When a run ends and the heap holds much more than is live (a big reply's
// garbage), the memory is returned once the streams have had time to
// finish; when it does not, nothing is collected.
func TestReturnMemoryAfterRuns(t *testing.T) {
	for _, c := range []struct {
		name  string
		held  uint64
		calls int32
	}{
		{"big reply", memorySlack + 1, 1},
		{"small reply", memorySlack / 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bus := agentcore.NewBus()
				var calls atomic.Int32
				stop := returnMemory(bus, func() uint64 { return c.held }, func() { calls.Add(1) })
				defer stop()
				bus.Publish(agentcore.Event{Type: agentcore.EventTextDelta, ThreadID: "t1", Text: "x"})
				time.Sleep(2 * memorySettle)
				if n := calls.Load(); n != 0 {
					t.Fatalf("released %d times while no run ended", n)
				}
				bus.Publish(agentcore.Event{Type: agentcore.EventFinish, ThreadID: "t1"})
				time.Sleep(memorySettle / 2)
				bus.Publish(agentcore.Event{Type: agentcore.EventError, ThreadID: "t2"})
				time.Sleep(memorySettle / 2)
				synctest.Wait()
				if n := calls.Load(); n != 0 {
					t.Fatalf("released %d times before the last run's streams had settled", n)
				}
				time.Sleep(memorySettle)
				synctest.Wait()
				if n := calls.Load(); n != c.calls {
					t.Fatalf("released %d times, want %d", n, c.calls)
				}
			})
		})
	}
}

// What the heap holds beyond the live is read from the runtime (the
// metrics it reads exist: a wrong name would panic).
func TestHeapBeyondLive(t *testing.T) {
	var keep [][]byte
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	if len(keep) != 64 {
		t.Fatal("allocate")
	}
	keep = nil
	runtime.KeepAlive(keep)
	if n := heapBeyondLive(); n == 0 {
		t.Fatalf("64 MiB of garbage, and the heap holds nothing beyond the live")
	}
	releaseMemory()
}
