package components

// SearchView is what the search box lists for a query.
type SearchView struct {
	Query string
	Hits  []SearchHit
	Error string // why there are no hits (the query is too long, the search failed)
}

// SearchHit is one match in the search box.
type SearchHit struct {
	URL     string // the thread, opened on the message
	Title   string // the thread's title
	Kind    string // what matched: "Title", "Tool call", "You", "Parley"
	When    string
	Snippet []SnippetPart
	// OtherVersion: the message is on a branch of its chat that the chat
	// does not show (an older version of an edited or regenerated turn);
	// opening the hit shows that branch.
	OtherVersion bool
}

// SnippetPart is plain text; Match marks the words that matched.
type SnippetPart struct {
	Text  string
	Match bool
}

func selected(first bool) string {
	if first {
		return "true"
	}
	return "false"
}
