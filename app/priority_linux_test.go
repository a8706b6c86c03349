package app

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// niceOf is the nice value of each thread of the process pid ("self" for
// this one), by thread id, from /proc.
func niceOf(t *testing.T, pid string) map[string]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		t.Fatal(err)
	}
	nice := map[string]int{}
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// Fields after the command's closing parenthesis start at the 3rd
		// (state); nice is the 19th.
		_, rest, _ := strings.Cut(string(stat), ") ")
		fields := strings.Fields(rest)
		if len(fields) < 17 {
			t.Fatalf("thread %s: stat %q", task.Name(), stat)
		}
		n, err := strconv.Atoi(fields[16])
		if err != nil {
			t.Fatalf("thread %s: nice %q", task.Name(), fields[16])
		}
		nice[task.Name()] = n
	}
	return nice
}

// lowerPriority reaches every thread, those running before it and those
// started after. It runs in a child process of its own: a process cannot
// take back a lower priority without privileges.
func TestLowerPriorityReachesEveryThread(t *testing.T) {
	if os.Getenv("PARLEY_TEST_LOWER_PRIORITY") == "1" {
		hold := make(chan struct{})
		defer close(hold)
		// Threads that exist before: goroutines locked to threads of their
		// own, waiting.
		for range 4 {
			go func() { runtime.LockOSThread(); <-hold }()
		}
		for len(niceOf(t, "self")) < 5 {
			runtime.Gosched()
		}
		if err := lowerPriority(serveNice); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			go func() { runtime.LockOSThread(); <-hold }()
		}
		for len(niceOf(t, "self")) < 9 {
			runtime.Gosched()
		}
		for tid, n := range niceOf(t, "self") {
			if n != serveNice {
				t.Errorf("thread %s: nice %d, want %d", tid, n, serveNice)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLowerPriorityReachesEveryThread$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PARLEY_TEST_LOWER_PRIORITY=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
