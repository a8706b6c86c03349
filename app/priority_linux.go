package app

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// lowerPriority gives every thread of the process the nice value n. Linux
// keeps one per thread, not per process, and a new thread takes that of
// the thread that starts it: the threads are set until a pass over them
// finds none it has not set, after which any new one starts from a set
// one.
func lowerPriority(n int) error {
	set := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		found := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || set[tid] {
				continue
			}
			found = true
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err // ESRCH: the thread ended meanwhile
			}
			set[tid] = true
		}
		if !found {
			return nil
		}
	}
}
