package agentcore

import (
	"strings"
	"sync"
)

// Bus fans events out to subscribers, per thread. A subscription never
// blocks the publisher and never loses an event: each subscriber has its own
// unbounded queue and a wake-up channel, so a slow reader (a throttled
// background tab) costs memory, never the run's progress. Once a reader
// is mergeFrom events behind, deltas of one stream (text, reasoning, one
// call's arguments) that follow each other in its queue are merged into one
// event with all their text: a slow reader costs the text it has not read
// yet, not an Event of ~400 bytes per token. A reader that keeps up sees
// every delta as it came. Readers that only render state may drain the queue in one go and
// coalesce.
type Bus struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{} // thread id ("" = every thread) → subscribers
}

// mergeFrom is how long a queue grows before its deltas merge: a reader
// that far behind (~100 KB of events) gains nothing from the pieces.
const mergeFrom = 256

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[string]map[*Subscription]struct{}{}} }

// Subscription receives the events of one thread (or of all threads).
type Subscription struct {
	bus    *Bus
	thread string
	types  map[EventType]bool // nil: every type
	mu     sync.Mutex
	queue  []Event
	// tail holds the text of the queue's last event while deltas merge
	// into it (push): appending to it keeps a long merge linear.
	tail   *strings.Builder
	wake   chan struct{}
	closed bool
}

// Subscribe starts receiving the events of thread; "" receives every
// thread's. With types, only events of those types are queued.
func (b *Bus) Subscribe(thread string, types ...EventType) *Subscription {
	s := &Subscription{bus: b, thread: thread, wake: make(chan struct{}, 1)}
	if len(types) > 0 {
		s.types = map[EventType]bool{}
		for _, t := range types {
			s.types[t] = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[thread] == nil {
		b.subs[thread] = map[*Subscription]struct{}{}
	}
	b.subs[thread][s] = struct{}{}
	return s
}

// Subscribers is how many subscriptions follow thread ("" = those that
// follow every thread).
func (b *Bus) Subscribers(thread string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[thread])
}

// Publish queues e for the thread's subscribers and the all-thread ones.
func (b *Bus) Publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, key := range []string{e.ThreadID, ""} {
		for s := range b.subs[key] {
			s.push(e)
		}
		if e.ThreadID == "" {
			break
		}
	}
}

func (s *Subscription) push(e Event) {
	if s.types != nil && !s.types[e.Type] {
		return
	}
	s.mu.Lock()
	if !s.closed {
		if n := len(s.queue); n >= mergeFrom && mergeable(s.queue[n-1], e) {
			if s.tail == nil {
				s.tail = &strings.Builder{}
				s.tail.WriteString(s.queue[n-1].Text)
			}
			s.tail.WriteString(e.Text)
		} else {
			s.endTail()
			s.queue = append(s.queue, e)
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Ready is signalled when events are waiting.
func (s *Subscription) Ready() <-chan struct{} { return s.wake }

// Drain returns every waiting event, oldest first, and empties the queue.
func (s *Subscription) Drain() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endTail()
	q := s.queue
	s.queue = nil
	return q
}

// endTail gives the queue's last event the text merged into it.
func (s *Subscription) endTail() {
	if s.tail != nil {
		s.queue[len(s.queue)-1].Text = s.tail.String()
		s.tail = nil
	}
}

// mergeable reports whether delta e continues a, the same stream's delta.
func mergeable(a, e Event) bool {
	switch e.Type {
	case EventTextDelta, EventReasoningDelta, EventToolCallDelta:
	default:
		return false
	}
	return a.Type == e.Type && a.RunID == e.RunID && a.ThreadID == e.ThreadID && a.MessageID == e.MessageID &&
		a.Step == e.Step && a.ToolCallID == e.ToolCallID && a.ToolName == e.ToolName && a.Transform == nil && e.Transform == nil
}

// Close stops the subscription; it is safe to call more than once.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs[s.thread], s)
	if len(s.bus.subs[s.thread]) == 0 {
		delete(s.bus.subs, s.thread)
	}
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.closed, s.queue, s.tail = true, nil, nil
	s.mu.Unlock()
}
