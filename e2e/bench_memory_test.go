package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// Memory of a big reply: a reply of N bytes, as text or as a write_file
// call's content argument, in 16-byte deltas (as the other benches stream)
// or in 64 KiB pieces, streamed from the scripted model into a fresh
// bin/parley serve, read by an API client (POST /api/agents/:id/stream)
// and, for the page cases, also by one open chat page. The server's
// resident memory is sampled from /proc: the baseline before the send, the
// peak (VmHWM) while the reply streams (streamed: when the API stream has
// ended, the run and its final write done; peak: after the client has
// also read the stored reply back), and what is left a while after the
// run ended. The bound is baseline + 4×N at the peak; `make bench` prints
// the figures, and asserts nothing. `make test` runs a short pass (256 KiB,
// API only) that checks the reply arrives whole.

var (
	memRuns  = flag.Int("mem-runs", 1, "runs per case of TestBenchReplyMemory (3 take about 15 minutes, past make bench's timeout with the other benches)")
	memCases = flag.String("mem-cases", "", "a regular expression: only the cases of TestBenchReplyMemory whose name it matches")
)

// settleAfter is how long after a run ends its memory is read again: Go
// returns freed memory to the system in the background, a few MiB at a
// time, and collects only every two minutes on its own; Parley collects
// and returns it two seconds after a run (app/memory.go).
const settleAfter = 10 * time.Second

type memCase struct {
	name  string
	args  bool // the bytes are a write_file call's content argument
	piece int  // bytes per delta
	page  bool // a chat page is open on the thread
}

type memRun struct {
	baseline, peak, after float64 // MiB
	// streamed is the peak when the API stream ended ([DONE]): the run,
	// its store writes and its final write, before the client reads the
	// stored reply back (GET messages), which peak includes.
	streamed float64
}

func TestBenchReplyMemory(t *testing.T) {
	size, runs := 256<<10, 1
	cases := []memCase{{"text_16b", false, 16, false}, {"write_file_16b", true, 16, false}}
	if *benchFlag {
		size, runs = 10<<20, *memRuns
		cases = []memCase{
			{"text_16b", false, 16, false},
			{"text_64k", false, 64 << 10, false},
			{"write_file_16b", true, 16, false},
			{"write_file_64k", true, 64 << 10, false},
			{"text_16b_page", false, 16, true},
			{"write_file_16b_page", true, 16, true},
		}
	}
	only, err := regexp.Compile(*memCases)
	if err != nil {
		t.Fatalf("-mem-cases: %v", err)
	}
	for _, c := range cases {
		if !only.MatchString(c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var got []memRun
			for range runs {
				got = append(got, replyMemory(t, c, size))
			}
			if *benchFlag {
				printMemory(fmt.Sprintf("reply_%dmib_%s", size>>20, c.name), float64(size)/(1<<20), got)
			}
		})
	}
}

// printMemory prints the figures of a case's runs: the median and the
// worst of each, and the peak and what is left above the baseline as
// multiples of the reply's size (n MiB).
func printMemory(name string, n float64, got []memRun) {
	for _, fig := range []struct {
		what string
		of   func(memRun) float64
	}{
		{"rss_baseline", func(r memRun) float64 { return r.baseline }},
		{"rss_peak", func(r memRun) float64 { return r.peak }},
		{"rss_peak_streamed", func(r memRun) float64 { return r.streamed }},
		{"rss_after", func(r memRun) float64 { return r.after }},
	} {
		xs := make([]float64, len(got))
		for i, r := range got {
			xs[i] = fig.of(r)
		}
		fmt.Printf("BENCH %s_%s_median %.1f MiB\n", name, fig.what, percentile(xs, 50))
		fmt.Printf("BENCH %s_%s_worst %.1f MiB\n", name, fig.what, slices.Max(xs))
	}
	peaks, streamed, afters := make([]float64, len(got)), make([]float64, len(got)), make([]float64, len(got))
	for i, r := range got {
		peaks[i] = (r.peak - r.baseline) / n
		streamed[i] = (r.streamed - r.baseline) / n
		afters[i] = (r.after - r.baseline) / n
	}
	fmt.Printf("BENCH %s_peak_over_baseline_median %.2f xN\n", name, percentile(peaks, 50))
	fmt.Printf("BENCH %s_peak_over_baseline_worst %.2f xN\n", name, slices.Max(peaks))
	fmt.Printf("BENCH %s_streamed_peak_over_baseline_median %.2f xN\n", name, percentile(streamed, 50))
	fmt.Printf("BENCH %s_streamed_peak_over_baseline_worst %.2f xN\n", name, slices.Max(streamed))
	fmt.Printf("BENCH %s_after_over_baseline_median %.2f xN\n", name, percentile(afters, 50))
	fmt.Printf("BENCH %s_after_over_baseline_worst %.2f xN\n", name, slices.Max(afters))
}

