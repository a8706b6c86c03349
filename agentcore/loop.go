package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"parley/agentcore/llm"
)

// toolConcurrency bounds the tool calls of one step that run at once.
const toolConcurrency = 8

// run is one Stream call in progress.
type run struct {
	agent *Agent
	opts  StreamOptions
	log   *slog.Logger

	id     string
	yield  func(Event) bool
	gone   bool // the consumer stopped reading
	tools  map[string]*Tool
	hooks  ToolHooks
	active map[string]bool // nil: every tool
	usage  Usage
	spec   string // the model's provider/model
	// text is the run's text, every step's in order: a step's text is a
	// view of it (stepOut.text), and so is a text delta's soFar.
	text strings.Builder
}

// emit hands e to the consumer; it reports false once the consumer is gone.
func (r *run) emit(e Event) bool {
	if r.gone {
		return false
	}
	e.RunID, e.ThreadID = r.id, r.opts.ThreadID
	if !r.yield(e) {
		r.gone = true
	}
	return !r.gone
}

func (r *run) run(ctx context.Context, messages []Message, yield func(Event) bool) {
	model, ok := r.setup(yield)
	if !ok {
		return
	}
	r.loop(ctx, model, r.prompt(ctx, messages), 1)
}

// loadFile reads the files that messages carry, from StreamOptions.Files.
func (r *run) loadFile(ctx context.Context) func(ref string) (StoredFile, error) {
	return func(ref string) (StoredFile, error) {
		if r.opts.Files == nil {
			return StoredFile{}, ErrNotFound
		}
		return r.opts.Files.GetFile(ctx, ref)
	}
}

// prompt is the agent's prompt (or this call's replacement for its
// instructions) plus this call's extra instructions.
func (r *run) prompt(ctx context.Context, messages []Message) []llm.Message {
	p := r.agent.prompt(messages, r.loadFile(ctx))
	n := len(r.agent.Instructions)
	if r.opts.AgentInstructions != nil {
		own := make([]llm.Message, 0, len(r.opts.AgentInstructions)+len(p)-n)
		for _, s := range r.opts.AgentInstructions {
			own = append(own, s.message())
		}
		p, n = append(own, p[n:]...), len(r.opts.AgentInstructions)
	}
	if len(r.opts.Instructions) == 0 {
		return p
	}
	out := make([]llm.Message, 0, len(p)+len(r.opts.Instructions))
	out = append(out, p[:n]...)
	for _, s := range r.opts.Instructions {
		out = append(out, s.message())
	}
	return append(out, p[n:]...)
}

// resume answers a suspended call, then goes on as the run would have.
func (r *run) resume(ctx context.Context, messages []Message, in ResumeInput, yield func(Event) bool) {
	model, ok := r.setup(yield)
	if !ok {
		return
	}
	msg, ti := findSuspended(messages, in.ToolCallID)
	if ti == nil {
		r.emit(Event{Type: EventError, Error: fmt.Sprintf("%s: %s", ErrNotSuspended, in.ToolCallID)})
		return
	}
	c := &call{id: ti.ToolCallID, providerID: ti.ProviderCallID, name: ti.ToolName, tool: r.resolve(ti.ToolName), input: ti.Args, resume: in.Data}
	if ti.Approval {
		var d ApprovalDecision
		if err := json.Unmarshal(in.Data, &d); err != nil {
			r.emit(Event{Type: EventError, Error: fmt.Sprintf("approval for %s: %v", ti.ToolCallID, err)})
			return
		}
		c.approval, c.resume = &d, nil // the tool itself runs fresh
	}
	prompt := r.prompt(ctx, messages)
	results := r.execute(ctx, []*call{c}, prompt, ti.Step)
	if r.gone {
		return
	}
	if ctx.Err() != nil {
		r.emit(Event{Type: EventAbort})
		return
	}
	// The step goes on only once every call of it has a result: providers
	// reject a call without one.
	answered := *ti
	answered.State, answered.ModelOutput, answered.IsError = "result", results[0].modelText, results[0].isError
	if results[0].suspended || stillSuspended(msg.Content, ti.ToolCallID) {
		r.emit(Event{Type: EventFinish, FinishReason: FinishSuspended, Usage: r.usage})
		return
	}
	// Rebuild the prompt with the answer in place of the suspension.
	updated := make([]Message, len(messages))
	copy(updated, messages)
	for i := range updated {
		if updated[i].ID == msg.ID {
			updated[i].Content = withInvocation(msg.Content, answered)
		}
	}
	r.loop(ctx, model, r.prompt(ctx, updated), ti.Step+1)
}

