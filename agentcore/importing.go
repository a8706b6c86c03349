package agentcore

import "context"

// ThreadImport is a whole thread to store at once, as read from a file.
type ThreadImport struct {
	Thread   Thread
	Messages []Message // in order: the store numbers them from their position
}

// ImportStore stores imported threads.
type ImportStore interface {
	// ImportThreads stores the threads with their messages in one
	// transaction: all of them or, on any error, none. Ids already taken
	// are replaced by new ones; it returns the threads as stored.
	ImportThreads(ctx context.Context, in []ThreadImport) ([]Thread, error)
}

// UsageStore sums what threads cost.
type UsageStore interface {
	// ThreadUsage sums the usage recorded on a thread's replies.
	ThreadUsage(ctx context.Context, threadID string) (ThreadUsage, error)
}
