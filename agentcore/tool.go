package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"parley/agentcore/llm"
)

// Tool is the Go counterpart of Mastra's createTool: an id, a description
// for the model, JSON Schemas for input and output, and the function that
// runs it. Its name in a stream is the key it has in the agent's tool map.
//
// Mistakes the model can fix (bad input, a failing call) come back to the
// model as an error result; Execute returns them as errors. Nothing a tool
// does — an error, a panic — ends the run.
type Tool struct {
	ID           string
	Description  string
	InputSchema  json.RawMessage // JSON Schema of the input; nil: any object
	OutputSchema json.RawMessage // JSON Schema of the output; nil: not checked

	// Execute runs the tool with input already validated against
	// InputSchema. Cancellation arrives through ctx.
	Execute func(ctx context.Context, input json.RawMessage, tc *ToolContext) (any, error)

	// Refine checks what InputSchema does not say (zod's refine on the
	// input): the message of a failed check, reported as a validation error
	// at the input's root, or "". It runs only on input the schema accepts.
	Refine func(input json.RawMessage) string

	// ProviderDefined marks a tool the model's provider defines and runs
	// itself during the model call (ID names which: llm.WebSearch). It
	// has no Execute, schemas or hooks; it is offered to the model under
	// its ID, and its calls and results arrive from the model already
	// done (llm.Part.ProviderExecuted), never to be run here.
	ProviderDefined bool

	// ToModelOutput turns the output into what the model sees; the stream,
	// the store and the UI keep the raw output. Nil: the output as JSON (a
	// string output as is).
	ToModelOutput func(output any) ModelOutput

	// SuspendSchema and ResumeSchema describe what the tool hands the user
	// when it suspends and what it expects back; a tool with either can
	// suspend (ToolContext.Suspend). Resume data is validated against
	// ResumeSchema before the tool runs again.
	SuspendSchema json.RawMessage
	ResumeSchema  json.RawMessage
	// ResumeFromMessage turns the user's next chat message into resume
	// data, for agents with AutoResumeSuspendedTools (nil: a chat message
	// does not answer this tool).
	ResumeFromMessage func(text string) json.RawMessage

	// Transform gives display- and transcript-safe versions of the payloads
	// (spec §3.4). Nil: payloads pass through raw, unless the agent's
	// transform policy applies.
	Transform *ToolTransform

	// Lifecycle hooks (spec §2.2). Their errors and panics are logged and
	// swallowed: a hook can never break a run.
	OnInputStart     func(ctx context.Context, h InputStart) error
	OnInputDelta     func(ctx context.Context, h InputDelta) error
	OnInputAvailable func(ctx context.Context, h InputAvailable) error
	OnOutput         func(ctx context.Context, h Output) error

	schemas     sync.Once
	in, out, rs *jsonschema.Schema
	errSch      error
	// closed: the input schema closes an object (closesObjects), so
	// strip may drop keys.
	closed bool
}

// InputStart is what OnInputStart gets when the model starts a call.
type InputStart struct {
	ToolCallID string
	Messages   []llm.Message // the prompt as sent
}

// InputDelta is what OnInputDelta gets for each piece of streamed input.
type InputDelta struct {
	ToolCallID     string
	InputTextDelta string
	Messages       []llm.Message
}

// InputAvailable is what OnInputAvailable gets once the input is complete
// and valid, before the tool runs.
type InputAvailable struct {
	ToolCallID string
	Input      json.RawMessage
	Messages   []llm.Message
}

// Output is what OnOutput gets after a successful run.
type Output struct {
	ToolCallID string
	ToolName   string
	Output     any
}

// ToolContext is what a running tool knows about its call. Writing to it
// streams progress to every view of the thread (a tool-output event).
type ToolContext struct {
	ToolCallID     string
	ToolName       string
	AgentID        string
	RunID          string
	ThreadID       string
	ResourceID     string
	RequestContext map[string]any
	Messages       []llm.Message
	// ResumeData is the user's answer when the tool runs again after it
	// suspended; nil on the first run.
	ResumeData json.RawMessage
	// Suspendable is false when the tool runs without an agent run to
	// suspend (e.g. through the tool API): such tools answer with a
	// readable fallback instead.
	Suspendable bool

	progress func(Event)
	// decoded is the input's big strings as its validation decoded them,
	// for a typed tool (NewTool) to take rather than decode again.
	decoded *decodedInput
}

