package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// Token-to-screen: the delay from the model server writing a token to that
// token being in the page's DOM, through the real server, the runtime, the
// Datastar stream and headless Chromium. `make bench` runs the full
// measurement against bin/parley and the floor, each its own process
// (bench_proc_test.go), and prints BENCH lines; `make test` runs a short
// pass, on a Parley in this process, that checks every token reaches the
// screen in order (no timing asserted: these machines are noisy).

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

// clockSkew is how far the page's clock (performance.timeOrigin +
// performance.now(), which Chromium may set milliseconds off the system
// clock) runs ahead of this process's, in ms: from the round trip with the
// least delay of several, so it is off by at most half that delay.
func clockSkew(pg *rod.Page) float64 {
	best, skew := math.Inf(1), 0.0
	for range 9 {
		before := float64(time.Now().UnixNano()) / 1e6
		page := pg.MustEval(`() => performance.timeOrigin + performance.now()`).Num()
		after := float64(time.Now().UnixNano()) / 1e6
		if after-before < best {
			best, skew = after-before, page-(before+after)/2
		}
	}
	return skew
}

type tokenRun struct {
	delays []float64     // ms per token
	endLag float64       // ms from the last write to the last token on screen
	cpu    time.Duration // the server's CPU from the send to the run's end
}

// streamTokens streams n tokens at rate tokens/s into a new thread's open
// page and measures each token's way to the DOM.
func streamTokens(t testing.TB, s target, rate, n int) tokenRun {
	t.Helper()
	return streamTokensInto(t, s, s.newThread(t), rate, n)
}

// streamTokensInto is streamTokens into the thread id.
func streamTokensInto(t testing.TB, s target, id string, rate, n int) tokenRun {
	t.Helper()
	pg, closePage := openThread(t, s, id)
	defer closePage()
	pg.MustEval(observeTokens)
	skew := clockSkew(pg)

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
	s.Model.Push(scripted.Reply{Tokens: tokens, ChunkSize: chunk, Delay: delay,
		OnChunk: func(i int, _ string, at time.Time) {
			ms := float64(at.UnixNano()) / 1e6
			mu.Lock()
			for j := i * chunk; j < min(n, (i+1)*chunk); j++ {
				written[j] = ms
			}
			mu.Unlock()
		}})
	cpuStart := s.cpu(t)
	s.say(t, id, "count")
	streaming := time.Duration(n) * time.Second / time.Duration(rate)
	waitJSFor(t, pg, streaming+waitTimeout, `(n) => window.__seen.length >= n`, n)
	waitJS(t, pg, runEnded)
	cpuEnd := s.cpu(t)
	seen := pg.MustEval(`() => window.__seen`).Arr()
	if len(seen) != n {
		t.Fatalf("the page saw %d tokens, want %d", len(seen), n)
	}
	mu.Lock()
	defer mu.Unlock()
	run := tokenRun{delays: make([]float64, n), cpu: cpuEnd - cpuStart}
	for i, v := range seen {
		run.delays[i] = v.Num() - skew - written[i]
	}
	run.endLag = seen[n-1].Num() - skew - written[n-1]
	return run
}

func percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// benchRuns is how many times each rate is streamed: a rate passes when
// all of them do, so one lucky run does not make the figure.
const benchRuns = 5

// benchRates are the rates whose end lag is measured; each run streams a
// full second at its rate (20,000 tokens at the highest).
var benchRates = []int{1000, 2000, 5000, 10000, 20000}

// endLagLimit is how soon after the stream ends its complete reply must be
// on screen for a run to pass.
const endLagLimit = 100 // ms

