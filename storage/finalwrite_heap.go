//go:build !(linux || darwin)

package storage

// mapBytesOffHeap: mapBytes makes its slices outside Go's heap.
const mapBytesOffHeap = false

// mapBytes is an empty slice of capacity size; where anonymous mappings
// are not used, it is in Go's heap and freed by its collector.
func mapBytes(size int) ([]byte, func()) {
	return make([]byte, 0, size), func() {}
}
