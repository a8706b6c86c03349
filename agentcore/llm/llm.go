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
	// Files go with a user message after its text: images as the
	// provider's image parts, PDFs as its document parts (see CheckFile).
	Files []File
	// ToolCalls made by an assistant message.
	ToolCalls []ToolCall
	// ToolResults carried by a tool message.
	ToolResults []ToolResult
	// CacheBreakpoint is the caller's own Anthropic cache breakpoint at
	// the end of this message (the AI SDK's providerOptions.anthropic.
	// cacheControl on a message or a system instruction). Only Claude
	// models read it (see markCache); other providers ignore it.
	CacheBreakpoint bool
}

// File is a file attached to a user message.
type File struct {
	Name      string
	MediaType string // image/png, image/jpeg, image/webp, image/gif or application/pdf
	Data      []byte
}

// ToolCall is a complete tool call from the model.
type ToolCall struct {
	ID    string
	Name  string
	Input string // JSON text as the model wrote it
	// Signature is opaque provider state that must travel back with the
	// call in later requests (Gemini's thought signature, without which
	// Gemini 3 rejects the follow-up request, and the parts of a Google
	// Search made before the call). Plain text, safe to store. Empty for
	// most providers.
	Signature string
	// ProviderExecuted marks a call the provider ran itself (web_search).
	// Such calls are not sent back: no provider state is kept for them,
	// and the answer that followed stands on its own (OpenAI drops them
	// anyway when responses are not stored; Anthropic accepts the text
	// without its server_tool_use block).
	ProviderExecuted bool
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
	// ProviderDefined asks for the provider's own tool named Name (only
	// WebSearch so far) instead of a function the caller runs; its
	// Description and InputSchema are not sent. The provider runs it
	// during the call: its call and result arrive as parts with
	// ProviderExecuted set. A provider without that tool fails the
	// stream with an *UnsupportedToolError.
	ProviderDefined bool
}

// WebSearch is the provider-defined tool that searches the web: OpenAI's
// web_search (Responses API), Anthropic's web_search_20250305 and Gemini's
// Google Search grounding (Gemini 3 and later beside function tools,
// Gemini 2 only without them: see gemini.go).
const WebSearch = "web_search"

// Request is one model call.
type Request struct {
	Messages        []Message // system messages first
	Tools           []ToolSpec
	ToolChoice      string // "", "auto", "none", "required", or a tool name
	MaxOutputTokens int64
	Temperature     *float64
	TopP            *float64
	// CacheKey names the conversation for the provider's prompt cache: the
	// thread id, sent hashed as OpenAI's prompt_cache_key (see CacheKey).
	// "": none.
	CacheKey string
	// Thinking is the chat's thinking level (see applyOptions).
	Thinking Thinking
	// Options are the caller's provider options; they win over Thinking.
	Options ProviderOptions
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
	// PartToolResult is the result of a provider-executed call; the
	// caller never gets one for its own tools.
	PartToolResult PartType = "tool-result" // ToolCallID, ToolName, Result, IsError
	PartSource     PartType = "source"      // URL, Title: a page the answer draws on
	PartFinish     PartType = "finish"      // Usage, FinishReason
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

	// ProviderExecuted marks the tool input, call and result parts of a
	// call the provider runs itself (a ProviderDefined tool): the caller
	// shows it but must not run it, and no tool message answers it.
	ProviderExecuted bool
	Result           string // tool-result: JSON text, for web_search a WebSearchResult
	IsError          bool   // tool-result: the provider's tool failed
	URL, Title       string // source; each URL comes once per stream

	// InputSoFar (tool input deltas, from an adapter that keeps the
	// call's input whole as it streams) is all of the call's input so
	// far, Text at its end: a view of the adapter's buffer, which the
	// agent keeps instead of a copy of its own.
	InputSoFar string
}

// WebSearchResult is the Result of a web_search call. OpenAI names no
// results there (its sources come as PartSource citations in the text);
// Anthropic lists every page the search returned; Gemini lists the pages
// its answer is grounded on (its URLs are Google's redirects, its titles
// the sites), with every query it ran for the answer joined by "; ".
type WebSearchResult struct {
	Query   string   `json:"query,omitempty"`
	Results []Source `json:"results,omitempty"`
	// Error is the provider's error code when the search failed
	// (Anthropic: "max_uses_exceeded", "too_many_requests", …).
	Error string `json:"error,omitempty"`
}

// Source is a web page found or cited by a provider's search.
type Source struct {
	URL     string `json:"url"`
	Title   string `json:"title,omitempty"`
	PageAge string `json:"pageAge,omitempty"` // Anthropic: "6 days ago"
}

// Usage counts tokens of one call. The input is split three ways, each
// billed at its own price: InputTokens at the full price, CachedTokens read
// from the provider's prompt cache, CacheWriteTokens written to it
// (Anthropic's cache_creation_input_tokens). OutputTokens include the
// reasoning, which ReasoningTokens counts again.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	TotalTokens      int64
	ReasoningTokens  int64
	CachedTokens     int64
	CacheWriteTokens int64
}

// Model streams answers. The sequence ends after a PartFinish, or with a
// non-nil error (the error names the provider's reason).
type Model interface {
	// Spec is the "provider/model" string the model was opened with.
	Spec() string
	Stream(ctx context.Context, req Request) iter.Seq2[Part, error]
}