// PARLEY_TTS_RATES=50 runs only the 50 tok/s part (any other list: only
// those rates of the end-lag part), for measuring while working on it.
func TestBenchTokenToScreen(t *testing.T) {
	if !*benchFlag {
		// The short pass: every token of a fast stream reaches the screen.
		streamTokens(t, startParley(t).target(), 500, 300)
		return
	}
	// Parley and the floor take the same streams from the same model
	// server, into the same browser, one after the other.
	model := newModel(t)
	parley := startParleyProcess(t, t.TempDir(), model)
	floor := startFloor(t, model)
	slow, rates := true, benchRates
	if only := os.Getenv("PARLEY_TTS_RATES"); only != "" {
		slow, rates = false, nil
		for _, r := range strings.Split(only, ",") {
			n, err := strconv.Atoi(r)
			if err != nil {
				t.Fatalf("PARLEY_TTS_RATES: %v", err)
			}
			if n == 50 {
				slow = true
			} else {
				rates = append(rates, n)
			}
		}
	}
	var p99 [2]float64
	for k, s := range []target{parley, floor} {
		name := func(n string) string {
			if s.floor {
				return "floor_" + n
			}
			return n
		}
		if slow {
			var p50s, p99s []float64
			for range benchRuns {
				r := streamTokens(t, s, 50, 250) // 5 s at 50 tok/s
				if os.Getenv("PARLEY_TTS_WORST") != "" {
					fmt.Println(name("worst tokens at 50 tok/s"), worstTokens(r.delays, 6))
				}
				p50s = append(p50s, percentile(r.delays, 50))
				p99s = append(p99s, percentile(r.delays, 99))
			}
			printStats(name("token_to_screen_p50_at_50tps"), p50s, "%.2f ms")
			printStats(name("token_to_screen_p99_at_50tps"), p99s, "%.2f ms")
			p99[k] = percentile(p99s, 50)
		}
		if len(rates) == 0 {
			continue
		}

		best, passing := 0, true
		for _, rate := range rates {
			var lags, ends99, cpus []float64
			for range benchRuns {
				r := streamTokens(t, s, rate, rate) // a full second
				lags = append(lags, r.endLag)
				ends99 = append(ends99, percentile(r.delays, 99))
				cpus = append(cpus, ms(r.cpu))
			}
			printStats(name(fmt.Sprintf("end_lag_at_%dtps", rate)), lags, "%.1f ms")
			printStats(name(fmt.Sprintf("token_to_screen_p99_at_%dtps", rate)), ends99, "%.1f ms")
			printStats(name(fmt.Sprintf("server_cpu_at_%dtps", rate)), cpus, "%.0f ms")
			passing = passing && slices.Max(lags) <= endLagLimit
			if passing {
				best = rate
			}
		}
		fmt.Printf("BENCH %s %d tok/s (all %d runs within %d ms, at every lower rate too)\n",
			name("max_tokps_complete_within_100ms"), best, benchRuns, endLagLimit)
	}
	if slow {
		fmt.Printf("BENCH token_to_screen_p99_at_50tps_vs_floor %.2f x (medians)\n", p99[0]/p99[1])
	}
}

// worstTokens is "index:delay" of the n slowest tokens, slowest first
// (PARLEY_TTS_WORST=1 prints them for each run at 50 tok/s).
func worstTokens(delays []float64, n int) string {
	idx := make([]int, len(delays))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(math.Copysign(1, delays[b]-delays[a])) })
	var out []string
	for _, i := range idx[:min(n, len(idx))] {
		out = append(out, fmt.Sprintf("%d:%.1f", i, delays[i]))
	}
	return strings.Join(out, " ")
}

// printStats prints the median and the worst (the largest) of runs as
// BENCH lines; format is the value's and its unit's.
func printStats(name string, runs []float64, format string) {
	fmt.Printf("BENCH %s_median "+format+"\n", name, percentile(runs, 50))
	fmt.Printf("BENCH %s_worst "+format+"\n", name, slices.Max(runs))
}

// longTasks records the page's main-thread tasks over 50 ms from the
// moment streamFrom is called: those of the stream, not of loading the page.
const longTasks = `() => {
	window.__long = [];
	window.__longAt = [];
	window.__from = Infinity;
	new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.startTime >= window.__from) {
		window.__long.push(e.duration);
		window.__longAt.push('at ' + Math.round(e.startTime - window.__from) + ' ms, ' + Math.round(e.duration) + ' ms');
	} })
		.observe({type: 'longtask', buffered: true});
}`

// clickTiming records, like longTasks, how long each click on the page
// took to be answered: Event Timing's duration, from the input to the
// first paint after its handlers ran, which counts the wait for a busy main
// thread (rounded to 8 ms; clicks answered in under 16 ms leave no entry).
// __clicked counts the clicks that reached the page at all.
const clickTiming = `() => {
	window.__clicks = [];
	window.__clicked = 0;
	document.addEventListener('click', () => window.__clicked++, true);
	new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.name === 'click' && e.startTime >= window.__from) window.__clicks.push(e.duration) })
		.observe({type: 'event', durationThreshold: 16, buffered: true});
}`