// setup resolves the model and the tools; false when the run cannot start
// (an error event has been sent).
func (r *run) setup(yield func(Event) bool) (llm.Model, bool) {
	r.yield = yield
	r.id = r.opts.RunID
	if r.id == "" {
		r.id = NewID()
	}
	fail := func(err error) { r.emit(Event{Type: EventError, Error: err.Error()}) }
	spec := r.opts.Model
	if spec == "" {
		spec = r.agent.CurrentModel()
	}
	if spec == "" {
		fail(ErrNoModel)
		return nil, false
	}
	if r.agent.Models == nil {
		fail(fmt.Errorf("agent %s: no model resolver", r.agent.ID))
		return nil, false
	}
	model, err := r.agent.Models(spec)
	if err != nil {
		fail(err)
		return nil, false
	}
	r.spec = spec
	r.tools = r.agent.toolset()
	r.hooks = r.agent.Hooks.merge(r.opts.Hooks)
	if r.opts.ActiveTools != nil {
		r.active = map[string]bool{}
		for _, n := range r.opts.ActiveTools {
			r.active[n] = true
		}
	}
	return model, r.emit(Event{Type: EventStart, Model: spec})
}

// loop calls the model and runs its tools, step after step, from step
// first on, until the model stops calling tools, a call suspends, or
// MaxSteps is reached.
func (r *run) loop(ctx context.Context, model llm.Model, prompt []llm.Message, first int) {
	maxSteps := cmpOr(r.opts.MaxSteps, r.agent.MaxSteps, DefaultMaxSteps)
	specs := r.toolSpecs()
	for step := first; ; step++ {
		prompt = append(prompt, r.signals(ctx)...)
		if r.gone {
			return
		}
		// The processors run before the step starts: a signal they add
		// shows on the stream between the steps, as in Mastra's.
		input := r.process(ctx, prompt, step)
		if r.gone || !r.emit(Event{Type: EventStepStart, Step: step}) {
			return
		}
		out := r.step(ctx, model, llm.Request{Messages: input, Tools: specs, ToolChoice: string(r.opts.ToolChoice),
			Temperature: r.opts.Temperature, MaxOutputTokens: r.opts.MaxOutputTokens, TopP: r.opts.TopP,
			CacheKey: r.opts.ThreadID, Thinking: r.opts.Thinking, Options: r.opts.ProviderOptions}, step)
		if r.gone {
			return
		}
		if out.err != nil {
			r.cancelStarted(out.open, step)
			if ctx.Err() != nil {
				r.emit(Event{Type: EventAbort})
			} else {
				r.emit(Event{Type: EventError, Error: out.err.Error()})
			}
			return
		}
		results := r.execute(ctx, out.calls, prompt, step)
		if r.gone {
			return
		}
		if ctx.Err() != nil {
			r.emit(Event{Type: EventAbort})
			return
		}
		r.emit(Event{Type: EventStepFinish, Step: step, FinishReason: out.finish, Usage: out.usage})
		for _, res := range results {
			if res.suspended {
				r.emit(Event{Type: EventFinish, FinishReason: FinishSuspended, Usage: r.usage})
				return
			}
		}
		if len(out.calls) == 0 && step-first+1 < maxSteps && r.opts.Signals != nil && r.opts.Signals.Pending() {
			// Sent while the model was answering: it reads them before
			// the run ends.
			if out.text != "" {
				prompt = append(prompt, llm.Message{Role: llm.RoleAssistant, Text: out.text})
			}
			continue
		}
		if len(out.calls) == 0 || step-first+1 >= maxSteps {
			r.emit(Event{Type: EventFinish, FinishReason: out.finish, Usage: r.usage})
			return
		}
		prompt = append(prompt, stepMessages(out.text, out.calls, results)...)
	}
}

// signals takes the signals delivered since the last model input, echoes
// them on the stream and returns them as the model reads them.
func (r *run) signals(ctx context.Context) []llm.Message {
	if r.opts.Signals == nil {
		return nil
	}
	var out []llm.Message
	for _, s := range r.opts.Signals.Drain(ctx) {
		t := EventDataSignal
		if s.Type == SignalUser {
			t = EventDataUserMessage
		}
		r.emit(Event{Type: t, Signal: &s})
		out = append(out, signalPrompt(s, r.loadFile(ctx)))
	}
	return out
}

