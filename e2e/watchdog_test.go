package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// A test that hangs (a wait without a deadline, a cleanup that never
// returns) would otherwise run into `go test -timeout`, whose goroutine dump
// is long enough to push the name of the stuck test out of any log tail. The
// watchdog ends the run sooner and says, last, which test hung and where.

var watched sync.Map // test name → struct{}

// watch arms the watchdog for t once: if t (its cleanup included) is still
// running after testDeadline plus a minute, the run ends with a report.
// Call it before registering other cleanups, so that its own runs last.
func watch(t testing.TB) {
	if _, dup := watched.LoadOrStore(t.Name(), struct{}{}); dup {
		return
	}
	limit := testDeadline() + time.Minute
	timer := time.AfterFunc(limit, func() { reportHang(t.Name(), limit) })
	t.Cleanup(func() {
		timer.Stop()
		watched.Delete(t.Name())
	})
}

// watchSuite ends the run two minutes before `go test -timeout` would, with
// the same report as a hung test's: when every test fails slowly (a browser
// that stopped answering), the log's tail still says where things stand.
func watchSuite() {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return
	}
	limit, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || limit <= 3*time.Minute {
		return
	}
	limit -= 2 * time.Minute
	time.AfterFunc(limit, func() {
		var running []string
		watched.Range(func(k, _ any) bool { running = append(running, k.(string)); return true })
		reportHang("the e2e suite (running: "+strings.Join(running, ", ")+")", limit)
	})
}

// reportHang writes every goroutine to an artifact, prints the ones in
// Parley's code (frames trimmed to Parley's), and exits.
func reportHang(name string, after time.Duration) {
	buf := make([]byte, 64<<20)
	all := buf[:runtime.Stack(buf, true)]
	file := artifact("hang-" + strings.Map(func(r rune) rune {
		if r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return '_'
	}, name) + ".txt")
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if err := os.WriteFile(file, all, 0o644); err != nil {
		file = "(not written: " + err.Error() + ")"
	}
	// The tests' own goroutines go last, nearest the verdict.
	var out, tests strings.Builder
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		frames := parleyFrames(string(g))
		switch {
		case frames == "" || strings.Contains(frames, "parley/e2e.TestMain("):
		case strings.Contains(frames, "parley/e2e.Test"):
			tests.WriteString(frames)
		default:
			out.WriteString(frames)
		}
	}
	out.WriteString(tests.String())
	fmt.Fprintf(os.Stderr, "\n%s\ne2e watchdog: %s was still running after %s: it hangs.\n"+
		"The goroutines above are those in Parley's code; every goroutine is in %s\n", out.String(), name, after, file)
	os.Exit(3)
}

// parleyFrames is a goroutine's header line and its frames in Parley's own
// packages, or "" when it has none.
func parleyFrames(g string) string {
	lines := strings.Split(strings.TrimSpace(g), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "goroutine ") {
		return ""
	}
	var b strings.Builder
	for i := 1; i+1 < len(lines); i += 2 {
		fn, at := lines[i], strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(fn, "parley/") || strings.HasPrefix(fn, "created by parley/") {
			if i := strings.LastIndex(at, " +0x"); i > 0 {
				at = at[:i]
			}
			fmt.Fprintf(&b, "  %s\n      %s\n", fn, at)
		}
	}
	if b.Len() == 0 || strings.Contains(b.String(), "reportHang") {
		return ""
	}
	return lines[0] + "\n" + b.String()
}

// testLine is the innermost line of a test file (not of this package's
// helpers) on the calling goroutine's stack: where a failed browser call
// was made.
func testLine() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		base := filepath.Base(f.File)
		if strings.HasSuffix(base, "_test.go") && base != "main_test.go" && base != "watchdog_test.go" {
			return fmt.Sprintf("%s:%d", base, f.Line)
		}
		if !more {
			return "(no test line on the stack)"
		}
	}
}
