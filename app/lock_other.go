//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package app

import (
	"fmt"
	"os"
	"runtime"
)

// tryLockFile has no OS lock to take on this system: Parley refuses to run
// rather than risk two processes on one data folder.
func tryLockFile(*os.File) (bool, error) {
	return false, fmt.Errorf("no file lock on %s: Parley cannot make sure it runs once per data folder here", runtime.GOOS)
}

func unlockFile(*os.File) error { return nil }