// process runs the agent's processors over the prompt of one model call.
func (r *run) process(ctx context.Context, prompt []llm.Message, step int) []llm.Message {
	msgs := prompt
	for _, p := range r.agent.Processors {
		in := ProcessInput{AgentID: r.agent.ID, RunID: r.id, ThreadID: r.opts.ThreadID, ResourceID: r.opts.ResourceID, Step: step, Messages: msgs,
			Emit: func(s Signal) {
				s.Transient = true
				r.emit(Event{Type: EventDataSignal, Step: step, Signal: &s})
			}}
		var out []llm.Message
		err := safeCall(func() (err error) { out, err = p.ProcessInput(ctx, in); return err })
		if err != nil {
			r.log.Error("input processor failed", "processor", fmt.Sprintf("%T", p), "err", err)
			continue
		}
		msgs = out
	}
	return msgs
}

func cmpOr(xs ...int) int {
	for _, x := range xs {
		if x > 0 {
			return x
		}
	}
	return 0
}

// stepOut is what one model call produced.
type stepOut struct {
	text   string
	calls  []*call
	open   []*call // started calls the model never finished (on error)
	finish string
	usage  Usage
	err    error
}

// call is one tool call of a step.
type call struct {
	id, name string // id is Parley's (NewCallID, see callid.go): stored, published, shown, used in URLs
	tool     *Tool  // resolved at input start; nil if unknown
	args     strings.Builder
	// shared, while args is empty: the arguments so far as the provider's
	// adapter keeps them (llm.Part.InputSoFar), not copied into args.
	shared    string
	input     json.RawMessage // the complete, parsed (maybe repaired) input
	parseErr  error
	signature string
	resume    json.RawMessage   // the user's answer, when resuming a suspended call
	approval  *ApprovalDecision // the user's approval, when resuming an approval
	ended     bool
	// providerExecuted: the provider ran the call during the stream.
	providerExecuted bool
	result           toolResult

	// providerID is the provider's id for the call, unless the provider
	// gave none or gave it to an earlier call of the step: sent back to
	// the provider with the call and its result (sendID), and nowhere
	// else.
	providerID string
}

// appendArgs adds a delta d of the call's streamed arguments; soFar, when
// the provider's adapter gives it, is all of them up to and including d,
// kept as it is while the deltas follow on in it.
func (c *call) appendArgs(d, soFar string) {
	if c.args.Len() == 0 && soFar != "" && len(soFar) == len(c.shared)+len(d) && strings.HasSuffix(soFar, d) {
		c.shared = soFar
		return
	}
	if c.shared != "" {
		c.args.Grow(len(c.shared) + len(d))
		c.args.WriteString(c.shared)
		c.shared = ""
	}
	c.args.WriteString(d)
}

func (c *call) argsText() string {
	if c.args.Len() == 0 {
		return c.shared
	}
	return c.args.String()
}

func (c *call) argsLen() int { return len(c.argsText()) }