// Suspend stops the run until the user answers: return its result from
// Execute. The payload is what the user is shown (a question, a plan); the
// run resumes when the user answers, running the tool again with
// ResumeData set.
func (tc *ToolContext) Suspend(payload any) error { return &SuspendError{Payload: payload} }

// SuspendError carries a suspension out of a tool.
type SuspendError struct{ Payload any }

func (e *SuspendError) Error() string { return "the tool suspended for the user" }

// Write streams p as progress text of the call.
func (tc *ToolContext) Write(p []byte) (int, error) {
	if tc.progress != nil && len(p) > 0 {
		tc.progress(Event{Type: EventToolOutput, ToolCallID: tc.ToolCallID, ToolName: tc.ToolName, Text: string(p)})
	}
	return len(p), nil
}

// ModelOutput is what the model sees of a tool's output (AI SDK v5's
// ToolResultOutput): Type is text, json, error-text, error-json or content.
type ModelOutput struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// text renders the model output as the text sent to the model.
func (m ModelOutput) text() string {
	switch m.Type {
	case "text", "error-text":
		if s, ok := m.Value.(string); ok {
			return s
		}
	case "content":
		if parts, ok := m.Value.([]any); ok {
			var b []string
			for _, p := range parts {
				part, _ := p.(map[string]any)
				switch part["type"] {
				case "text":
					b = append(b, fmt.Sprint(part["text"]))
				case "image-url":
					b = append(b, fmt.Sprintf("[image: %v]", part["url"]))
				}
			}
			return strings.Join(b, "\n")
		}
	}
	return jsonText(m.Value)
}

func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// compile compiles the tool's schemas once.
// WithExecute is t running execute instead of its own Execute, with every
// other field kept: the way to wrap a tool (per-workspace tools, the plan
// guard). TestWithExecuteKeepsEveryField fails when a field added to Tool
// is not copied here.
func (t *Tool) WithExecute(execute func(ctx context.Context, input json.RawMessage, tc *ToolContext) (any, error)) *Tool {
	return &Tool{
		ID:                t.ID,
		Description:       t.Description,
		InputSchema:       t.InputSchema,
		OutputSchema:      t.OutputSchema,
		Execute:           execute,
		Refine:            t.Refine,
		ProviderDefined:   t.ProviderDefined,
		ToModelOutput:     t.ToModelOutput,
		SuspendSchema:     t.SuspendSchema,
		ResumeSchema:      t.ResumeSchema,
		ResumeFromMessage: t.ResumeFromMessage,
		Transform:         t.Transform,
		OnInputStart:      t.OnInputStart,
		OnInputDelta:      t.OnInputDelta,
		OnInputAvailable:  t.OnInputAvailable,
		OnOutput:          t.OnOutput,
	}
}

func (t *Tool) compile() error {
	t.schemas.Do(func() {
		var schema any
		if json.Unmarshal(t.InputSchema, &schema) == nil {
			t.closed = closesObjects(schema)
		}
		if len(t.InputSchema) > 0 {
			if t.in, t.errSch = compileSchema(t.ID+"-input", t.InputSchema); t.errSch != nil {
				return
			}
		}
		if len(t.OutputSchema) > 0 {
			if t.out, t.errSch = compileSchema(t.ID+"-output", t.OutputSchema); t.errSch != nil {
				return
			}
		}
		if len(t.ResumeSchema) > 0 {
			t.rs, t.errSch = compileSchema(t.ID+"-resume", t.ResumeSchema)
		}
	})
	return t.errSch
}

func compileSchema(name string, schema json.RawMessage) (*jsonschema.Schema, error) {
	s, err := jsonschema.CompileString("mem://"+name+".json", string(schema))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, nil
}

// ValidateInput checks input against the tool's input schema and Refine.
// The error names every failing JSON-pointer path ("(root)" for Refine's).
func (t *Tool) ValidateInput(input json.RawMessage) error {
	if err := t.compile(); err != nil {
		return err
	}
	if t.in != nil {
		if err := validate(t.in, input); err != nil {
			return err
		}
	}
	return t.refine(input)
}

