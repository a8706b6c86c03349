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