// step makes one model call, streaming its text and tool input.
//
// The provider's parts name calls by the provider's ids, which are not
// Parley's (see callid.go): one id may name several calls of the step, one
// after the other (a provider that numbers calls per answer, or gives none),
// so each provider id keeps the calls it named that are not yet complete,
// oldest first. Input goes to the newest; a complete call is the oldest,
// as calls complete in the order they started.
func (r *run) step(ctx context.Context, model llm.Model, req llm.Request, step int) stepOut {
	var out stepOut
	stepText := r.text.Len()         // where this step's text begins in r.text
	open := map[string][]*call{}     // provider id → calls started, not complete
	executed := map[string][]*call{} // provider id → provider-executed calls awaiting their result
	sent := map[string]bool{}        // provider ids that go back to the provider in this step
	var order []*call
	begin := func(pid, name string) *call {
		c := &call{id: NewCallID(), name: name, tool: r.resolve(name)}
		if pid != "" && !sent[pid] {
			c.providerID = pid
		}
		sent[pid] = true
		order = append(order, c)
		e := Event{Type: EventToolInputStart, Step: step, ToolCallID: c.id, ToolName: name, ProviderCallID: c.providerID}
		r.emit(e)
		if c.tool != nil && c.tool.OnInputStart != nil {
			r.hook("onInputStart", name, func() error {
				return c.tool.OnInputStart(ctx, InputStart{ToolCallID: c.id, Messages: req.Messages})
			})
		}
		return c
	}
	start := func(pid, name string) *call {
		c := begin(pid, name)
		open[pid] = append(open[pid], c)
		return c
	}
	newest := func(pid string) *call {
		if q := open[pid]; len(q) > 0 {
			return q[len(q)-1]
		}
		return nil
	}
	oldest := func(pid string) *call {
		q := open[pid]
		if len(q) == 0 {
			return nil
		}
		if len(q) == 1 {
			delete(open, pid)
		} else {
			open[pid] = q[1:]
		}
		return q[0]
	}
	delta := func(c *call, d, soFar string) {
		c.appendArgs(d, soFar)
		e := Event{Type: EventToolCallDelta, Step: step, ToolCallID: c.id, ToolName: c.name, Text: d}
		if r.opts.shareBuffers {
			e.soFar = c.argsText()
		}
		e.Transform = transform(r.log, r.agent.Transform, c.tool, TransformContext{Phase: PhaseInputDelta, ToolName: c.name, ToolCallID: c.id, InputTextDelta: d})
		r.emit(e)
		if c.tool != nil && c.tool.OnInputDelta != nil {
			r.hook("onInputDelta", c.name, func() error {
				return c.tool.OnInputDelta(ctx, InputDelta{ToolCallID: c.id, InputTextDelta: d, Messages: req.Messages})
			})
		}
	}
	end := func(c *call) {
		if !c.ended {
			c.ended = true
			r.emit(Event{Type: EventToolInputEnd, Step: step, ToolCallID: c.id, ToolName: c.name})
		}
	}

	for part, err := range model.Stream(ctx, req) {
		if r.gone {
			return out
		}
		if err != nil {
			out.err = err
			break
		}
		switch part.Type {
		case llm.PartTextDelta:
			if part.Text != "" {
				r.text.WriteString(part.Text)
				e := Event{Type: EventTextDelta, Step: step, Text: part.Text}
				if r.opts.shareBuffers {
					e.soFar = r.text.String()
				}
				r.emit(e)
			}
		case llm.PartReasoningDelta:
			if part.Text != "" {
				r.emit(Event{Type: EventReasoningDelta, Step: step, Text: part.Text})
			}
		case llm.PartToolInputStart:
			// A start for an id whose call is still streaming repeats it;
			// after that call's end it is the next call with the same id.
			if c := newest(part.ToolCallID); c == nil || c.ended {
				start(part.ToolCallID, part.ToolName)
			}
		case llm.PartToolInputDelta:
			if c := newest(part.ToolCallID); c != nil && part.Text != "" {
				delta(c, part.Text, part.InputSoFar)
			}
		case llm.PartToolInputEnd:
			// A call whose arguments all come with the call itself ends
			// there, so its one delta comes before the end.
			if c := newest(part.ToolCallID); c != nil && c.argsLen() > 0 {
				end(c)
			}
		case llm.PartToolCall:
			c := oldest(part.ToolCallID)
			if c == nil { // a provider that sends the call whole
				c = begin(part.ToolCallID, part.ToolName)
			}
			if c.argsLen() == 0 && part.Input != "" {
				delta(c, part.Input, "")
			}
			end(c)
			final := part.Input
			if final == "" {
				final = c.argsText()
			}
			c.signature = part.Signature
			c.providerExecuted = part.ProviderExecuted // the provider runs it: shown, never run here
			r.complete(c, final, step)
			c.args.Reset() // c.input holds what it needs of it
			c.shared = ""
			if c.providerExecuted {
				executed[part.ToolCallID] = append(executed[part.ToolCallID], c)
				break
			}
			out.calls = append(out.calls, c)
		case llm.PartToolResult:
			res := json.RawMessage(part.Result)
			if !json.Valid(res) {
				res, _ = json.Marshal(part.Result)
			}
			var id string
			if q := executed[part.ToolCallID]; len(q) > 0 {
				id, executed[part.ToolCallID] = q[0].id, q[1:]
			} else {
				id = NewCallID() // a result for no call seen: shown on its own
			}
			r.emit(Event{Type: EventToolResult, Step: step, ToolCallID: id, ToolName: part.ToolName,
				Result: res, IsError: part.IsError, ProviderExecuted: true})
		case llm.PartSource:
			r.emit(Event{Type: EventSource, Step: step, URL: part.URL, Title: part.Title})
		case llm.PartFinish:
			out.finish = part.FinishReason
			out.usage = usageOf(part.Usage)
			r.usage = addUsage(r.usage, out.usage)
		}
	}
	if out.err == nil && ctx.Err() != nil {
		out.err = ctx.Err()
	}
	if out.err != nil {
		for _, c := range order {
			if !slices.Contains(out.calls, c) && !c.providerExecuted {
				out.open = append(out.open, c)
			}
		}
	}
	out.text = r.text.String()[stepText:]
	return out
}

