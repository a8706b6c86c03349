package agentcore

import (
	"context"
	"encoding/json"
)

// ToolHooks run around every tool call, whatever its source: assigned
// tools, sub-agents, workflows (spec §3.1).
type ToolHooks struct {
	// BeforeToolCall may stop the call: a decision with Proceed false skips
	// the tool (and AfterToolCall) and its Output becomes the result. A nil
	// decision lets the call proceed.
	BeforeToolCall func(ctx context.Context, c ToolCallInfo) (*ToolDecision, error)
	// AfterToolCall sees the output, or the error the tool failed with; the
	// error still reaches the model after the hook.
	AfterToolCall func(ctx context.Context, c ToolCallInfo, output any, err error) error
}

// ToolCallInfo describes a call to the hooks.
type ToolCallInfo struct {
	ToolName   string // the name the model called
	ToolCallID string
	Input      json.RawMessage
	Context    *ToolContext
	AgentID    string
	AgentName  string
	// Approval is the user's answer when the hook asked for one (see
	// ToolDecision.RequireApproval); nil the first time.
	Approval *ApprovalDecision
}

// ToolDecision is a before-hook's answer.
type ToolDecision struct {
	Proceed bool
	Output  any
	// Error, with Proceed false, is an error result for the model instead
	// of Output (a denied call).
	Error string
	// RequireApproval suspends the call until the user decides; the hook is
	// called again with ToolCallInfo.Approval set. ApprovalPayload is shown
	// with the call's arguments.
	RequireApproval bool
	ApprovalPayload any
}

// ApprovalDecision is the user's answer to an approval request.
type ApprovalDecision struct {
	Decision string `json:"decision"` // "allow" (once), "always", or "deny"
	Reason   string `json:"reason,omitempty"`
}

// ApprovalResumeSchema is the shape of an approval answer.
var ApprovalResumeSchema = json.RawMessage(`{"type":"object","properties":{"decision":{"type":"string","enum":["allow","always","deny"]},"reason":{"type":"string"}},"required":["decision"],"additionalProperties":false}`)

// merge overrides h with the non-nil hooks of o, per key.
func (h ToolHooks) merge(o ToolHooks) ToolHooks {
	if o.BeforeToolCall != nil {
		h.BeforeToolCall = o.BeforeToolCall
	}
	if o.AfterToolCall != nil {
		h.AfterToolCall = o.AfterToolCall
	}
	return h
}
