package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
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
	delays []float64 // ms per token
	endLag float64   // ms from the last write to the last token on screen
}

// streamTokens streams n tokens at rate tokens/s into an open thread page
// and measures each token's way to the DOM.
func streamTokens(t testing.TB, p *parley, rate, n int) tokenRun {
	t.Helper()
	id := p.newThread()
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
	p.Model.Push(scripted.Reply{Tokens: tokens, ChunkSize: chunk, Delay: delay,
		OnChunk: func(i int, _ string, at time.Time) {
			ms := float64(at.UnixNano()) / 1e6
			mu.Lock()
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
	waitJS(t, pg, `(n) => window.__seen.length >= n`, n)
	seen := pg.MustEval(`() => window.__seen`).Arr()
	if len(seen) != n {
		t.Fatalf("the page saw %d tokens, want %d", len(seen), n)
	}
	mu.Lock()
	defer mu.Unlock()
	run := tokenRun{delays: make([]float64, n)}
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
