package agentcore

// Tool call ids come from the provider, and a provider's ids are not
// trusted: they may carry quotes, markup or line separators, be empty,
// repeat, or run to kilobytes, and Parley puts call ids in URLs
// (/t/<thread>/answer/<callId>), DOM ids and the store's lookups. So every
// call gets an id Parley issues (NewCallID), whatever the provider named
// it, even when the provider's id would have been safe: nothing Parley
// stores, publishes or shows depends on what a provider chose. The
// provider's own id is kept beside it only to go back to the provider,
// which checks that a result answers a call it made (sendID).

// sendID is the id a call and its result carry back to the provider: the
// provider's own (providerID) when it gave one, else Parley's.
func sendID(id, providerID string) string {
	if providerID != "" {
		return providerID
	}
	return id
}
