package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// Token-to-screen: the delay from the model server writing a token to that
// token being in the page's DOM, through the real server, the runtime, the
// Datastar stream and headless Chromium. `make bench` runs the full
// measurement and prints BENCH lines; `make test` runs a short pass that
// checks every token reaches the screen in order (no timing asserted: these
// machines are noisy).

// observeTokens records, in the page, when each token index first shows.
const observeTokens = `() => {
	window.__seen = [];
	const re = /t(\d{5}) $/;
	new MutationObserver(() => {
		const els = document.querySelectorAll('#messages .msg-assistant .msg-body');
		const el = els[els.length - 1];
		if (!el) return;
		const text = el.textContent + ' ';
		const m = text.slice(-32).match(/t(\d{5})\s*$/);
		if (!m) return;
		const now = performance.timeOrigin + performance.now();
		for (let i = window.__seen.length; i <= Number(m[1]); i++) window.__seen[i] = now;
	}).observe(document.getElementById('messages'), {subtree: true, childList: true, characterData: true});
}`

type tokenRun struct {
	delays []float64     // ms per token
	endLag float64       // ms from the last write to the last token on screen
	cpu    time.Duration // this process's CPU from the first token written to the run's end
}

// streamTokens streams n tokens at rate tokens/s into a new thread's open
// page and measures each token's way to the DOM.
func streamTokens(t testing.TB, p *parley, rate, n int) tokenRun {
	t.Helper()
	return streamTokensInto(t, p, p.newThread(), rate, n)
}

// streamTokensInto is streamTokens into the thread id.
func streamTokensInto(t testing.TB, p *parley, id string, rate, n int) tokenRun {
	t.Helper()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	time.Sleep(150 * time.Millisecond) // the stream is open and synced
	pg.MustEval(observeTokens)

	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%05d ", i)
	}
	// Sleeps under ~1 ms are not reliable: at high rates send several
	// tokens per chunk and keep the rate.
	chunk := max(1, rate/1000)
	delay := time.Duration(float64(time.Second) * float64(chunk) / float64(rate))
	written := make([]float64, n)
	var mu sync.Mutex
	var cpuStart time.Duration
	p.Model.Push(scripted.Reply{Tokens: tokens, ChunkSize: chunk, Delay: delay,
		OnChunk: func(i int, _ string, at time.Time) {
			ms := float64(at.UnixNano()) / 1e6
			mu.Lock()
			if i == 0 {
				cpuStart = cpuTime()
			}
			for j := i * chunk; j < min(n, (i+1)*chunk); j++ {
				written[j] = ms
			}
			mu.Unlock()
		}})
	if _, err := p.In.Runtime.Send(context.Background(), agentcore.SendRequest{ThreadID: id, Text: "count"}); err != nil {
		t.Fatal(err)
	}
	if err := p.In.Runtime.Wait(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	cpuEnd := cpuTime()
	waitJS(t, pg, `(n) => window.__seen.length >= n`, n)
	seen := pg.MustEval(`() => window.__seen`).Arr()
	if len(seen) != n {
		t.Fatalf("the page saw %d tokens, want %d", len(seen), n)
	}
	mu.Lock()
	defer mu.Unlock()
	run := tokenRun{delays: make([]float64, n), cpu: cpuEnd - cpuStart}
	for i, v := range seen {
		run.delays[i] = v.Num() - written[i]
	}
	run.endLag = seen[n-1].Num() - written[n-1]
	return run
}

func percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func TestBenchTokenToScreen(t *testing.T) {
	p := startParley(t)
	if !*benchFlag {
		// The short pass: every token of a fast stream reaches the screen.
		streamTokens(t, p, 500, 300)
		return
	}
	r := streamTokens(t, p, 50, 250) // 5 s at 50 tok/s
	fmt.Printf("BENCH token_to_screen_p50_at_50tps %.2f ms\n", percentile(r.delays, 50))
	fmt.Printf("BENCH token_to_screen_p99_at_50tps %.2f ms\n", percentile(r.delays, 99))

	best := 0
	for _, rate := range []int{1000, 2000, 5000, 10000, 20000} {
		r := streamTokens(t, p, rate, min(rate, 10000)) // ~1 s of streaming
		fmt.Printf("BENCH end_lag_at_%dtps %.1f ms\n", rate, r.endLag)
		fmt.Printf("BENCH token_to_screen_p99_at_%dtps %.1f ms\n", rate, percentile(r.delays, 99))
		if r.endLag <= 100 {
			best = rate
		}
	}
	fmt.Printf("BENCH max_tokps_complete_within_100ms %d tok/s\n", best)
}

