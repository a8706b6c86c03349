package storage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewID returns a random id that sorts by creation time: 12 hex digits of
// milliseconds since the epoch, then 20 random hex digits (80 bits, so ids
// made in the same millisecond do not collide).
func NewID() string {
	var b [16]byte
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(time.Now().UnixMilli()))
	copy(b[:6], t[2:])
	rand.Read(b[6:]) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b[:])
}
