package agentcore

import "sync"

// Bus fans events out to subscribers, per thread. A subscription never
// blocks the publisher and never loses an event: each subscriber has its own
// unbounded queue and a wake-up channel, so a slow reader (a throttled
// background tab) costs memory, never the run's progress. Readers that only
// render state may drain the queue in one go and coalesce.
type Bus struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{} // thread id ("" = every thread) → subscribers
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[string]map[*Subscription]struct{}{}} }

// Subscription receives the events of one thread (or of all threads).
type Subscription struct {
	bus    *Bus
	thread string
	types  map[EventType]bool // nil: every type
	mu     sync.Mutex
	queue  []Event
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
		s.queue = append(s.queue, e)
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
	q := s.queue
	s.queue = nil
	return q
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
	s.closed, s.queue = true, nil
	s.mu.Unlock()
}
