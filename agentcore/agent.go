package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"

	"parley/agentcore/llm"
)

// SystemMessage is one system message of an agent's instructions.
type SystemMessage struct {
	Role    string `json:"role"` // always "system"
	Content string `json:"content"`
	// ProviderOptions of the instruction (a cache breakpoint after it).
	ProviderOptions *MessageOptions `json:"providerOptions,omitempty"`
}

// message is s as the model's system message.
func (s SystemMessage) message() llm.Message {
	return llm.Message{Role: llm.RoleSystem, Text: s.Content, CacheBreakpoint: s.ProviderOptions.CacheBreakpoint()}
}

// Instructions are an agent's system prompt: Mastra accepts a string, a list
// of strings, or a list of system messages; all three become this.
type Instructions []SystemMessage

// Text makes instructions from one or more strings, one system message each.
func Text(lines ...string) Instructions {
	in := make(Instructions, 0, len(lines))
	for _, l := range lines {
		in = append(in, SystemMessage{Role: "system", Content: l})
	}
	return in
}

// String joins the instructions, as Mastra's getInstructions does for a list.
func (in Instructions) String() string {
	parts := make([]string, len(in))
	for i, m := range in {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// UnmarshalJSON accepts "text", ["a","b"] and [{"role":"system","content":"…"}].
func (in *Instructions) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*in = Text(s)
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("instructions: want a string, a list of strings or a list of system messages")
	}
	out := make(Instructions, 0, len(list))
	for i, raw := range list {
		if err := json.Unmarshal(raw, &s); err == nil {
			out = append(out, SystemMessage{Role: "system", Content: s})
			continue
		}
		var m SystemMessage
		if err := json.Unmarshal(raw, &m); err != nil || m.Content == "" {
			return fmt.Errorf("instructions[%d]: want a string or {role:\"system\", content}", i)
		}
		if m.Role != "" && m.Role != "system" {
			return fmt.Errorf("instructions[%d]: role %q is not \"system\"", i, m.Role)
		}
		m.Role = "system"
		out = append(out, m)
	}
	*in = out
	return nil
}

// ModelResolver opens a "provider/model" string.
type ModelResolver func(spec string) (llm.Model, error)

// CurrentModel is the model a run uses when neither the call nor its
// thread names one.
func (a *Agent) CurrentModel() string {
	if a.DefaultModel != nil {
		if m := a.DefaultModel(); m != "" {
			return m
		}
	}
	return a.Model
}

// DefaultMaxSteps bounds the model calls of one run (Mastra's default).
const DefaultMaxSteps = 5

// Agent is a configured assistant: who it is, what it is told, which model
// it talks to, and what it can do.
type Agent struct {
	ID           string
	Name         string
	Description  string
	Instructions Instructions
	Model        string // "provider/model"
	// DefaultModel, when set, is asked at the start of every run that
	// names no model of its own and wins over Model unless it says "":
	// the default can change while the app runs (Settings). It must be
	// safe for concurrent use and return quickly.
	DefaultModel func() string
	// Models opens Model (or a per-call override). Required.
	Models ModelResolver

	// Tools by the name the model calls them.
	Tools map[string]*Tool
	// ToolSource, when set, adds tools that come and go while the app
	// runs (an MCP server's): it is asked afresh at the start of every
	// run, so a run sees the set as it was when it started. Tools wins a
	// name clash. It must be safe for concurrent use and return quickly.
	ToolSource func() map[string]*Tool
	// Agents become tools named "agent-<key>"; Workflows "workflow-<key>".
	Agents    map[string]*Agent
	Workflows map[string]*Workflow
	// Hooks run around every tool call; per-call hooks override them per key.
	Hooks ToolHooks
	// Transform is the agent-level payload transform policy.
	Transform *TransformPolicy
	// AutoResumeSuspendedTools: while a call waits for the user, their next
	// chat message answers it (for tools with ResumeFromMessage) instead of
	// starting a new turn.
	AutoResumeSuspendedTools bool
	// DeliveryPolicy decides how notifications reach this agent's
	// threads; nil is the built-in table (see Runtime.Notify).
	DeliveryPolicy *DeliveryPolicy
	// Processors add to the prompt of every model call (Mastra's input
	// processors: e.g. the task list as state signals).
	Processors []Processor
	// MaxSteps bounds model calls per run; 0: DefaultMaxSteps.
	MaxSteps int
	// Log receives hook and transform failures; nil: slog.Default().
	Log *slog.Logger
}

// Processor adjusts what the model sees before each model call. It returns
// the messages to send; errors are logged and the prompt goes unchanged.
type Processor interface {
	ProcessInput(ctx context.Context, in ProcessInput) ([]llm.Message, error)
}

