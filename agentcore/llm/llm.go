// Package llm puts every model provider behind one small streaming
// interface. Models are named "provider/model" (openai/gpt-4o,
// anthropic/claude-sonnet-4-5, google/gemini-2.5-flash, openrouter/…,
// ollama/llama3.2, openai-compatible/…); the providers themselves are
// charm.land/fantasy's.
package llm

import (
	"context"
	"encoding/json"
	"iter"
)

// Role of a message sent to a model.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of the prompt.
type Message struct {
	Role Role
	Text string
	// ToolCalls made by an assistant message.
	ToolCalls []ToolCall
	// ToolResults carried by a tool message.
	ToolResults []ToolResult
}

// ToolCall is a complete tool call from the model.
type ToolCall struct {
	ID    string
	Name  string
	Input string // JSON text as the model wrote it
	// Signature is opaque provider state that must travel back with the
	// call in later requests (Gemini's thought signature; without it
	// Gemini 3 rejects the follow-up request). Empty for most providers.
	Signature string
}

// ToolResult answers one tool call.
type ToolResult struct {
	CallID  string
	Name    string
	Output  string // text given back to the model
	IsError bool
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
}

// Request is one model call.
type Request struct {
	Messages        []Message // system messages first
	Tools           []ToolSpec
	ToolChoice      string // "", "auto", "none", "required", or a tool name
	MaxOutputTokens int64
	Temperature     *float64
}

// PartType names a streamed part.
type PartType string

const (
	PartTextDelta      PartType = "text-delta"
	PartReasoningDelta PartType = "reasoning-delta"
	PartToolInputStart PartType = "tool-input-start" // ToolCallID, ToolName
	PartToolInputDelta PartType = "tool-input-delta" // ToolCallID, Delta
	PartToolInputEnd   PartType = "tool-input-end"   // ToolCallID
	PartToolCall       PartType = "tool-call"        // ToolCallID, ToolName, Input
	PartFinish         PartType = "finish"           // Usage, FinishReason
)

// Part is one streamed piece of a model's answer.
type Part struct {
	Type         PartType
	Text         string // text and reasoning deltas, tool input deltas
	ToolCallID   string
	ToolName     string
	Input        string // complete tool-call input (JSON text)
	Usage        Usage
	FinishReason string // "stop", "length", "tool-calls", "content-filter", "error", "other"
	Signature    string // tool-call: see ToolCall.Signature
}

// Usage counts tokens of one call.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	TotalTokens     int64
	ReasoningTokens int64
	CachedTokens    int64
}

// Model streams answers. The sequence ends after a PartFinish, or with a
// non-nil error (the error names the provider's reason).
type Model interface {
	// Spec is the "provider/model" string the model was opened with.
	Spec() string
	Stream(ctx context.Context, req Request) iter.Seq2[Part, error]
}
