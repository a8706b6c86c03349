package storage

import "sync/atomic"

// trimFrom is the size of a message's stored JSON from which writing it
// whole (not while it streams) or reading it hands SQLite's freed memory
// back to the system afterwards (trimSQLiteMemory): SQLite needs several
// times such a message's size to bind, record and index it, and its
// allocator kept all of it. Handing back costs an unmapping now and page
// faults when SQLite next needs that much: nothing beside a write of MiBs.
const trimFrom = 1 << 20

// bigRead is set when a read has scanned a message of trimFrom bytes or
// more, whose record SQLite held.
var bigRead atomic.Bool

// trimIfRead hands SQLite's freed memory back if a big message was read.
func trimIfRead() {
	if bigRead.Swap(false) {
		trimSQLiteMemory()
	}
}
