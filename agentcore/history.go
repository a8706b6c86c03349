package agentcore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"parley/agentcore/llm"
)

// prompt turns stored messages into the model's prompt, instructions first.
// An assistant message holds every step of its run: each step becomes the
// assistant's text and tool calls, then the results as the model saw them.
// Empty turns are left out: providers reject them.
func (a *Agent) prompt(messages []Message, load func(ref string) (StoredFile, error)) []llm.Message {
	out := make([]llm.Message, 0, len(a.Instructions)+len(messages))
	for _, s := range a.Instructions {
		out = append(out, s.message())
	}
	for _, m := range messages {
		before := len(out)
		switch m.Role {
		case RoleSystem:
			if text := m.Content.Text(); text != "" {
				out = append(out, llm.Message{Role: llm.RoleSystem, Text: text})
			}
		case RoleUser:
			if um := userPrompt(m.Content, load); um.Text != "" || len(um.Files) > 0 {
				out = append(out, um)
			}
		case RoleAssistant:
			out = append(out, assistantTurns(m.Content)...)
		case RoleSignal:
			if s, ok := SignalOf(m); ok && !s.Transient {
				out = append(out, signalPrompt(s, load))
			}
		}
		// A caller's breakpoint goes after the whole message.
		if n := len(out); n > before && m.Content.ProviderMetadata.CacheBreakpoint() {
			out[n-1].CacheBreakpoint = true
		}
	}
	return out
}

// userPrompt is a user message for the model: its text, then each text
// file's content with its name, and its images and PDFs as files (the
// provider's image and document parts). A file that cannot be read is named
// in the text with why, so the model can say so.
func userPrompt(c Content, load func(ref string) (StoredFile, error)) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	var text strings.Builder
	text.WriteString(c.Text())
	for _, p := range c.Parts {
		ref, ok := p.FileRef()
		if !ok {
			continue
		}
		f, err := load(ref)
		switch {
		case err != nil:
			fmt.Fprintf(&text, "\n\n[The attached file %q could not be read: %v]", p.Filename, err)
		case strings.HasPrefix(f.MediaType, "image/") || f.MediaType == "application/pdf":
			m.Files = append(m.Files, llm.File{Name: p.Filename, MediaType: f.MediaType, Data: f.Data})
		default:
			fmt.Fprintf(&text, "\n\n<file name=%q>\n%s\n</file>", p.Filename, f.Data)
		}
	}
	m.Text = strings.TrimSpace(text.String())
	return m
}

// signalPrompt is a signal as the model reads it: its text, then its
// files as a user message's (userPrompt).
func signalPrompt(s Signal, load func(ref string) (StoredFile, error)) llm.Message {
	if len(s.Files) == 0 {
		return llm.Message{Role: llm.RoleUser, Text: s.ModelText()}
	}
	c := TextContent(s.ModelText())
	c.Parts = append(c.Parts, s.Files...)
	return userPrompt(c, load)
}

// assistantTurns splits an assistant message at its step-start parts.
func assistantTurns(c Content) []llm.Message {
	var out []llm.Message
	var text strings.Builder
	var calls []llm.ToolCall
	var results []llm.ToolResult
	flush := func() {
		if text.Len() > 0 || len(calls) > 0 {
			out = append(out, llm.Message{Role: llm.RoleAssistant, Text: text.String(), ToolCalls: calls})
		}
		if len(results) > 0 {
			out = append(out, llm.Message{Role: llm.RoleTool, ToolResults: results})
		}
		text.Reset()
		calls, results = nil, nil
	}
	for _, p := range c.Parts {
		switch p.Type {
		case "step-start":
			flush()
		case "text":
			text.WriteString(p.Text)
		case "tool-invocation":
			ti := p.ToolInvocation
			if ti == nil || ti.State == "partial-call" {
				continue // the model never finished it
			}
			// The arguments' own bytes, not a copy (a write_file's can be
			// MiBs): a stored message's Args are never changed in place.
			args := unsafe.String(unsafe.SliceData(ti.Args), len(ti.Args))
			if args == "" || !json.Valid(ti.Args) {
				args = "{}"
			}
			if ti.ProviderExecuted {
				continue // the provider ran it; the answer that followed stands on its own
			}
			id := sendID(ti.ToolCallID, ti.ProviderCallID) // the provider's own id goes back to it
			calls = append(calls, llm.ToolCall{ID: id, Name: ti.ToolName, Input: args, Signature: ti.Signature})
			r := llm.ToolResult{CallID: id, Name: ti.ToolName, Output: ti.ModelOutput, IsError: ti.IsError}
			switch ti.State {
			case "result":
			case "suspended":
				r.Output = "The user has not answered yet."
			default:
				// Left without a result by a crash: providers reject a call
				// with no answer, so tell the model what happened.
				r.Output, r.IsError = "The tool call was interrupted before it finished.", true
			}
			results = append(results, r)
		}
	}
	flush()
	return out
}