// complete parses (or repairs) a call's final input and announces the call.
func (r *run) complete(c *call, raw string, step int) {
	fixed, err := RepairToolInput(raw)
	if err != nil {
		c.parseErr = err
		b, _ := json.Marshal(raw) // shown as the text the model wrote
		c.input = b
	} else {
		c.input = rawOf(fixed)
	}
	e := Event{Type: EventToolCall, Step: step, ToolCallID: c.id, ToolName: c.name, Args: c.input, ProviderExecuted: c.providerExecuted, Signature: c.signature, ProviderCallID: c.providerID}
	e.Transform = transform(r.log, r.agent.Transform, c.tool, TransformContext{Phase: PhaseInputAvailable, ToolName: c.name, ToolCallID: c.id, Input: c.input})
	r.emit(e)
}

// cancelStarted gives every call the model started but never finished a
// cancelled result: no call is left dangling.
func (r *run) cancelStarted(open []*call, step int) {
	for _, c := range open {
		r.emit(Event{Type: EventToolResult, Step: step, ToolCallID: c.id, ToolName: c.name,
			Result: json.RawMessage(`"cancelled before the call was complete"`), IsError: true, Cancelled: true})
	}
}

// toolResult is the outcome of one call.
type toolResult struct {
	raw       any    // what the UI and the store keep
	modelText string // what the model sees
	isError   bool
	cancelled bool
	suspended bool // raw is the suspend payload
	approval  bool // suspended for the user's approval, not by the tool
}

// approvalRequest is the payload of a call waiting for approval.
type approvalRequest struct {
	Approval bool `json:"approval"`
	Payload  any  `json:"payload,omitempty"`
}

// execute runs a step's calls, several at once, and yields their events as
// they come. Results come back in call order.
func (r *run) execute(ctx context.Context, calls []*call, prompt []llm.Message, step int) []toolResult {
	if len(calls) == 0 {
		return nil
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan Event)
	var wg sync.WaitGroup
	sem := make(chan struct{}, toolConcurrency)
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Progress a tool writes after it returned is dropped: the
			// result event has been sent and the channel may be closed.
			var mu sync.Mutex
			done := false
			c.result = r.callTool(tctx, c, prompt, step, func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				if !done {
					events <- e
				}
			})
			mu.Lock()
			done = true
			mu.Unlock()
			if c.result.suspended {
				typ := EventToolSuspended
				if c.result.approval {
					typ = EventToolApproval
				}
				ev := Event{Type: typ, Step: step, ToolCallID: c.id, ToolName: c.name, Args: c.input, Result: resultJSON(c.result)}
				ev.Transform = transform(r.log, r.agent.Transform, c.tool, TransformContext{Phase: PhaseSuspend, ToolName: c.name, ToolCallID: c.id, Input: c.input, SuspendPayload: c.result.raw})
				events <- ev
				return
			}
			ev := Event{Type: EventToolResult, Step: step, ToolCallID: c.id, ToolName: c.name,
				Result: resultJSON(c.result), IsError: c.result.isError, Cancelled: c.result.cancelled,
				ModelOutput: c.result.modelText, Resume: c.resume}
			phase := PhaseOutput
			tc := TransformContext{Phase: phase, ToolName: c.name, ToolCallID: c.id, Input: c.input, Output: c.result.raw}
			if c.result.isError {
				tc.Phase, tc.Output, tc.Error = PhaseError, nil, fmt.Sprint(c.result.raw)
			}
			ev.Transform = transform(r.log, r.agent.Transform, c.tool, tc)
			events <- ev
		}()
	}
	go func() { wg.Wait(); close(events) }()
	for e := range events {
		if !r.emit(e) {
			cancel() // nobody reads on: stop the tools, drain their events
		}
	}
	out := make([]toolResult, len(calls))
	for i, c := range calls {
		out[i] = c.result
	}
	return out
}

