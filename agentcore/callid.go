package agentcore

// Tool call ids come from the provider, and a provider's ids are not
// trusted: they may carry quotes, markup or line separators, be empty,
// repeat, or run to kilobytes, and Parley puts call ids in URLs
// (/t/<thread>/answer/<callId>), DOM ids and the store's lookups. So every
// call gets an id Parley has checked or issued (callID); the provider's
// own id is kept beside it only to go back to the provider, which checks
// that a result answers a call it made (sendID).

// callID is Parley's id for a call the provider named pid: pid itself when
// it is ValidID and no other call of the thread has it, else a new
// NewCallID. Either way it is safe in a URL, a DOM id and an expression,
// and unique in its thread.
func (r *run) callID(pid string) string {
	if r.callIDs == nil {
		r.callIDs = map[string]bool{}
	}
	id := pid
	if !ValidID(id) || r.callIDs[id] {
		id = NewCallID()
	}
	r.callIDs[id] = true
	return id
}

// sendID is the id a call and its result carry back to the provider: the
// provider's own (providerID) when Parley gave the call another, else
// Parley's.
func sendID(id, providerID string) string {
	if providerID != "" {
		return providerID
	}
	return id
}

// threadCallIDs are the ids of the tool calls in messages.
func threadCallIDs(messages []Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range messages {
		for _, p := range m.Content.Parts {
			if ti := p.ToolInvocation; ti != nil {
				ids[ti.ToolCallID] = true
			}
		}
	}
	return ids
}
