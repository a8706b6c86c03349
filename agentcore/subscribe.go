package agentcore

import (
	"context"
	"iter"
	"sync"
)

// ThreadSubscription follows every run of one thread (Mastra's
// subscribeToThread): the events of each run in turn, as they happen.
// Ending it stops nothing.
type ThreadSubscription struct {
	rt       *Runtime
	threadID string
	sub      *Subscription
	done     chan struct{}
	once     sync.Once
}

// SubscribeThread starts following threadID. Subscribe before sending, so
// nothing of the run is missed.
func (rt *Runtime) SubscribeThread(threadID string) *ThreadSubscription {
	return &ThreadSubscription{rt: rt, threadID: threadID, sub: rt.bus.Subscribe(threadID), done: make(chan struct{})}
}

// Events yields the run events of the thread (thread-level ones — a
// message added, a title changed — are left out) until ctx ends or
// Unsubscribe is called.
func (s *ThreadSubscription) Events(ctx context.Context) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.done:
				return
			case <-s.sub.Ready():
			}
			for _, e := range s.sub.Drain() {
				switch e.Type {
				case EventMessage, EventMessageUpdated, EventThread, EventTasks, EventNotification:
					continue
				}
				if !yield(e) {
					return
				}
			}
		}
	}
}

// ActiveRunID is the id of the thread's run in progress, "" when idle.
func (s *ThreadSubscription) ActiveRunID() string {
	if l, ok := s.rt.Live(s.threadID); ok {
		return l.Run.ID
	}
	return ""
}

// Abort stops the thread's run — in progress, or waiting for the user — and
// waits until its final state is written; it reports whether there was one.
func (s *ThreadSubscription) Abort() bool { return s.rt.Stop(context.Background(), s.threadID) }

// Unsubscribe stops following the thread without stopping its run.
func (s *ThreadSubscription) Unsubscribe() {
	s.once.Do(func() {
		s.sub.Close()
		close(s.done)
	})
}
