//go:build windows

package app

import "golang.org/x/sys/windows"

// lowerPriority puts the process in Windows' below-normal priority class,
// its counterpart of a small positive nice value.
func lowerPriority(int) error {
	return windows.SetPriorityClass(windows.CurrentProcess(), windows.BELOW_NORMAL_PRIORITY_CLASS)
}
