//go:build linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm)

package storage

import (
	"sync"
	_ "unsafe" // go:linkname

	"modernc.org/memory"
)

// SQLite's memory comes from modernc.org/libc's allocator, which keeps the
// regions SQLite frees for reuse and hands them back to the system only
// when told (memory.Allocator.Trim), which libc does not export: after a
// reply of N bytes was written (bound, recorded, indexed), the process
// kept about three times N resident for good. These are libc's own
// allocator and its lock (libc_musl.go, modernc.org/libc v1.80.1); a libc
// without them fails the build here, not at run time.

//go:linkname libcAllocator modernc.org/libc.allocator
var libcAllocator memory.Allocator

//go:linkname libcAllocatorMu modernc.org/libc.allocatorMu
var libcAllocatorMu sync.Mutex

// trimSQLiteMemory hands the memory SQLite has freed back to the system.
// libcTrims: trimSQLiteMemory hands memory back here.
const libcTrims = true

func trimSQLiteMemory() {
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	_ = libcAllocator.Trim()
}
