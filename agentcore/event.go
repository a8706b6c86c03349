package agentcore

// EventType names a stream event. The names are Mastra's chunk types.
type EventType string

const (
	EventStart          EventType = "start"
	EventTextDelta      EventType = "text-delta"
	EventReasoningDelta EventType = "reasoning-delta"
	EventFinish         EventType = "finish"
	EventAbort          EventType = "abort" // the run was stopped
	EventError          EventType = "error"

	// Thread-level events published by the Runtime, not by a model.
	EventMessage EventType = "message" // a message was added to the thread (MessageID)
	EventThread  EventType = "thread"  // the thread's title, pin or model changed, or it was deleted
)

// Event is one typed event of a run or a thread.
type Event struct {
	Type         EventType
	RunID        string
	ThreadID     string
	MessageID    string // the assistant message being written, or the message added
	Model        string // start
	Text         string // deltas
	FinishReason string // finish
	Usage        Usage  // finish
	Error        string // error
}

// Terminal reports whether the event ends its run.
func (e Event) Terminal() bool {
	return e.Type == EventFinish || e.Type == EventAbort || e.Type == EventError
}