func resultJSON(res toolResult) json.RawMessage {
	b, err := json.Marshal(res.raw)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("%v", res.raw))
	}
	return b
}

// errResult is an error result: the model and the UI both see text.
func errResult(text string) toolResult {
	return toolResult{raw: text, modelText: text, isError: true}
}

// callTool runs one call through validation, the hooks and the tool.
func (r *run) callTool(ctx context.Context, c *call, prompt []llm.Message, step int, send func(Event)) toolResult {
	if c.parseErr != nil {
		return errResult(fmt.Sprintf("Could not parse the arguments of %s: %v. Send the arguments again as one valid JSON object.", c.name, c.parseErr))
	}
	// A resumed call was allowed when it was made: a mode switch since
	// (plan approved → Build) must not refuse its answer.
	resumed := c.resume != nil || c.approval != nil
	if c.tool == nil || (r.active != nil && !r.active[c.name] && !resumed) {
		return errResult(r.unknownTool(c.name))
	}
	// The tool runs with the input Mastra's validation leaves (unknown keys
	// dropped); the call as the model made it stays as it was.
	if len(c.input) >= tightFrom {
		// The buffers a big input grew through while it streamed are
		// garbage now: collected before its strings are decoded, their
		// memory is what the decode takes, not more from the system.
		runtime.GC()
	}
	decoded := &decodedInput{}
	input, invalid, err := c.tool.checkInput(c.name, c.input, decoded)
	switch {
	case err != nil:
		return errResult(err.Error())
	case invalid != nil:
		return toolResult{raw: invalid, modelText: jsonText(invalid), isError: true}
	}
	tc := &ToolContext{
		ToolCallID: c.id, ToolName: c.name, AgentID: r.agent.ID, RunID: r.id,
		ThreadID: r.opts.ThreadID, ResourceID: r.opts.ResourceID, RequestContext: r.opts.RequestContext,
		Messages:    prompt,
		ResumeData:  c.resume,
		Suspendable: true,
		progress:    func(e Event) { e.Step = step; send(e) },
		decoded:     decoded,
	}
	if c.tool.OnInputAvailable != nil {
		r.hook("onInputAvailable", c.name, func() error {
			return c.tool.OnInputAvailable(ctx, InputAvailable{ToolCallID: c.id, Input: c.input, Messages: prompt})
		})
	}
	info := ToolCallInfo{ToolName: c.name, ToolCallID: c.id, Input: input, Context: tc, AgentID: r.agent.ID, AgentName: r.agent.Name, Approval: c.approval}

	var output any
	ran := true
	if r.hooks.BeforeToolCall != nil {
		var d *ToolDecision
		d, err = r.hooks.BeforeToolCall(ctx, info)
		switch {
		case err != nil:
			err = fmt.Errorf("beforeToolCall: %w", err)
			ran = false
		case d != nil && d.RequireApproval && c.approval == nil:
			return toolResult{raw: approvalRequest{Approval: true, Payload: d.ApprovalPayload}, suspended: true, approval: true}
		case d != nil && !d.Proceed && d.Error != "":
			return errResult(d.Error)
		case d != nil && !d.Proceed:
			output, ran = d.Output, false
		}
	}
	if ran {
		output, err = runTool(ctx, r.log, c.tool, input, tc)
		if r.hooks.AfterToolCall != nil {
			if herr := safeCall(func() error { return r.hooks.AfterToolCall(ctx, info, output, err) }); herr != nil {
				r.log.Error("Error calling afterToolCall", "tool", c.name, "err", herr)
			}
		}
	}
	var susp *SuspendError
	if errors.As(err, &susp) {
		return toolResult{raw: susp.Payload, suspended: true}
	}
	if err != nil {
		res := errResult(err.Error())
		res.cancelled = ctx.Err() != nil
		return res
	}
	if ran {
		if verr := c.tool.ValidateOutput(output); verr != nil {
			return errResult(fmt.Sprintf("Tool %s returned output that does not match its output schema:\n- %s", c.name, strings.ReplaceAll(verr.Error(), "\n", "\n- ")))
		}
	}
	if c.tool.OnOutput != nil {
		r.hook("onOutput", c.name, func() error {
			return c.tool.OnOutput(ctx, Output{ToolCallID: c.id, ToolName: c.name, Output: output})
		})
	}
	mo, err := c.tool.modelOutput(output)
	if err != nil {
		return errResult(fmt.Sprintf("Tool %s: %v", c.name, err))
	}
	return toolResult{raw: output, modelText: mo.text(), isError: mo.Type == "error-text" || mo.Type == "error-json"}
}