// contentBuilder assembles an assistant message's v2 content from its run's
// events, as they come. Growing text lives in builders that are only ever
// appended to, so a long reply costs linear time to build, and content()
// takes a snapshot without copying any of it: a string of a builder's
// bytes so far stays valid while the builder grows (a larger builder
// copies to a new array and leaves the old one to the snapshots that hold
// it).
//
// The reply's text is one buffer, shared by its text parts, which follow
// each other in it (a text part grows only while it is the last part), so
// the text of a part is a slice of it and the text of the whole reply
// (Content.Content) is all of it: a snapshot costs no copy of the text
// however often the store writes the reply and the pages read it.
//
// A run that shares its buffers (Event.soFar) writes its text and each
// call's arguments once, in buffers of its own: while the deltas follow
// each other there, the builder keeps views of them (shared, views) and
// no copy; a delta that does not follow on (none should) makes it copy
// what it has into a buffer of its own and go on there.
type contentBuilder struct {
	parts  []Part
	all    *strings.Builder         // the text of every text part, in order
	shared string                   // or, while all is nil: that text, a view of the run's
	spans  map[int][2]int           // text part index → its bytes in all (or shared)
	text   map[int]*strings.Builder // part index → its reasoning or streamed arguments
	views  map[int]string           // or, for arguments: a view of the run's buffer of them
	calls  map[string]int           // tool call id → part index
	// usage sums the model calls that wrote this content; context is the
	// context fill of the last one (see MetaUsage).
	usage   Usage
	context int64
}

// apply folds e into the content; it reports whether the content changed.
func (b *contentBuilder) apply(e Event) bool {
	switch e.Type {
	case EventStepStart:
		if e.Step > 1 {
			b.parts = append(b.parts, Part{Type: "step-start"})
			return true
		}
	case EventTextDelta, EventReasoningDelta:
		kind := "text"
		if e.Type == EventReasoningDelta {
			kind = "reasoning"
		}
		n := len(b.parts)
		if n == 0 || b.parts[n-1].Type != kind {
			b.parts = append(b.parts, Part{Type: kind})
			n++
		}
		if kind == "text" {
			b.appendText(n-1, e.Text, e.soFar)
		} else {
			b.buf(n - 1).WriteString(e.Text)
		}
		return true
	case EventToolInputStart:
		if b.calls == nil {
			b.calls = map[string]int{}
		}
		b.calls[e.ToolCallID] = len(b.parts)
		b.parts = append(b.parts, Part{Type: "tool-invocation", ToolInvocation: &ToolInvocation{
			State: "partial-call", ToolCallID: e.ToolCallID, ProviderCallID: e.ProviderCallID, ToolName: e.ToolName, Step: e.Step,
		}})
		return true
	case EventToolCallDelta:
		if i, ti := b.call(e.ToolCallID); ti != nil {
			b.appendArgs(i, e.Text, e.soFar)
			if _, known := ti.Transforms[TargetDisplay][PhaseInputDelta]; !known {
				ti.Transforms = mergeTransforms(ti.Transforms, PhaseInputDelta, e.Transform)
			}
			return true
		}
	case EventSource:
		b.parts = append(b.parts, Part{Type: "source", Source: &Source{URL: e.URL, Title: e.Title}})
		return true
	case EventToolCall:
		if i, ti := b.call(e.ToolCallID); ti != nil {
			ti.State, ti.Args, ti.ProviderExecuted = "call", e.Args, e.ProviderExecuted
			ti.Signature = cmp.Or(e.Signature, ti.Signature)
			ti.ProviderCallID = cmp.Or(e.ProviderCallID, ti.ProviderCallID)
			delete(b.text, i)
			delete(b.views, i)
			ti.Transforms = mergeTransforms(ti.Transforms, PhaseInputAvailable, e.Transform)
			return true
		}
	case EventToolSuspended, EventToolApproval:
		if i, ti := b.call(e.ToolCallID); ti != nil {
			ti.State, ti.SuspendPayload, ti.Approval = "suspended", e.Result, e.Type == EventToolApproval
			delete(b.text, i)
			delete(b.views, i)
			ti.Transforms = mergeTransforms(ti.Transforms, PhaseSuspend, e.Transform)
			return true
		}
	case EventToolOutput:
		if _, ti := b.call(e.ToolCallID); ti != nil {
			ti.Progress += e.Text
			return true
		}
	case EventStepFinish:
		if e.Usage.IsZero() {
			return false
		}
		b.usage = b.usage.Add(e.Usage)
		if n := e.Usage.contextTokens(); n > 0 {
			b.context = n
		}
		return true
	case EventToolResult:
		if i, ti := b.call(e.ToolCallID); ti != nil {
			ti.State, ti.Result, ti.IsError, ti.Cancelled = "result", e.Result, e.IsError, e.Cancelled
			ti.ModelOutput = e.ModelOutput
			if e.Resume != nil {
				ti.ResumeData = e.Resume
			}
			delete(b.text, i)
			delete(b.views, i)
			phase := PhaseOutput
			if e.IsError {
				phase = PhaseError
			}
			ti.Transforms = mergeTransforms(ti.Transforms, phase, e.Transform)
			return true
		}
	}
	return false
}

