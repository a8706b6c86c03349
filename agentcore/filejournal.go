package agentcore

import (
	"context"
	"time"
)

// FileWrite is one change a file tool made to a workspace file, as the
// journal keeps it: enough to put the file back as it was before the call,
// and to tell whether it changed outside Parley since.
type FileWrite struct {
	ID         int64
	ThreadID   string
	ToolCallID string
	Workspace  string // the workspace root the call wrote in
	Path       string // relative to Workspace, forward slashes
	Existed    bool   // the file was there before the call
	// Before is the file's content before the call, when it existed and
	// was kept (NotKept says why not otherwise).
	Before     []byte
	BeforeHash string
	NotKept    string
	AfterHash  string // the hash of what the call left; "" when it left no file
	CreatedAt  time.Time
}

// FileJournal keeps what file tools wrote, per chat (FileWrite).
type FileJournal interface {
	// RecordFileWrite stores w; Before is kept once per content, unless
	// the chat's kept contents would pass the journal's cap, in which case
	// it is dropped and NotKept says so.
	RecordFileWrite(ctx context.Context, w FileWrite) error
	// FileWrites returns the thread's writes by the given tool calls, in
	// the order they were made, with their Before contents.
	FileWrites(ctx context.Context, threadID string, toolCallIDs []string) ([]FileWrite, error)
}
