//go:build !(linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm))

package storage

// trimSQLiteMemory does nothing where libc's allocator is not the one
// trim_linux.go knows.
func trimSQLiteMemory() {}

// libcTrims: trimSQLiteMemory hands memory back here.
const libcTrims = false
