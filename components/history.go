package components

import (
	"fmt"
	"net/url"
)

// Pager places the messages a chat shows within the whole thread: a long
// thread opens on its latest page (or on the page around a search hit) and
// loads the rest a page at a time as the reader scrolls.
type Pager struct {
	ThreadID string
	// Before > 0: older messages exist; the older loader fetches the page
	// of messages with Seq < Before.
	Before int64
	// After > 0: newer messages than those shown exist (the chat opened on
	// an older page); the newer loader fetches, a page at a time, those
	// with After < Seq < Until. Messages from Until on come from the chat's
	// stream.
	After, Until int64
	// At is the message the chat was opened on (a search hit), "" for the
	// latest page.
	At string
}

// OlderURL is where the older loader fetches its page.
func OlderURL(p Pager) string {
	return ThreadAction(p.ThreadID, fmt.Sprintf("older?before=%d", p.Before))
}

// NewerURL is where the newer loader fetches its page.
func NewerURL(p Pager) string {
	return ThreadAction(p.ThreadID, fmt.Sprintf("newer?after=%d&until=%d", p.After, p.Until))
}

// StreamURL is the chat's stream; opened on a message, the stream's first
// render shows the same page around it.
func StreamURL(c Chat) string {
	u := ThreadAction(c.ThreadID, "stream")
	if c.Pager.At != "" {
		u += "?m=" + url.QueryEscape(c.Pager.At)
	}
	return u
}

// MessageURL opens a thread on one of its messages.
func MessageURL(threadID, messageID string) string {
	return ThreadURL(threadID) + "?m=" + url.QueryEscape(messageID)
}