// cpuTime is this process's user+system CPU time (the server, the runtime
// and the scripted model all run in it; the browser does not).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// longTasks records the page's main-thread tasks over 50 ms.
const longTasks = `() => {
	window.__long = [];
	new PerformanceObserver(list => { for (const e of list.getEntries()) window.__long.push(e.duration) })
		.observe({type: 'longtask', buffered: true});
}`

// streamWrite streams a write_file of size bytes of code in 16-byte
// argument deltas into an open page, and returns the server's CPU time for
// it and the longest main-thread task the page had.
func streamWrite(t *testing.T, p *parley, size int, asText bool) (cpu time.Duration, longest float64) {
	t.Helper()
	id := p.newThread()
	yolo := true
	if _, err := p.In.Runtime.UpdateThread(context.Background(), id, agentcore.ThreadPatch{Metadata: map[string]any{"yolo": yolo}}); err != nil {
		t.Fatal(err)
	}
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#composer-actions') !== null`)
	time.Sleep(150 * time.Millisecond)
	pg.MustEval(longTasks)
	var code strings.Builder
	for i := 0; code.Len() < size; i++ {
		fmt.Fprintf(&code, "\tx%06d := compute(%d) // line %d\n", i, i, i)
	}
	content := code.String()[:size]
	if asText {
		p.Model.Push(scripted.Reply{Text: content, Tokens: chunks(content, 16)})
	} else {
		args, _ := json.Marshal(map[string]string{"path": "big.go", "content": content})
		p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "big", Name: "write_file", Args: string(args)}}, ChunkSize: 16},
			scripted.Reply{Text: "written"})
	}
	start := cpuTime()
	if _, err := p.In.Runtime.Send(context.Background(), agentcore.SendRequest{ThreadID: id, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	if err := p.In.Runtime.Wait(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	cpu = cpuTime() - start
	if asText {
		waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	} else {
		waitJS(t, pg, `() => document.querySelector('`+p.sel("big")+`')?.dataset.state === 'done'`)
		lines := strings.Count(content, "\n") + 1
		if got := pg.MustEval(`() => document.querySelector('` + p.sel("big") + ` .tool-state').textContent`).String(); got != "done" {
			t.Fatalf("card state %q", got)
		}
		if _, err := os.Stat(filepath.Join(p.dir, "big.go")); err != nil {
			t.Fatalf("the file was not written: %v (%d lines)", err, lines)
		}
	}
	for _, v := range pg.MustEval(`() => window.__long`).Arr() {
		longest = max(longest, v.Num())
	}
	return cpu, longest
}

func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// A large write_file streamed in small deltas keeps the page responsive and
// costs the server about what streaming the same bytes as text does.
func TestBenchLargeWritePreview(t *testing.T) {
	p := startParley(t)
	size := 64 << 10
	if *benchFlag {
		size = 1 << 20
	}
	toolCPU, toolLong := streamWrite(t, p, size, false)
	if !*benchFlag {
		return
	}
	textCPU, textLong := streamWrite(t, p, size, true)
	fmt.Printf("BENCH write_file_1mib_16b_server_cpu %.0f ms\n", float64(toolCPU.Milliseconds()))
	fmt.Printf("BENCH text_1mib_16b_server_cpu %.0f ms\n", float64(textCPU.Milliseconds()))
	fmt.Printf("BENCH write_file_vs_text_cpu_ratio %.2f x\n", float64(toolCPU)/float64(textCPU))
	fmt.Printf("BENCH write_file_1mib_longest_main_thread_task %.0f ms\n", toolLong)
	fmt.Printf("BENCH text_1mib_longest_main_thread_task %.0f ms\n", textLong)
}
