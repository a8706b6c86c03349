package agentcore

import (
	"context"
	"time"
)

// SearchQuery asks for the messages and threads that match some words.
type SearchQuery struct {
	// Text is what the user typed. Every word must match; the last one
	// also matches as a prefix unless Text ends in a space (the user is
	// still typing it). Quotes, operators and other query syntax are taken
	// as plain text.
	Text  string
	Limit int // 0: DefaultSearchLimit
}

// DefaultSearchLimit is how many hits a search returns when asked for no
// particular number: more than a search box shows without scrolling.
const DefaultSearchLimit = 20

// Where a search hit matched.
const (
	HitTitle = "title" // the thread's title
	HitTool  = "tool"  // the name of a tool the message calls
	HitText  = "text"  // the message's text
)

// SearchHit is one match: a message, or a thread whose title matched.
type SearchHit struct {
	ThreadID    string
	ThreadTitle string
	// MessageID is empty when the thread's title matched.
	MessageID string
	Role      Role
	Field     string // HitTitle, HitTool or HitText: where Snippet comes from
	// Snippet is the text around the match, in pieces; the pieces with
	// Match set are the words that matched.
	Snippet []SnippetPart
	// At is when the message was written, or when a matching thread was
	// last updated.
	At time.Time
}

// SnippetPart is a piece of a snippet: plain text, never markup.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// SearchStore searches every thread: messages by their text and by the
// names of the tools they call, threads by their titles. Hits come best
// first. A query with no words has no hits and is not an error.
type SearchStore interface {
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
}