// replyMemory streams one reply of size bytes into a fresh server and
// measures its memory.
func replyMemory(t *testing.T, c memCase, size int) memRun {
	t.Helper()
	model := newModel(t)
	dir := t.TempDir()
	// PARLEY_MEMPROFILE, when set, goes on to the server: what it
	// allocated, and where (go tool pprof -sample_index=alloc_space).
	env := []string{"OPENAI_COMPATIBLE_BASE_URL=" + model.URL()}
	if path := os.Getenv("PARLEY_MEMPROFILE"); path != "" {
		env = append(env, "PARLEY_MEMPROFILE="+path)
	}
	cmd, url, _, stop := serveProcess(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--workspace", dir,
		"--model", "openai-compatible/scripted"}, env...)
	s := target{URL: url, Model: model, dir: dir, pid: cmd.Process.Pid, stop: stop}
	defer s.stop()
	id := s.newThread(t)
	s.yolo(t, id)
	var content string
	if c.args {
		content = codeText(size)
		args, _ := json.Marshal(map[string]string{"path": "big.go", "content": content})
		model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "big", Name: "write_file", Args: string(args)}}, ChunkSize: c.piece},
			scripted.Reply{Text: "written"})
	} else {
		content = markdownText(size)
		model.Push(scripted.Reply{Tokens: chunks(content, c.piece)})
	}
	var closePage func()
	if c.page {
		_, closePage = openThread(t, s, id)
		defer closePage()
	}
	time.Sleep(time.Second) // start-up's garbage is collected, the page's stream settled
	baseline := procMiB(t, s.pid, "VmRSS")
	body, _ := json.Marshal(map[string]any{"messages": "go", "memory": map[string]string{"thread": id, "resource": "default"}})
	// A page open on the thread slows the run down to its pace: the
	// stream may outlast the default client's minute.
	client := &http.Client{Transport: http.DefaultClient.Transport, Timeout: 10 * time.Minute}
	resp, err := client.Post(s.URL+"/api/agents/parley/stream", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	streamed, done := readStream(t, resp)
	if !done {
		t.Fatalf("the stream ended without [DONE]")
	}
	var streamedPeak float64
	if *benchFlag {
		streamedPeak = procMiB(t, s.pid, "VmHWM")
	}
	if !c.args && streamed != content {
		t.Fatalf("the API client received %d bytes of text, want %d", len(streamed), len(content))
	}
	if c.args {
		got, err := os.ReadFile(filepath.Join(dir, "big.go"))
		if err != nil || string(got) != content {
			t.Fatalf("the file was not written whole: %d bytes, %v", len(got), err)
		}
	}
	stored := storedReply(t, s, id)
	if !c.args && stored != content {
		t.Fatalf("the stored reply has %d bytes, want %d", len(stored), len(content))
	}
	if !*benchFlag {
		return memRun{}
	}
	time.Sleep(settleAfter)
	// VmHWM is the highest VmRSS the process has had: the peak of the
	// stream, of the model's next call and of the page's catching up.
	return memRun{baseline: baseline, peak: procMiB(t, s.pid, "VmHWM"), streamed: streamedPeak, after: procMiB(t, s.pid, "VmRSS")}
}

// readStream reads a Mastra stream to its end and returns the text of its
// text-delta chunks, and whether it ended with [DONE].
func readStream(t *testing.T, resp *http.Response) (string, bool) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %s", resp.Status)
	}
	var text strings.Builder
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return text.String(), true
		}
		var c struct {
			Type    string `json:"type"`
			Payload struct {
				Text string `json:"text"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %.200q: %v", data, err)
		}
		if c.Type == "text-delta" {
			text.WriteString(c.Payload.Text)
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatalf("read the stream: %v", err)
	}
	return text.String(), false
}

// storedReply is the text of the thread's last message, as the messages
// API gives it.
func storedReply(t *testing.T, s target, id string) string {
	t.Helper()
	resp, err := http.Get(s.URL + "/api/memory/threads/" + id + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Content string `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Messages) == 0 {
		t.Fatalf("messages: %v (%d)", err, len(out.Messages))
	}
	return out.Messages[len(out.Messages)-1].Content.Content
}

// procMiB is a field of a process's /proc status (VmRSS, VmHWM), in MiB.
func procMiB(t *testing.T, pid int, field string) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("%s %q: %v", field, v, err)
			}
			return float64(kb) / 1024
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}