// clickEvery clicks the composer's text box, as a user about to write the
// next message does, at once and then every d until stop is closed; it then
// sends on done how many clicks it made. Clicks go in as real input (CDP),
// at a fixed point, so that nothing scrolls.
func clickEvery(pg *rod.Page, d time.Duration, stop <-chan struct{}, done chan<- int) {
	n := 0
	defer func() { done <- n }()
	draft, err := pg.Timeout(10 * time.Second).Element("#draft")
	if err != nil {
		return
	}
	shape, err := draft.Shape()
	if err != nil || shape.Box() == nil {
		return
	}
	box := shape.Box()
	at := proto.Point{X: box.X + box.Width/2, Y: box.Y + box.Height/2}
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		if pg.Mouse.MoveTo(at) != nil || pg.Mouse.Click(proto.InputMouseButtonLeft, 1) != nil {
			return
		}
		n++
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// streamFrom starts longTasks' count.
const streamFrom = `() => { window.__from = performance.now() }`

// longFrames records, like longTasks, the page's animation frames over
// 50 ms, when (from streamFrom) and what each spent its time on: its
// scripts (the longest named), style and layout, and the rest.
// PARLEY_LARGE_FRAMES=1 prints them for each run of
// TestBenchLargeWritePreview.
const longFrames = `() => {
	window.__frames = [];
	new PerformanceObserver(list => { for (const e of list.getEntries()) {
		if (e.startTime < window.__from) continue;
		const end = e.startTime + e.duration;
		let scripts = 0, top = null;
		for (const s of e.scripts) { scripts += s.duration; if (!top || s.duration > top.duration) top = s }
		const layout = e.styleAndLayoutStart ? end - e.styleAndLayoutStart : 0;
		window.__frames.push('at ' + Math.round(e.startTime - window.__from) + ' ms, ' + Math.round(e.duration) + ' ms: scripts ' + Math.round(scripts) +
			(top ? ' (' + top.invokerType + ' ' + top.invoker + ' ' + Math.round(top.duration) + ')' : '') +
			', style+layout ' + Math.round(layout) + ', rest ' + Math.round(e.duration - scripts - layout));
	} }).observe({type: 'long-animation-frame', buffered: true});
}`

// writeWait bounds a large write's stream: 1 MiB cost Parley over a
// minute of CPU before its streaming was made linear.
const writeWait = 5 * time.Minute

// largeRun is what streamWrite measured of one stream: the server's CPU
// time, the page's longest main-thread task, and its slowest answer to a
// click (0 when each took under 16 ms) with the number of clicks (none on
// the floor).
type largeRun struct {
	cpu       time.Duration
	longest   float64
	blocking  float64 // total blocking time: the long tasks' time past 50 ms, summed
	longTasks int     // tasks over 50 ms
	click     float64
	clicks    int
}

// print writes the run's BENCH lines, named after its case.
func (r largeRun) print(name string) {
	fmt.Printf("BENCH %s_1mib_16b_server_cpu %.0f ms\n", name, ms(r.cpu))
	fmt.Printf("BENCH %s_1mib_longest_main_thread_task %.0f ms\n", name, r.longest)
	fmt.Printf("BENCH %s_1mib_blocking_time %.0f ms (%d tasks over 50 ms)\n", name, r.blocking, r.longTasks)
	if r.clicks > 0 {
		fmt.Printf("BENCH %s_1mib_slowest_click_answer %.0f ms (of %d clicks)\n", name, r.click, r.clicks)
	}
}

// streamWrite streams a write_file of size bytes of code in 16-byte
// argument deltas (or the same bytes as reply text) into an open page,
// clicking the page's composer every quarter second meanwhile (not on the
// floor, whose page is busy for a minute), and returns what it measured.
func streamWrite(t *testing.T, s target, content string, asText bool) (run largeRun) {
	t.Helper()
	id := s.newThread(t)
	s.yolo(t, id)
	pg, closePage := openThread(t, s, id)
	defer closePage()
	pg.MustEval(longTasks)
	pg.MustEval(clickTiming)
	frames := os.Getenv("PARLEY_LARGE_FRAMES") != ""
	if frames {
		pg.MustEval(longFrames)
	}
	if asText {
		s.Model.Push(scripted.Reply{Text: content, Tokens: chunks(content, 16)})
	} else {
		args, _ := json.Marshal(map[string]string{"path": "big.go", "content": content})
		s.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "big", Name: "write_file", Args: string(args)}}, ChunkSize: 16})
		if !s.floor { // the floor relays one answer and calls no tool
			s.Model.Push(scripted.Reply{Text: "written"})
		}
	}
	start := s.cpu(t)
	pg.MustEval(streamFrom)
	s.say(t, id, "go")
	stop, clicks := make(chan struct{}), make(chan int, 1)
	if !s.floor {
		go clickEvery(pg, 250*time.Millisecond, stop, clicks)
	} else {
		clicks <- 0
	}
	waitJSFor(t, pg, writeWait, runEnded)
	run.cpu = s.cpu(t) - start
	close(stop)
	clicked := <-clicks
	run.clicks = clicked
	if clicked == 0 && !s.floor {
		t.Fatal("the composer could not be clicked during the stream")
	}
	// Every click reached the page (the answers' timing is only printed:
	// these machines are noisy).
	waitJS(t, pg, `(n) => window.__clicked === n`, clicked)
	for _, v := range pg.MustEval(`() => window.__clicks`).Arr() {
		run.click = max(run.click, v.Num())
	}
	// The page followed the stream to its end: a page that stops following
	// draws nothing of what comes after, and its frames cost nothing.
	if !s.floor {
		if d := pg.MustEval(fromBottom).Num(); d >= 80 {
			t.Fatalf("the view is %.0f px above the end of the stream it was following", d)
		}
	}
	if !asText && !s.floor {
		card := `document.querySelector('#messages [data-tool-call-id]')`
		if got := pg.MustEval(`() => ` + card + `?.dataset.state`).String(); got != "done" {
			t.Fatalf("card state %q", got)
		}
		if got := pg.MustEval(`() => ` + card + `.querySelector('.tool-state').textContent`).String(); got != "done" {
			t.Fatalf("card state text %q", got)
		}
		if _, err := os.Stat(filepath.Join(s.dir, "big.go")); err != nil {
			t.Fatalf("the file was not written: %v (%d lines)", err, strings.Count(content, "\n")+1)
		}
	}
	for _, v := range pg.MustEval(`() => window.__long`).Arr() {
		run.longest = max(run.longest, v.Num())
		run.blocking += v.Num() - 50
		run.longTasks++
	}
	if frames {
		for _, f := range pg.MustEval(`() => window.__frames`).Arr() {
			fmt.Println("long frame", f.Str())
		}
		for _, f := range pg.MustEval(`() => window.__longAt`).Arr() {
			fmt.Println("long task", f.Str())
		}
	}
	return run
}

