package agentcore

import "encoding/json"

// EventType names a stream event. The names are Mastra's chunk types.
type EventType string

const (
	EventStart          EventType = "start"
	EventStepStart      EventType = "step-start"
	EventTextDelta      EventType = "text-delta"
	EventReasoningDelta EventType = "reasoning-delta"

	// A tool call, in order: input streaming start, deltas of the argument
	// text, end, the complete call, progress output, and the result.
	EventToolInputStart EventType = "tool-call-input-streaming-start"
	EventToolCallDelta  EventType = "tool-call-delta" // Text holds argsTextDelta
	EventToolInputEnd   EventType = "tool-call-input-streaming-end"
	EventToolCall       EventType = "tool-call"
	EventToolOutput     EventType = "tool-output" // progress written by the tool
	EventToolResult     EventType = "tool-result"
	// EventToolSuspended: the call waits for the user; Result holds the
	// suspend payload. The run then finishes with FinishSuspended.
	EventToolSuspended EventType = "tool-call-suspended"
	// EventToolApproval: the call waits for the user's approval before it
	// runs; Result holds {approval: true, payload}.
	EventToolApproval EventType = "tool-call-approval"

	// EventSource: a web page the answer draws on (URL, Title).
	EventSource EventType = "source"

	EventStepFinish EventType = "step-finish"
	EventFinish     EventType = "finish"
	EventAbort      EventType = "abort" // the run was stopped
	EventError      EventType = "error"

	// Thread-level events published by the Runtime, not by a model.
	EventMessage EventType = "message" // a message was added to the thread (MessageID)
	EventThread  EventType = "thread"  // the thread's title, pin or model changed, or it was deleted
	EventTasks   EventType = "tasks"   // the thread's task list changed
	// EventBranch: the thread's active branch changed (a version was
	// switched to, a message edited, a reply regenerated): views show the
	// branch's messages again.
	EventBranch EventType = "branch"
	// EventMessageUpdated: a message other than the reply being streamed
	// changed (a queued signal was kept, a reply was closed by a signal).
	EventMessageUpdated EventType = "message-updated"
	// EventNotification: the thread's inbox changed; Result holds the
	// record when one arrived (was created or merged).
	EventNotification EventType = "notification"

	// Run events echoing the signals the model was given (Signal).
	EventDataUserMessage EventType = "data-user-message"
	EventDataSignal      EventType = "data-signal"
)

// FinishSuspended is the finish reason of a run that waits for the user.
const FinishSuspended = "suspended"

// Event is one typed event of a run or a thread.
type Event struct {
	Type         EventType
	RunID        string
	ThreadID     string
	MessageID    string // the assistant message being written, or the message added
	Model        string // start
	Step         int    // step-start, step-finish, tool events: 1-based step
	Text         string // text, reasoning and argument deltas, tool progress
	FinishReason string // step-finish, finish
	Usage        Usage  // step-finish, finish (finish: the sum of all steps)
	Error        string // error
	// StoreFailed (error): the run failed because its reply could not
	// be written to the store, not because of the model or a tool.
	StoreFailed bool

	ToolCallID string
	ToolName   string
	Args       json.RawMessage // tool-call: the validated (or repaired) input
	Result     json.RawMessage // tool-result: the raw output, or the error text as a JSON string
	IsError    bool            // tool-result
	Cancelled  bool            // tool-result: the run was stopped before the call finished
	// ProviderExecuted: the provider ran this call (web_search); nothing
	// ran here and no tool message answers it.
	ProviderExecuted bool
	// Signature (tool-call) is provider state that goes back with the
	// call (llm.ToolCall.Signature); the message keeps it so that a run
	// resumed from the store sends it too.
	Signature  string
	URL, Title string // source
	// ProviderCallID (tool-call-input-streaming-start, tool-call) is the
	// provider's id for the call, if it gave one (ToolCallID is always
	// Parley's): the message keeps it only to send it back to the provider
	// with the call and its result. It is never shown, nor used to find
	// the call.
	ProviderCallID string
	// Resume is the user's answer that the call ran again with.
	Resume json.RawMessage
	// ModelOutput is what the model saw of the result (toModelOutput).
	ModelOutput string
	// Transform holds the display and transcript versions of this event's
	// payload, by target, when a transform applies (spec §3.4).
	Transform map[string]TransformResult
	// Signal is the signal a data-signal or data-user-message event echoes.
	Signal *Signal

	// soFar (text and argument deltas, for a run that shares its buffers:
	// StreamOptions.shareBuffers) is all the run's text, or all the call's
	// arguments, up to and including Text: a view of the run's one buffer,
	// never a copy, which the runtime's content builder keeps instead of
	// copying the deltas into a buffer of its own. It is cleared before
	// the event goes anywhere else, so nothing else holds the buffer.
	soFar string
}

// Terminal reports whether the event ends its run.
func (e Event) Terminal() bool {
	return e.Type == EventFinish || e.Type == EventAbort || e.Type == EventError
}