// appendText appends text to the text part i, the last part. soFar, when
// given, is the run's text up to and including text: while it holds all
// of this builder's text at its end, that text is a view of it.
func (b *contentBuilder) appendText(i int, text, soFar string) {
	if b.spans == nil {
		b.spans = map[int][2]int{}
	}
	sp, ok := b.spans[i]
	if !ok {
		sp[0] = b.allLen()
	}
	switch start := len(soFar) - len(b.shared) - len(text); {
	case b.all == nil && soFar != "" && start >= 0 && soFar[len(soFar)-len(text):] == text:
		b.shared = soFar[start:]
	default:
		if b.all == nil {
			b.all = &strings.Builder{}
			b.all.Grow(len(b.shared) + len(text))
			b.all.WriteString(b.shared)
			b.shared = ""
		}
		b.all.WriteString(text)
	}
	sp[1] = b.allLen()
	b.spans[i] = sp
}

// allText is the text of every text part, in order.
func (b *contentBuilder) allText() string {
	if b.all != nil {
		return b.all.String()
	}
	return b.shared
}

func (b *contentBuilder) allLen() int {
	if b.all != nil {
		return b.all.Len()
	}
	return len(b.shared)
}

// appendArgs appends a delta of the streamed arguments of the call at
// part i; soFar, when given, is all of them up to and including it, a
// view of the run's buffer, kept instead of a copy.
func (b *contentBuilder) appendArgs(i int, text, soFar string) {
	if b.text[i] == nil && soFar != "" && len(soFar) == len(b.views[i])+len(text) && soFar[len(b.views[i]):] == text {
		if b.views == nil {
			b.views = map[int]string{}
		}
		b.views[i] = soFar
		return
	}
	if v, ok := b.views[i]; ok {
		delete(b.views, i)
		b.buf(i).Grow(len(v) + len(text))
		b.buf(i).WriteString(v)
	}
	b.buf(i).WriteString(text)
}

func (b *contentBuilder) buf(i int) *strings.Builder {
	if b.text == nil {
		b.text = map[int]*strings.Builder{}
	}
	if b.text[i] == nil {
		b.text[i] = &strings.Builder{}
	}
	return b.text[i]
}

func (b *contentBuilder) call(id string) (int, *ToolInvocation) {
	i, ok := b.calls[id]
	if !ok {
		return 0, nil
	}
	return i, b.parts[i].ToolInvocation
}

