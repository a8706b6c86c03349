package agentcore

import (
	"encoding/json"
	"strconv"
)

// A reply records what it cost in its content's metadata, beside "model",
// when its run ends, so the figures travel with the message (an export
// keeps them) and a thread's total is a sum over its messages:
//
//	"usage":         Usage, summed over every model call of every run that
//	                 wrote the reply (a resumed run adds to it)
//	"contextTokens": input + cached + cache-write + output tokens of the reply's last model
//	                 call: how much of the context window the conversation
//	                 filled when the model last saw it, plus its answer
const (
	MetaUsage         = "usage"
	MetaContextTokens = "contextTokens"
)

// Add is the sum of two usages.
func (u Usage) Add(o Usage) Usage { return addUsage(u, o) }

// IsZero reports whether no token was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// contextTokens is the context a model call filled, plus its answer.
func (u Usage) contextTokens() int64 {
	return u.InputTokens + u.CachedTokens + u.CacheWriteTokens + u.OutputTokens
}

// MessageUsage is the usage a reply recorded; ok is false when it has none
// (user messages, replies from before usage was kept, imported chats).
func MessageUsage(c Content) (u Usage, ok bool) {
	v, found := c.Metadata[MetaUsage]
	if !found || v == nil {
		return Usage{}, false
	}
	switch v := v.(type) {
	case Usage:
		return v, true
	case *Usage:
		return *v, v != nil
	}
	// Read back from the store: a map. Re-encoding it is cheap (five
	// numbers) and keeps one definition of the field names.
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &u) != nil {
		return Usage{}, false
	}
	return u, true
}

// MessageContextTokens is the context fill a reply recorded.
func MessageContextTokens(c Content) (int64, bool) {
	switch v := c.Metadata[MetaContextTokens].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		return int64(v), true
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// ThreadUsage is what a thread's replies cost, from the usage they recorded.
type ThreadUsage struct {
	// ByModel sums usage per model ("" when a reply did not record one);
	// prices are per model, so a thread that switched models is costed
	// model by model.
	ByModel map[string]Usage
	// Replies is how many replies recorded usage.
	Replies int
	// ContextTokens is the context fill recorded by the latest reply that
	// has one, and ContextModel the model it was measured on (0, "": none).
	ContextTokens int64
	ContextModel  string
}

// Total is the usage summed over every model.
func (t ThreadUsage) Total() Usage {
	var sum Usage
	for _, u := range t.ByModel {
		sum = sum.Add(u)
	}
	return sum
}
