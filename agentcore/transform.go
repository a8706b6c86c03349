package agentcore

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Transform targets and phases (spec §3.4).
const (
	TargetDisplay    = "display"    // what views of the thread show
	TargetTranscript = "transcript" // what the persisted history shows

	PhaseInputDelta     = "input-delta"
	PhaseInputAvailable = "input-available"
	PhaseOutput         = "output-available"
	PhaseError          = "error"
	PhaseApproval       = "approval"
	PhaseSuspend        = "suspend"
	PhaseResume         = "resume"
)

// TransformContext is what a payload transformer sees.
type TransformContext struct {
	Target         string
	Phase          string
	ToolName       string
	ToolCallID     string
	Input          json.RawMessage
	InputTextDelta string
	Output         any
	Error          string
	SuspendPayload any
	ResumeData     any
}

// TransformFunc returns the transformed payload and true, or false when it
// has nothing to say (Mastra's undefined).
type TransformFunc func(TransformContext) (any, bool, error)

// PhaseTransforms has one optional transformer per phase.
type PhaseTransforms struct {
	Input, InputDelta, Output, Error, Approval, Suspend, Resume TransformFunc
}

func (p *PhaseTransforms) forPhase(phase string) TransformFunc {
	if p == nil {
		return nil
	}
	switch phase {
	case PhaseInputDelta:
		return p.InputDelta
	case PhaseInputAvailable:
		return p.Input
	case PhaseOutput:
		return p.Output
	case PhaseError:
		return p.Error
	case PhaseApproval:
		return p.Approval
	case PhaseSuspend:
		return p.Suspend
	case PhaseResume:
		return p.Resume
	}
	return nil
}

// ToolTransform is a tool's own transformers, per target.
type ToolTransform struct {
	Display, Transcript *PhaseTransforms
}

func (t *ToolTransform) target(name string) *PhaseTransforms {
	if t == nil {
		return nil
	}
	if name == TargetDisplay {
		return t.Display
	}
	return t.Transcript
}

// TransformPolicy is the agent-level transformer, tried before the tool's
// own. Targets limits the targets it applies to (nil: both).
type TransformPolicy struct {
	Transform TransformFunc
	Targets   []string
}

func (p *TransformPolicy) applies(target string) bool {
	if p == nil || p.Transform == nil {
		return false
	}
	if p.Targets == nil {
		return true
	}
	for _, t := range p.Targets {
		if t == target {
			return true
		}
	}
	return false
}

// TransformResult is the outcome for one target: a transformed payload, or
// Suppress for an input delta that must not be shown.
type TransformResult struct {
	Transformed any  `json:"transformed,omitempty"`
	Suppress    bool `json:"suppress,omitempty"`
	Failed      bool `json:"failed,omitempty"`
}

// transform computes the display and transcript results for one payload.
// A target neither the policy nor the tool configures gets nothing (the raw
// payload passes). A configured target fails closed: without a transformer
// that answers, input deltas are suppressed and every other phase shows a
// placeholder, never the raw payload.
func transform(log *slog.Logger, policy *TransformPolicy, tool *Tool, c TransformContext) map[string]TransformResult {
	var out map[string]TransformResult
	for _, target := range []string{TargetDisplay, TargetTranscript} {
		var own *PhaseTransforms
		if tool != nil {
			own = tool.Transform.target(target)
		}
		if !policy.applies(target) && own == nil {
			continue
		}
		c.Target = target
		r := runTransforms(log, c, policyFunc(policy, target), own.forPhase(c.Phase))
		if out == nil {
			out = map[string]TransformResult{}
		}
		out[target] = r
	}
	return out
}

func policyFunc(p *TransformPolicy, target string) TransformFunc {
	if p.applies(target) {
		return p.Transform
	}
	return nil
}

func runTransforms(log *slog.Logger, c TransformContext, fns ...TransformFunc) TransformResult {
	for _, fn := range fns {
		if fn == nil {
			continue
		}
		v, ok, err := callTransform(fn, c)
		if err != nil {
			log.Warn("Tool payload transform failed", "tool", c.ToolName, "phase", c.Phase, "target", c.Target, "err", err)
			return closed(c.Phase, true)
		}
		if ok {
			return TransformResult{Transformed: v}
		}
	}
	return closed(c.Phase, false)
}

func callTransform(fn TransformFunc, c TransformContext) (v any, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn(c)
}

// closed is the fail-closed result of a phase.
func closed(phase string, failed bool) TransformResult {
	if phase == PhaseInputDelta {
		return TransformResult{Suppress: true, Failed: failed}
	}
	return TransformResult{Transformed: map[string]any{"message": "Tool " + phase + " payload unavailable"}, Failed: failed}
}