// ProcessInput is one model call about to be made.
type ProcessInput struct {
	AgentID, RunID, ThreadID, ResourceID string
	Step                                 int
	Messages                             []llm.Message
	// Emit reports a signal the processor has put into the prompt (the
	// task lane's): it is echoed on the run's stream as a transient
	// data-signal, as Mastra's stream shows state signals, and not stored.
	// Nil outside a run.
	Emit func(Signal)
}

// ToolChoice is "auto", "none", "required", or the name of the one tool
// the model must call (Mastra's {type:'tool', toolName}).
type ToolChoice string

const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// StreamOptions adjust one call.
type StreamOptions struct {
	// Files reads the files that user messages carry; nil: they go to the
	// model as a note that they could not be read.
	Files interface {
		GetFile(ctx context.Context, ref string) (StoredFile, error)
	}
	Model      string // overrides Agent.Model
	RunID      string // generated when empty
	ThreadID   string
	ResourceID string
	// RequestContext is handed to every tool.
	RequestContext map[string]any
	// Hooks override the agent's hooks per key.
	Hooks ToolHooks
	// ToolChoice: "" is auto.
	ToolChoice ToolChoice
	// ActiveTools, when non-nil, is the only tools the model sees and may
	// call; a call to any other tool gets an error result.
	ActiveTools []string
	// MaxSteps overrides the agent's.
	MaxSteps int
	// Instructions are added after the agent's own for this call (a mode's
	// rules, say).
	Instructions Instructions
	// AgentInstructions, when set, replace the agent's own for this call
	// (Mastra's instructions option); Instructions still follow them.
	AgentInstructions Instructions
	// Temperature and MaxOutputTokens, when set, go to the model with
	// each call (Mastra's modelSettings).
	Temperature     *float64
	MaxOutputTokens int64
	TopP            *float64
	// Thinking is the chat's thinking level ("": the model's default).
	Thinking llm.Thinking
	// ProviderOptions are Mastra's providerOptions, per provider.
	ProviderOptions llm.ProviderOptions
	// Signals, when set, are messages sent to the run while it goes: each
	// model input starts with those delivered since the last one, and a
	// run that would end reads the late ones first.
	Signals SignalSource
	// shareBuffers: text and argument deltas carry the text so far
	// (Event.soFar), so the runtime keeps one buffer of a reply, the run's.
	shareBuffers bool
}

// ErrNoModel is returned when neither the agent nor the call names a model.
var ErrNoModel = errors.New("no model: set the agent's model or pass one")

// Stream runs the agent over messages and yields its events in order: for
// each step the model's text and tool calls, then the tool results, until
// the model stops calling tools or MaxSteps is reached. It always ends with
// exactly one terminal event: finish, abort (ctx cancelled) or error.
func (a *Agent) Stream(ctx context.Context, messages []Message, opts StreamOptions) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		r := &run{agent: a, opts: opts, log: a.logger()}
		r.run(ctx, messages, yield)
	}
}

func (a *Agent) logger() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

// ResumeInput answers a suspended tool call.
type ResumeInput struct {
	ToolCallID string
	Data       json.RawMessage
}

// ErrNotSuspended: no call with that id waits for an answer.
var ErrNotSuspended = errors.New("no suspended tool call with this id (it may have been answered already)")

// Resume answers the suspended call in.ToolCallID, found in messages (the
// thread's history, including the assistant message holding the call): the
// tool runs again with the answer as its ResumeData, and the run goes on
// from the next step as if it had never stopped.
func (a *Agent) Resume(ctx context.Context, messages []Message, in ResumeInput, opts StreamOptions) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		r := &run{agent: a, opts: opts, log: a.logger()}
		r.resume(ctx, messages, in, yield)
	}
}

// Result is what Generate collects from a stream.
type Result struct {
	RunID        string
	Text         string
	Reasoning    string
	FinishReason string
	Usage        Usage
	Steps        int
	ToolCalls    []Event // tool-call events
	ToolResults  []Event // tool-result events
}

// Generate runs the agent to the end and returns the collected result.
func (a *Agent) Generate(ctx context.Context, messages []Message, opts StreamOptions) (Result, error) {
	var r Result
	var text, reasoning strings.Builder
	for e := range a.Stream(ctx, messages, opts) {
		r.RunID = e.RunID
		switch e.Type {
		case EventTextDelta:
			text.WriteString(e.Text)
		case EventReasoningDelta:
			reasoning.WriteString(e.Text)
		case EventStepStart:
			r.Steps = e.Step
		case EventToolCall:
			r.ToolCalls = append(r.ToolCalls, e)
		case EventToolResult:
			r.ToolResults = append(r.ToolResults, e)
		case EventFinish:
			r.FinishReason, r.Usage = e.FinishReason, e.Usage
		case EventAbort:
			r.Text = text.String()
			return r, context.Cause(ctx)
		case EventError:
			r.Text = text.String()
			return r, errors.New(e.Error)
		}
	}
	r.Text, r.Reasoning = text.String(), reasoning.String()
	return r, nil
}
