package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Long threads: a thread of 10,000 messages opens on its latest page, so
// opening it costs what opening a short one does, and streaming into it is
// as fast as into a new thread. `make bench` measures both, the server's
// resident memory idle and with that thread open in a browser, and how long
// a fresh `parley serve` takes to answer its first request. `make test` runs
// a short pass over the same paths that checks what the page holds.

// openPage GETs a thread page reps times and returns the median time to
// the whole answer (on loopback: the server's time, nearly) and its size.
func openPage(t *testing.T, url string, reps int) (time.Duration, int) {
	t.Helper()
	var times []float64
	size := 0
	for i := range reps + 3 {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		if i >= 3 { // the first answers warm the caches
			times = append(times, float64(time.Since(start)))
		}
		if n := strings.Count(string(body), `<article id="msg-`); n != 50 {
			t.Fatalf("GET %s: %d messages on the page, want the latest 50", url, n)
		}
		size = len(body)
	}
	return time.Duration(percentile(times, 50)), size
}

func TestBenchLongThread(t *testing.T) {
	p := startParley(t)
	n, reps, rate, tokens := 600, 5, 500, 200
	if *benchFlag {
		n, reps, rate, tokens = 10000, 30, 50, 250
	}
	seedStart := time.Now()
	long, _ := seedThread(t, p, "Ten thousand messages", n, nil)
	seeded := time.Since(seedStart)
	small, _ := seedThread(t, p, "A hundred messages", 100, nil)

	// The bench streams into bin/parley on the seeded data, so that the
	// CPU it reports is the server's alone.
	s := p.target()
	if *benchFlag {
		p.stop()
		s = startParleyProcess(t, p.dir, p.Model)
	}
	longOpen, longBytes := openPage(t, s.URL+"/t/"+long, reps)
	smallOpen, smallBytes := openPage(t, s.URL+"/t/"+small, reps)

	intoLong := streamTokensInto(t, s, long, rate, tokens)
	intoNew := streamTokens(t, s, rate, tokens)
	if !*benchFlag {
		return
	}
	fmt.Printf("BENCH long_thread_seed_%dk %.1f s\n", n/1000, seeded.Seconds())
	fmt.Printf("BENCH thread_open_10k_messages %.1f ms\n", ms(longOpen))
	fmt.Printf("BENCH thread_open_100_messages %.1f ms\n", ms(smallOpen))
	fmt.Printf("BENCH thread_page_bytes_10k_messages %d bytes\n", longBytes)
	fmt.Printf("BENCH thread_page_bytes_100_messages %d bytes\n", smallBytes)
	fmt.Printf("BENCH token_to_screen_p50_at_50tps_10k_thread %.2f ms\n", percentile(intoLong.delays, 50))
	fmt.Printf("BENCH token_to_screen_p99_at_50tps_10k_thread %.2f ms\n", percentile(intoLong.delays, 99))
	fmt.Printf("BENCH token_to_screen_p50_at_50tps_new_thread %.2f ms\n", percentile(intoNew.delays, 50))
	fmt.Printf("BENCH token_to_screen_p99_at_50tps_new_thread %.2f ms\n", percentile(intoNew.delays, 99))
	// The server's own work while tokens stream: the same in both, since
	// a frame renders only the message being written.
	fastLong := streamTokensInto(t, s, long, 5000, 5000)
	fastNew := streamTokens(t, s, 5000, 5000)
	fmt.Printf("BENCH end_lag_at_5000tps_10k_thread %.1f ms\n", fastLong.endLag)
	fmt.Printf("BENCH end_lag_at_5000tps_new_thread %.1f ms\n", fastNew.endLag)
	fmt.Printf("BENCH stream_5000_tokens_server_cpu_10k_thread %.0f ms\n", ms(fastLong.cpu))
	fmt.Printf("BENCH stream_5000_tokens_server_cpu_new_thread %.0f ms\n", ms(fastNew.cpu))

	// A fresh process on the same data: start-up and memory.
	s.stop()
	startup, idle, open := measureProcess(t, p.dir, long)
	fmt.Printf("BENCH process_start_to_first_response %.0f ms\n", ms(startup))
	fmt.Printf("BENCH server_rss_idle %.1f MiB\n", idle)
	fmt.Printf("BENCH server_rss_10k_thread_open %.1f MiB\n", open)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// parleyBin is the parley binary `make bench` built (PARLEY_BIN), or one
// built here.
func parleyBin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("PARLEY_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "parley")
	if out, err := exec.Command("go", "build", "-o", bin, "parley").CombinedOutput(); err != nil {
		t.Fatalf("build parley: %v\n%s", err, out)
	}
	return bin
}

// measureProcess starts `parley serve` on dir and returns the time from
// starting the process to its first answered request, and its resident
// memory idle and with the thread open in the browser.
func measureProcess(t *testing.T, dir, threadID string) (startup time.Duration, idleMiB, openMiB float64) {
	t.Helper()
	cmd, url, start, _ := serveProcess(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--workspace", dir, "--demo"})
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	startup = time.Since(start)

	time.Sleep(time.Second)
	idleMiB = rssMiB(t, cmd.Process.Pid)
	pg := incognito(t).MustPage(signedIn(url + "/t/" + threadID))
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null && document.querySelectorAll('#messages > .msg').length === 50`)
	time.Sleep(time.Second)
	openMiB = rssMiB(t, cmd.Process.Pid)
	return startup, idleMiB, openMiB
}

// rssMiB is a process's resident memory, from /proc.
func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