// codeText is size bytes of Go-like lines. As a reply's text, each line's
// leading tab makes the whole of it one indented code block.
func codeText(size int) string {
	var code strings.Builder
	for i := 0; code.Len() < size; i++ {
		fmt.Fprintf(&code, "\tx%06d := compute(%d) // line %d\n", i, i, i)
	}
	return code.String()[:size]
}

// markdownText is size bytes of a long reply as models write them: a
// heading, paragraphs, a list, a 20-line Go code block and a table,
// over and over.
func markdownText(size int) string { return markdownTextFrom(size, 0) }

// markdownTextFrom is markdownText with its parts numbered from first, so
// that runs of a bench each stream a reply of their own: the server
// remembers the highlighting of finished code blocks, and a second run of
// the same text would measure that memory, not the work.
func markdownTextFrom(size, first int) string {
	var b strings.Builder
	for i := first; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nThis part explains step %d of the change in a few plain sentences, the way a model writes them: "+
			"what it read, what it found, and what it will do next, with `inline code` and **a little emphasis**.\n\n", i, i)
		fmt.Fprintf(&b, "- read `file%d.go`\n- change the handler\n- run the tests\n\n```go\n", i)
		for j := range 20 {
			fmt.Fprintf(&b, "\tv%d := compute(%d, %d) // step %d\n", j, i, j, j)
		}
		fmt.Fprintf(&b, "```\n\n| file | lines | status |\n|---|---:|---|\n| a%d.go | %d | done |\n| b%d.go | %d | open |\n\n", i, i*3, i, i*7)
	}
	return b.String()[:size]
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
// costs the server about what streaming the same bytes as text does; the
// floor is the same bytes relayed as bare Datastar patches.
//
// PARLEY_LARGE_CASES (e.g. text or text,floor) runs only the cases it names
// of write_file, text, code and floor, each PARLEY_LARGE_RUNS times (1 by
// default), for measuring one of them while working on it.
func TestBenchLargeWritePreview(t *testing.T) {
	if !*benchFlag {
		streamWrite(t, startParley(t).target(), codeText(64<<10), false)
		return
	}
	model := newModel(t)
	parley := startParleyProcess(t, t.TempDir(), model)
	floor := startFloor(t, model)
	if cases := os.Getenv("PARLEY_LARGE_CASES"); cases != "" {
		runs, _ := strconv.Atoi(os.Getenv("PARLEY_LARGE_RUNS"))
		for n := range max(1, runs) {
			text := markdownTextFrom(1<<20, n*1000)
			for _, c := range strings.Split(cases, ",") {
				var run largeRun
				switch c {
				case "write_file":
					run = streamWrite(t, parley, codeText(1<<20), false)
				case "text":
					run = streamWrite(t, parley, text, true)
				case "code":
					c = "code_block"
					run = streamWrite(t, parley, codeText(1<<20), true)
				case "floor":
					run = streamWrite(t, floor, text, true)
				default:
					t.Fatalf("PARLEY_LARGE_CASES: no case %q", c)
				}
				run.print(c)
			}
		}
		return
	}
	tool := streamWrite(t, parley, codeText(1<<20), false)
	text := streamWrite(t, parley, markdownText(1<<20), true)
	code := streamWrite(t, parley, codeText(1<<20), true)
	bare := streamWrite(t, floor, markdownText(1<<20), true)
	tool.print("write_file")
	text.print("text")
	code.print("code_block")
	bare.print("floor")
	fmt.Printf("BENCH write_file_vs_text_cpu_ratio %.2f x\n", float64(tool.cpu)/float64(text.cpu))
}
