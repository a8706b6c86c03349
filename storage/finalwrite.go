package storage

import (
	"sync"

	"parley/agentcore"
)

// offHeapFrom is the size of a message's JSON from which a write makes it
// in memory of its own (mapBytes) rather than in Go's heap: a streaming
// reply of 10 MiB is encoded again for each write of it, and each of those
// copies stayed in the heap as garbage until a collection, while a
// collection that found one still in use set the heap's next goal 2×10 MiB
// higher. Mapped, the copy costs its pages during the one write and is
// given back to the system as soon as SQLite has taken it.
const offHeapFrom = 1 << 20

// encodeForWrite is encodeContent for one write: release frees what the
// result is made in, once the statement that reads it has run, and may be
// called more than once. The result must not be used after release.
func encodeForWrite(c agentcore.Content) (content []byte, release func(), err error) {
	var unmap func()
	content, err = encodeSplicedIn(c, spliceFrom, func(size int) []byte {
		if size < offHeapFrom {
			return make([]byte, 0, size)
		}
		b, free := mapBytes(size)
		unmap = free
		return b
	})
	if unmap == nil {
		return content, func() {}, err
	}
	if err != nil {
		unmap()
		return nil, func() {}, err
	}
	return content, sync.OnceFunc(unmap), nil
}
