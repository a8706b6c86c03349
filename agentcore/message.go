package agentcore

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// ErrNotFound is returned by stores when a thread, message or run does not exist.
var ErrNotFound = errors.New("not found")

// ErrDiskFull: a store write failed because the disk (or the database's
// size limit) is full; a store wraps its own error with it.
var ErrDiskFull = errors.New("the disk is full")

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
)

// MessageStatus is where a message is in its life. Assistant messages
// stream; signals and user messages sent while a run goes wait queued.
type MessageStatus string

const (
	StatusStreaming   MessageStatus = "streaming"   // a run is writing it now
	StatusComplete    MessageStatus = "complete"    // the run finished it
	StatusInterrupted MessageStatus = "interrupted" // stopped by the user, or by a crash
	StatusError       MessageStatus = "error"       // the provider failed; Content keeps what arrived
	// StatusQueued: a message accepted while a run was going, not yet
	// read by a model (delivered at the run's next step, or queued to
	// start the next run).
	StatusQueued MessageStatus = "queued"
)

// Resource is the owner of threads (Mastra's resourceId): a user or a workspace.
type Resource struct {
	ID        string          `json:"id"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// Thread is one conversation.
type Thread struct {
	ID         string         `json:"id"`
	ResourceID string         `json:"resourceId"`
	Title      string         `json:"title"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Pinned     bool           `json:"pinned"`
	CreatedAt  time.Time      `json:"createdAt"`
	// UpdatedAt is the thread's last message activity (a message stored
	// or moved), which lists threads; editing the thread itself (title,
	// pin, metadata) leaves it.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ThreadPatch changes some fields of a thread; nil fields are left alone.
type ThreadPatch struct {
	Title    *string
	Metadata map[string]any // replaces the whole map when non-nil
	Pinned   *bool
}

// Message is a stored message in Mastra's v2 format.
type Message struct {
	ID         string        `json:"id"`
	ThreadID   string        `json:"threadId"`
	ResourceID string        `json:"resourceId"`
	Role       Role          `json:"role"`
	Type       string        `json:"type,omitempty"` // a signal's tag name
	Content    Content       `json:"content"`
	Seq        int64         `json:"-"` // per-thread order, assigned by the store
	Status     MessageStatus `json:"-"`
	RunID      string        `json:"-"`
	CreatedAt  time.Time     `json:"createdAt"`
	// ParentID is the message this one follows in the thread's tree, a
	// message of the same thread with a lower Seq; empty for a root (the
	// first message of a branch). Siblings (the same parent) are versions
	// of one turn: an edited user message, a regenerated reply.
	ParentID string `json:"parentId,omitempty"`
	// Active: the message is on the thread's active branch, the one path
	// of the tree the chat shows and the model reads. Set by the store.
	Active bool `json:"-"`
}

// Content is Mastra's MastraMessageContentV2: {format: 2, parts: [...]}.
type Content struct {
	Format   int            `json:"format"`
	Parts    []Part         `json:"parts"`
	Content  string         `json:"content,omitempty"` // plain text of the text parts
	Metadata map[string]any `json:"metadata,omitempty"`
	// ProviderMetadata are the provider options a caller gave the message
	// (the AI SDK's message providerOptions), kept with it as Mastra keeps
	// them (content.providerMetadata), so that later requests of the
	// thread send them too.
	ProviderMetadata *MessageOptions `json:"providerMetadata,omitempty"`
}

// MessageOptions are the provider options on one message or system
// instruction that Parley honours: Anthropic's cache breakpoint
// ({anthropic: {cacheControl: {type: "ephemeral"}}}), the one option
// fantasy carries per message. Other providers and keys are dropped when a
// caller's options are read, as the AI SDK's schemas strip them.
type MessageOptions struct {
	Anthropic *AnthropicMessageOptions `json:"anthropic,omitempty"`
}

// AnthropicMessageOptions: cacheControl.
type AnthropicMessageOptions struct {
	CacheControl *CacheControl `json:"cacheControl,omitempty"`
}

// CacheControl is Anthropic's cache_control; Type is "ephemeral".
type CacheControl struct {
	Type string `json:"type"`
}

// CacheBreakpoint reports whether o asks for an Anthropic cache breakpoint
// at the end of its message.
func (o *MessageOptions) CacheBreakpoint() bool {
	return o != nil && o.Anthropic != nil && o.Anthropic.CacheControl != nil && o.Anthropic.CacheControl.Type == "ephemeral"
}

// Part is one part of a v2 message. Type is "text", "reasoning", "step-start",
// "tool-invocation", "source" or "file".
type Part struct {
	Type           string          `json:"type"`
	Text           string          `json:"text,omitempty"`
	Source         *Source         `json:"source,omitempty"`
	ToolInvocation *ToolInvocation `json:"toolInvocation,omitempty"`
	// A file part (Mastra v2's {type: "file", data, mimeType, filename}):
	// Data is where Parley keeps it, FileURL of its SHA-256; Size is
	// Parley's own, for the chip that shows it.
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Filename string `json:"filename,omitempty"`
	Size     int64  `json:"size,omitempty"`
}

// filePrefix is the path a stored file is served at, before its SHA-256
// in hex: a file part's Data.
const filePrefix = "/files/"

// FileURL is the Data of a file part for the stored file with sha256 (hex).
func FileURL(sha256 string) string { return filePrefix + sha256 }

// FileRef is the SHA-256 of the stored file a file part names, and whether
// it names one: 64 lowercase hex digits after filePrefix, nothing else.
func (p Part) FileRef() (string, bool) {
	ref, ok := strings.CutPrefix(p.Data, filePrefix)
	if p.Type != "file" || !ok || len(ref) != 64 {
		return "", false
	}
	for _, c := range ref {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return ref, true
}

// ToolInvocation is the v2 record of one tool call. ToolCallID is Parley's
// id for the call, ValidID and unique in its thread, whatever id the
// provider gave it (see ProviderCallID).
type ToolInvocation struct {
	State      string          `json:"state"` // "partial-call" | "call" | "suspended" | "result"
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Step       int             `json:"step,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Cancelled  bool            `json:"cancelled,omitempty"` // stopped before it finished
	// ArgsText is the argument text streamed so far, while State is
	// partial-call.
	ArgsText string `json:"argsText,omitempty"`
	// SuspendPayload is what the user is asked, while State is suspended,
	// and is kept after the answer (the question stays visible).
	SuspendPayload json.RawMessage `json:"suspendPayload,omitempty"`
	// Approval: suspended for the user's approval (ResumeData is then an
	// ApprovalDecision), not by the tool.
	Approval bool `json:"approval,omitempty"`
	// ResumeData is the user's answer to the suspension.
	ResumeData json.RawMessage `json:"resumeData,omitempty"`
	// Progress is what the tool wrote while it ran.
	Progress string `json:"progress,omitempty"`
	// ModelOutput is what the model saw of the result (toModelOutput), so
	// the history replays it (Mastra: providerMetadata.mastra.modelOutput).
	ModelOutput string `json:"modelOutput,omitempty"`
	// ProviderExecuted: the provider ran the call (web_search).
	ProviderExecuted bool `json:"providerExecuted,omitempty"`
	// Signature is provider state that must go back with the call.
	Signature string `json:"signature,omitempty"`
	// ProviderCallID is the provider's id for the call, if it gave one:
	// sent back to the provider with the call and its result (providers
	// check that they match), used for nothing else.
	ProviderCallID string `json:"providerCallId,omitempty"`
	// Transforms are display/transcript payloads by target and phase.
	Transforms map[string]map[string]TransformResult `json:"transforms,omitempty"`
}

// Source is a web page an answer draws on.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// TextContent builds v2 content holding one text part.
func TextContent(text string) Content {
	c := Content{Format: 2, Parts: []Part{}}
	if text != "" {
		c.Parts = append(c.Parts, Part{Type: "text", Text: text})
	}
	c.Content = text
	return c
}

// Text is the concatenated text of all text parts.
func (c Content) Text() string {
	var s string
	for _, p := range c.Parts {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s
}

// RunStatus is the state of one agent run.
type RunStatus string

const (
	RunRunning   RunStatus = "running"
	RunDone      RunStatus = "done"
	RunStopped   RunStatus = "stopped"
	RunFailed    RunStatus = "failed"
	RunSuspended RunStatus = "suspended"
)

// Run is one agent run on a thread.
type Run struct {
	ID         string    `json:"runId"`
	ThreadID   string    `json:"threadId"`
	AgentID    string    `json:"agentId"`
	Model      string    `json:"model"`
	Status     RunStatus `json:"status"`
	Error      string    `json:"error,omitempty"`
	Usage      Usage     `json:"usage"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// Usage counts tokens, as reported by the provider.
type Usage struct {
	InputTokens     int64 `json:"inputTokens"`
	OutputTokens    int64 `json:"outputTokens"`
	TotalTokens     int64 `json:"totalTokens"`
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"`
	CachedTokens    int64 `json:"cachedInputTokens,omitempty"`
	// CacheWriteTokens were written to the provider's prompt cache
	// (Anthropic bills them above the input price); like CachedTokens they
	// are not in InputTokens.
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}
