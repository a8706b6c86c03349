//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package app

import "syscall"

// lowerPriority gives the process the nice value n (one per process here).
func lowerPriority(n int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, 0, n)
}