// runTool calls Execute; a panic becomes an error.
func runTool(ctx context.Context, log *slog.Logger, t *Tool, input json.RawMessage, tc *ToolContext) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("tool panicked", "tool", tc.ToolName, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("tool %s crashed: %v", tc.ToolName, p)
		}
	}()
	if t.Execute == nil {
		return nil, fmt.Errorf("tool %s has no execute function", tc.ToolName)
	}
	return t.Execute(ctx, input, tc)
}

func safeCall(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}

// hook runs a lifecycle hook; its failure is logged and swallowed.
func (r *run) hook(name, tool string, fn func() error) {
	if err := safeCall(fn); err != nil {
		r.log.Error("Error calling "+name, "tool", tool, "err", err)
	}
}

// unknownTool is Mastra's text for a call to a tool that does not exist.
func (r *run) unknownTool(name string) string {
	names := r.visibleNames()
	msg := fmt.Sprintf("Tool %q not found.", name)
	if len(names) > 0 {
		msg += " Available tools: " + strings.Join(names, ", ")
	}
	return msg + ". Call tools by their exact name only — never add prefixes, namespaces, or colons."
}

// visibleNames are the tools the model may call, sorted.
func (r *run) visibleNames() []string {
	var names []string
	for n := range r.tools {
		if r.active == nil || r.active[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func (r *run) toolSpecs() []llm.ToolSpec {
	var specs []llm.ToolSpec
	for _, n := range r.visibleNames() {
		t := r.tools[n]
		if t.ProviderDefined && llm.CheckProviderTool(r.spec, n) != nil {
			continue // the model's provider has no such tool: offering it fails every call
		}
		specs = append(specs, t.spec(n))
	}
	return specs
}

// resolve finds a tool by its key, else by its id.
func (r *run) resolve(name string) *Tool {
	if t, ok := r.tools[name]; ok {
		return t
	}
	keys := make([]string, 0, len(r.tools))
	for k := range r.tools {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r.tools[k].ID == name {
			return r.tools[k]
		}
	}
	return nil
}

// shareFrom is the size from which a call's input is one array of bytes
// shared by its string and its json.RawMessage (rawOf, textOf), not copied
// from one to the other: a 10 MiB argument was copied twice on its way
// back to the model. Neither is ever written to.
const shareFrom = 64 << 10

// rawOf is s as JSON bytes: the same bytes, when s is big.
func rawOf(s string) json.RawMessage {
	if len(s) < shareFrom {
		return json.RawMessage(s)
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// textOf is b as a string: the same bytes, when b is big.
func textOf(b json.RawMessage) string {
	if len(b) < shareFrom {
		return string(b)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stepMessages are what a step adds to the prompt: the assistant's text and
// calls, then the results as the model sees them.
func stepMessages(text string, calls []*call, results []toolResult) []llm.Message {
	a := llm.Message{Role: llm.RoleAssistant, Text: text}
	t := llm.Message{Role: llm.RoleTool}
	for i, c := range calls {
		a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: sendID(c.id, c.providerID), Name: c.name, Input: textOf(c.input), Signature: c.signature})
		t.ToolResults = append(t.ToolResults, llm.ToolResult{CallID: sendID(c.id, c.providerID), Name: c.name, Output: results[i].modelText, IsError: results[i].isError})
	}
	return []llm.Message{a, t}
}

func usageOf(u llm.Usage) Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, ReasoningTokens: u.ReasoningTokens, CachedTokens: u.CachedTokens,
		CacheWriteTokens: u.CacheWriteTokens}
}

func addUsage(a, b Usage) Usage {
	return Usage{
		InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		TotalTokens: a.TotalTokens + b.TotalTokens, ReasoningTokens: a.ReasoningTokens + b.ReasoningTokens,
		CachedTokens: a.CachedTokens + b.CachedTokens, CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
	}
}
