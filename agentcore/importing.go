package agentcore

import "context"

// ThreadImport is a whole thread to store at once, as read from a file.
type ThreadImport struct {
	Thread   Thread
	Messages []Message // in order: the store numbers them from their position
}

// ReissueIDs makes the ids of an imported thread ones Parley trusts: a
// thread or message id that is not ValidID is cleared (the store gives it
// a new one, as it does an empty id), and a tool call id that is not is
// replaced by a NewCallID, the same new id wherever the old one appears in
// the thread. Messages take their thread id from the thread when stored,
// so they follow it. It returns how many ids it replaced.
func (imp *ThreadImport) ReissueIDs() int {
	n := 0
	if imp.Thread.ID != "" && !ValidID(imp.Thread.ID) {
		imp.Thread.ID = ""
		n++
	}
	calls := map[string]string{} // a bad tool call id → its new id
	for i := range imp.Messages {
		m := &imp.Messages[i]
		if m.ID != "" && !ValidID(m.ID) {
			m.ID = ""
			n++
		}
		var parts []Part // copied before the first change: the caller's content is left alone
		for j, p := range m.Content.Parts {
			ti := p.ToolInvocation
			if ti == nil || ValidID(ti.ToolCallID) {
				continue
			}
			id, seen := calls[ti.ToolCallID]
			if !seen {
				id = NewCallID()
				calls[ti.ToolCallID] = id
				n++
			}
			if parts == nil {
				parts = append([]Part(nil), m.Content.Parts...)
			}
			fixed := *ti
			fixed.ToolCallID = id
			parts[j].ToolInvocation = &fixed
		}
		if parts != nil {
			m.Content.Parts = parts
		}
	}
	return n
}

// ImportStore stores imported threads.
type ImportStore interface {
	// ImportThreads stores the threads with their messages in one
	// transaction: all of them or, on any error, none. Ids already taken
	// are replaced by new ones, and so are ids that are not ValidID (see
	// ThreadImport.ReissueIDs); it returns the threads as stored.
	ImportThreads(ctx context.Context, in []ThreadImport) ([]Thread, error)
}

// UsageStore sums what threads cost.
type UsageStore interface {
	// ThreadUsage sums the usage recorded on a thread's replies.
	ThreadUsage(ctx context.Context, threadID string) (ThreadUsage, error)
}
