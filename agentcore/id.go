package agentcore

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
)

// NewID returns a random id that sorts by creation time: 11 base-36 digits
// of milliseconds, then 12 random hex digits.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand contract since Go 1.24)
	ms := strconv.FormatInt(time.Now().UnixMilli(), 36)
	for len(ms) < 11 {
		ms = "0" + ms
	}
	return ms + hex.EncodeToString(b[:])
}

// NewCallID returns an id for a tool call: "call_" and a NewID. Every call
// stored, published or shown carries one of these, whatever id the
// provider gave it (see call.providerID in loop.go).
func NewCallID() string {
	return "call_" + NewID()
}

// MaxIDLen is the longest id ValidID accepts: room for any id Parley or
// Mastra makes (a UUID is 36), short enough for a URL path segment.
const MaxIDLen = 128

// ValidID reports whether id is one Parley accepts from outside (the JSON
// API, an imported file): 1 to MaxIDLen letters, digits, '-' or '_'. Ids
// end up in URLs (/t/<id>), DOM ids (msg-<id>) and Datastar expressions,
// so they hold only characters that need no escaping in any of them. An id
// that is not valid is refused (the API) or re-issued (an import, a
// provider's tool-call id).
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
