//go:build linux || darwin

package storage

import "syscall"

// mapBytesOffHeap: mapBytes makes its slices outside Go's heap.
const mapBytesOffHeap = true

// mapBytes is an empty slice of capacity size in anonymous memory of its
// own, outside Go's heap, and what unmaps it; in Go's heap when the system
// gives no mapping. Only the pages written become resident.
func mapBytes(size int) ([]byte, func()) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, size), func() {}
	}
	return b[:0], func() { _ = syscall.Munmap(b) }
}