// refine is the tool's Refine check of input, as a SchemaError.
func (t *Tool) refine(input json.RawMessage) error {
	if t.Refine != nil {
		if msg := t.Refine(input); msg != "" {
			return &SchemaError{Problems: []string{"(root): " + msg}}
		}
	}
	return nil
}

// CanSuspend reports whether the tool may suspend for the user.
func (t *Tool) CanSuspend() bool { return len(t.SuspendSchema) > 0 || len(t.ResumeSchema) > 0 }

// ValidateResume checks resume data against the tool's resume schema.
func (t *Tool) ValidateResume(data json.RawMessage) error {
	if err := t.compile(); err != nil {
		return err
	}
	if t.rs == nil {
		return nil
	}
	return validate(t.rs, data)
}

// ValidateOutput checks output against the tool's output schema.
func (t *Tool) ValidateOutput(output any) error {
	if err := t.compile(); err != nil {
		return err
	}
	if t.out == nil {
		return nil
	}
	b, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	return validate(t.out, b)
}

// SchemaError lists what failed validation, one JSON pointer per line.
type SchemaError struct {
	Problems []string // "/path: message"
}

func (e *SchemaError) Error() string { return strings.Join(e.Problems, "\n") }

func validate(s *jsonschema.Schema, doc json.RawMessage) error {
	v, err := decodeInput(doc)
	return validateValue(s, v, err)
}

// decodeInput decodes a document as the validator wants it: numbers as
// json.Number, which only a Decoder gives. A document with no number in it
// decodes the same with Unmarshal, without the Decoder's buffer (a copy of
// the whole document, grown by doubling: three times a big argument's
// size); a document Unmarshal refuses goes to the Decoder, for its error.
func decodeInput(doc json.RawMessage) (any, error) {
	return decodeInputKept(doc, nil)
}

// decodeInputKept is decodeInput keeping the big strings it decoded in
// keep, when keep is not nil.
func decodeInputKept(doc json.RawMessage, keep *decodedInput) (any, error) {
	if s, ok := spliceInput(doc, nil); ok {
		// Its big strings decoded once each (bigjson.go); anything
		// unusual is decoded again the ordinary way.
		if v, err := decodePlain(s.small); err == nil {
			r := newInputRestorer(s)
			if v = r.value(v); r.done() {
				if keep != nil {
					*keep = decodedInput{src: doc, big: s.big}
				}
				return v, nil
			}
		}
	}
	return decodePlain(doc)
}

// decodePlain is decodeInput without taking out the big strings.
func decodePlain(doc json.RawMessage) (any, error) {
	if !hasNumber(doc) {
		var v any
		if json.Unmarshal(doc, &v) == nil {
			return v, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc)) // not a string of it: a copy of the whole input
	dec.UseNumber()                              // the validator wants json.Number, not float64
	var v any
	err := dec.Decode(&v)
	return v, err
}

// hasNumber reports whether doc may hold a number: a digit or a minus
// sign outside its strings (true, false and null have neither).
func hasNumber(doc []byte) bool {
	in, esc := false, false
	for _, c := range doc {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == '-' || '0' <= c && c <= '9'):
			return true
		}
	}
	return false
}

// validateValue validates v, decoded by decodeInput with the error derr.
func validateValue(s *jsonschema.Schema, v any, derr error) error {
	if derr != nil {
		return &SchemaError{Problems: []string{"(root): not valid JSON: " + derr.Error()}}
	}
	err := s.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var problems []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "(root)"
			}
			problems = append(problems, loc+": "+e.Message)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(problems)
	return &SchemaError{Problems: problems}
}

// spec describes the tool to the model under name.
func (t *Tool) spec(name string) llm.ToolSpec {
	if t.ProviderDefined {
		// The provider knows the tool by its own name only; calls come
		// back under it, and resolve finds the tool by ID.
		return llm.ToolSpec{Name: t.ID, ProviderDefined: true}
	}
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: name, Description: t.Description, InputSchema: schema}
}

// modelOutput is what the model sees of output.
func (t *Tool) modelOutput(output any) (mo ModelOutput, err error) {
	if t.ToModelOutput == nil {
		if s, ok := output.(string); ok {
			return ModelOutput{Type: "text", Value: s}, nil
		}
		return ModelOutput{Type: "json", Value: output}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("toModelOutput panicked: %v", r)
		}
	}()
	return t.ToModelOutput(output), nil
}