// size is about how many bytes the content's texts and arguments hold.
func (b *contentBuilder) size() int {
	n := b.allLen()
	for _, t := range b.text {
		n += t.Len()
	}
	for _, v := range b.views {
		n += len(v)
	}
	for _, p := range b.parts {
		if ti := p.ToolInvocation; ti != nil {
			n += len(ti.Args) + len(ti.Result)
		}
	}
	return n
}

// content returns a snapshot that later events do not change.
func (b *contentBuilder) content() Content {
	c := Content{Format: 2, Parts: make([]Part, len(b.parts))}
	c.Content = b.allText()
	for i, p := range b.parts {
		buf := b.text[i]
		sp, inAll := b.spans[i]
		switch {
		case p.ToolInvocation != nil:
			ti := *p.ToolInvocation
			ti.Transforms = copyTransforms(ti.Transforms)
			if buf != nil {
				ti.ArgsText = buf.String()
			} else if v, ok := b.views[i]; ok {
				ti.ArgsText = v
			}
			p.ToolInvocation = &ti
		case inAll:
			p.Text = c.Content[sp[0]:sp[1]]
		case buf != nil:
			p.Text = buf.String()
		}
		c.Parts[i] = p
	}
	if !b.usage.IsZero() {
		c.Metadata = map[string]any{MetaUsage: b.usage}
		if b.context > 0 {
			c.Metadata[MetaContextTokens] = b.context
		}
	}
	return c
}

func mergeTransforms(m map[string]map[string]TransformResult, phase string, t map[string]TransformResult) map[string]map[string]TransformResult {
	if len(t) == 0 {
		return m
	}
	if m == nil {
		m = map[string]map[string]TransformResult{}
	}
	for target, r := range t {
		if m[target] == nil {
			m[target] = map[string]TransformResult{}
		}
		m[target][phase] = r
	}
	return m
}

func copyTransforms(m map[string]map[string]TransformResult) map[string]map[string]TransformResult {
	if m == nil {
		return nil
	}
	out := make(map[string]map[string]TransformResult, len(m))
	for target, phases := range m {
		out[target] = make(map[string]TransformResult, len(phases))
		for ph, r := range phases {
			out[target][ph] = r
		}
	}
	return out
}

// findSuspended finds the suspended call id among the assistant messages.
func findSuspended(messages []Message, id string) (Message, *ToolInvocation) {
	for i := len(messages) - 1; i >= 0; i-- {
		for _, p := range messages[i].Content.Parts {
			if ti := p.ToolInvocation; ti != nil && ti.ToolCallID == id && ti.State == "suspended" {
				return messages[i], ti
			}
		}
	}
	return Message{}, nil
}

// stillSuspended reports whether c has a suspended call other than id.
func stillSuspended(c Content, id string) bool {
	for _, p := range c.Parts {
		if ti := p.ToolInvocation; ti != nil && ti.ToolCallID != id && ti.State == "suspended" {
			return true
		}
	}
	return false
}

// withInvocation returns c with the invocation of ti's call replaced.
func withInvocation(c Content, ti ToolInvocation) Content {
	parts := make([]Part, len(c.Parts))
	copy(parts, c.Parts)
	for i, p := range parts {
		if p.ToolInvocation != nil && p.ToolInvocation.ToolCallID == ti.ToolCallID {
			parts[i].ToolInvocation = &ti
		}
	}
	c.Parts = parts
	return c
}

// load starts the builder from stored content (a resumed run writes on).
func (b *contentBuilder) load(c Content) {
	b.parts = make([]Part, len(c.Parts))
	copy(b.parts, c.Parts)
	b.all, b.shared, b.spans, b.views = nil, "", nil, nil
	b.calls = map[string]int{}
	b.usage, _ = MessageUsage(c)
	b.context, _ = MessageContextTokens(c)
	for i, p := range b.parts {
		if p.ToolInvocation != nil {
			ti := *p.ToolInvocation
			b.parts[i].ToolInvocation = &ti
			b.calls[ti.ToolCallID] = i
		}
		if p.Type == "text" {
			b.appendText(i, p.Text, "") // every text part is in all
		}
	}
}
