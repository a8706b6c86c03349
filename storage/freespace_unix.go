//go:build unix

package storage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// FreeBytes is the space left to this user on the file system that holds
// dir.
func FreeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
