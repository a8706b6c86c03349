package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"parley/agentcore/llm"
)

// SystemMessage is one system message of an agent's instructions.
type SystemMessage struct {
	Role    string `json:"role"` // always "system"
	Content string `json:"content"`
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

// Agent is a configured assistant: who it is, what it is told, which model
// it talks to.
type Agent struct {
	ID           string
	Name         string
	Description  string
	Instructions Instructions
	Model        string // "provider/model"
	// Models opens Model (or a per-call override). Required.
	Models ModelResolver
}

// StreamOptions adjust one call.
type StreamOptions struct {
	Model    string // overrides Agent.Model
	RunID    string // generated when empty
	ThreadID string
}

// ErrNoModel is returned when neither the agent nor the call names a model.
var ErrNoModel = errors.New("no model: set the agent's model or pass one")

// Stream runs the agent over messages and yields its events in order. It
// always ends with exactly one terminal event: finish, abort (ctx cancelled)
// or error.
func (a *Agent) Stream(ctx context.Context, messages []Message, opts StreamOptions) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		runID := opts.RunID
		if runID == "" {
			runID = NewID()
		}
		base := Event{RunID: runID, ThreadID: opts.ThreadID}
		emit := func(e Event) bool {
			e.RunID, e.ThreadID = base.RunID, base.ThreadID
			return yield(e)
		}
		fail := func(err error) { emit(Event{Type: EventError, Error: err.Error()}) }

		spec := opts.Model
		if spec == "" {
			spec = a.Model
		}
		if spec == "" {
			fail(ErrNoModel)
			return
		}
		if a.Models == nil {
			fail(fmt.Errorf("agent %s: no model resolver", a.ID))
			return
		}
		model, err := a.Models(spec)
		if err != nil {
			fail(err)
			return
		}
		if !emit(Event{Type: EventStart, Model: spec}) {
			return
		}
		req := llm.Request{Messages: a.prompt(messages)}
		for part, err := range model.Stream(ctx, req) {
			if err != nil {
				if ctx.Err() != nil {
					emit(Event{Type: EventAbort})
					return
				}
				fail(err)
				return
			}
			switch part.Type {
			case llm.PartTextDelta:
				if part.Text != "" && !emit(Event{Type: EventTextDelta, Text: part.Text}) {
					return
				}
			case llm.PartReasoningDelta:
				if part.Text != "" && !emit(Event{Type: EventReasoningDelta, Text: part.Text}) {
					return
				}
			case llm.PartFinish:
				emit(Event{Type: EventFinish, FinishReason: part.FinishReason, Usage: Usage{
					InputTokens:     part.Usage.InputTokens,
					OutputTokens:    part.Usage.OutputTokens,
					TotalTokens:     part.Usage.TotalTokens,
					ReasoningTokens: part.Usage.ReasoningTokens,
					CachedTokens:    part.Usage.CachedTokens,
				}})
				return
			}
		}
		if ctx.Err() != nil {
			emit(Event{Type: EventAbort})
			return
		}
		fail(fmt.Errorf("%s: the stream ended without a finish", spec))
	}
}

// Result is what Generate collects from a stream.
type Result struct {
	RunID        string
	Text         string
	Reasoning    string
	FinishReason string
	Usage        Usage
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

// prompt turns stored messages into the model's prompt, instructions first.
// Messages with no text (an empty interrupted reply) are left out: providers
// reject empty turns.
func (a *Agent) prompt(messages []Message) []llm.Message {
	out := make([]llm.Message, 0, len(a.Instructions)+len(messages))
	for _, s := range a.Instructions {
		out = append(out, llm.Message{Role: llm.RoleSystem, Text: s.Content})
	}
	for _, m := range messages {
		text := m.Content.Text()
		if text == "" {
			continue
		}
		switch m.Role {
		case RoleUser:
			out = append(out, llm.Message{Role: llm.RoleUser, Text: text})
		case RoleAssistant:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Text: text})
		case RoleSystem:
			out = append(out, llm.Message{Role: llm.RoleSystem, Text: text})
		}
	}
	return out
}
