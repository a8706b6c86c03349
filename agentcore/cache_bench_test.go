package agentcore_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/storage"
)

// With -bench-figures, TestBenchFigures prints what prompt caching saves
// (issue 18's benchmark):
//
//	go test -v -count=1 -run '^TestBenchFigures$' ./agentcore/ -args -bench-figures
var benchFigures = flag.Bool("bench-figures", false, "print BENCH lines for prompt caching over a 20-step run")

const (
	// cacheBenchSteps is the run's model calls: 19 tool calls, then the
	// answer.
	cacheBenchSteps = 20
	// charsPerToken estimates a token count from the JSON of a block, as
	// Anthropic's token counting roughly does for English and code.
	charsPerToken = 4
	// minCacheable is the shortest prefix Anthropic caches for Sonnet and
	// Opus (1,024 tokens): a breakpoint before it writes nothing.
	minCacheable = 1024
	// lookback is how many blocks before a breakpoint Anthropic checks for
	// an earlier cache entry.
	lookback = 20
)

// benchInstructions stand for an agent's system prompt: about 1,500
// tokens, as Parley's own with a project's AGENTS.md.
var benchInstructions = strings.Repeat("You are a coding agent. Read the files you need, change them with care, run the tests, and say what you did. ", 55)

// benchToolResult stands for what a tool gives back: a file's excerpt of
// about 400 tokens.
func benchToolResult(n int) string {
	return fmt.Sprintf("counted %d\n", n) + strings.Repeat(fmt.Sprintf("line %d: func step%d() error { return nil }\n", n, n), 36)
}

// usage is one request's input as Anthropic bills it: input_tokens at the
// full price, cache_read_input_tokens at the read price,
// cache_creation_input_tokens at the write price.
type usage struct{ input, read, write int64 }

func (u usage) total() int64 { return u.input + u.read + u.write }

// anthropicCache is Anthropic's prompt cache as its docs describe it, over
// the request bodies Parley sent: a breakpoint (cache_control) writes the
// prompt's prefix up to its block, in the order tools, system, messages; a
// later request reads the longest written prefix it starts with, found at
// or up to lookback blocks before one of its breakpoints. Tokens are
// estimated from each block's JSON (charsPerToken), the same way for both
// runs.
type anthropicCache struct{ written map[[32]byte]bool }

// bill returns body's usage and records what it writes.
func (c *anthropicCache) bill(t *testing.T, body string) usage {
	t.Helper()
	req := decode(t, body)
	blocks := append(append([]any(nil), asList(req["tools"])...), asList(req["system"])...)
	for _, m := range asList(req["messages"]) {
		role := m.(map[string]any)["role"]
		for _, b := range asList(m.(map[string]any)["content"]) {
			blocks = append(blocks, map[string]any{"role": role, "block": b})
		}
	}
	hash := make([][32]byte, len(blocks))
	cum := make([]int64, len(blocks))
	marked := make([]bool, len(blocks))
	var h [32]byte
	var tokens int64
	for i, b := range blocks {
		marked[i] = countMarks(b) > 0
		js, err := json.Marshal(stripCache(b))
		if err != nil {
			t.Fatal(err)
		}
		h = sha256.Sum256(append(h[:], js...))
		tokens += int64((len(js) + charsPerToken - 1) / charsPerToken)
		hash[i], cum[i] = h, tokens
	}
	var u usage
	last := -1
	for i := range blocks {
		if !marked[i] {
			continue
		}
		last = i
		for j := i; j >= 0 && j > i-lookback; j-- {
			if c.written[hash[j]] {
				u.read = max(u.read, cum[j])
				break
			}
		}
	}
	if last >= 0 && cum[last] >= minCacheable && cum[last] > u.read {
		u.write = cum[last] - u.read
		for i := range blocks[:last+1] {
			if marked[i] && cum[i] >= minCacheable {
				c.written[hash[i]] = true
			}
		}
	}
	u.input = tokens - u.read - u.write
	return u
}

func asList(v any) []any { l, _ := v.([]any); return l }

// runCacheBench drives one real 20-step run of an agent on Anthropic's
// Messages API (a scripted server answering in its format) and returns
// the request bodies Parley sent.
func runCacheBench(t *testing.T, cache bool) []string {
	t.Helper()
	var replies []string
	for i := 1; i < cacheBenchSteps; i++ {
		replies = append(replies, anthropicSSE(i))
	}
	srv := newScriptServer(t, append(replies, anthropicSSE(0)))
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{APIKeys: map[string]string{"anthropic": "k"}, BaseURLs: map[string]string{"anthropic": srv.URL},
		Getenv: func(string) string { return "" }, MaxRetries: -1}
	count := agentcore.NewTool("count", "Counts one further and shows the file it counted in",
		func(ctx context.Context, in countIn, tc *agentcore.ToolContext) (string, error) {
			return benchToolResult(in.N), nil
		})
	agent := &agentcore.Agent{
		ID: "a", Name: "A", Model: "anthropic/claude-sonnet-4-5", Instructions: agentcore.Text(benchInstructions),
		MaxSteps: cacheBenchSteps, Tools: map[string]*agentcore.Tool{"count": count},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
	}
	rt := agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(func() { rt.Close(); db.Close() })
	th := thread(t, rt)
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	var opts agentcore.RunOptions
	if !cache {
		opts.ProviderOptions = llm.ProviderOptions{Anthropic: &llm.AnthropicOptions{NoCache: true}}
	}
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "Count to nineteen, one call a number.", Options: opts}); err != nil {
		t.Fatal(err)
	}
	if events := collect(t, sub); events[len(events)-1].Type != agentcore.EventFinish {
		t.Fatalf("run ended with %+v", events[len(events)-1])
	}
	reqs := srv.requests()
	if len(reqs) != cacheBenchSteps {
		t.Fatalf("%d requests, want %d", len(reqs), cacheBenchSteps)
	}
	return reqs
}

// bill sums what Anthropic bills for a run's requests.
func billRun(t *testing.T, reqs []string) (sum usage, perStep []usage) {
	c := &anthropicCache{written: map[[32]byte]bool{}}
	for _, body := range reqs {
		u := c.bill(t, body)
		perStep = append(perStep, u)
		sum.input += u.input
		sum.read += u.read
		sum.write += u.write
	}
	return sum, perStep
}

// TestBenchFigures: input tokens billed at the full price over a 20-step
// tool-using run, with Parley's cache breakpoints and without. Under plain
// go test it checks the counting: the same prompts either way, nothing
// cached without breakpoints, every step after the first reading what the
// one before wrote, and the saving issue 18 asks for (at least 70% fewer
// full-price input tokens).
func TestBenchFigures(t *testing.T) {
	cached, uncached := runCacheBench(t, true), runCacheBench(t, false)
	with, steps := billRun(t, cached)
	without, _ := billRun(t, uncached)
	for i, body := range uncached {
		if n := countMarks(decode(t, body)); n != 0 {
			t.Fatalf("step %d without caching carries %d breakpoints", i+1, n)
		}
	}
	if without.read != 0 || without.write != 0 {
		t.Fatalf("without breakpoints Anthropic caches nothing, yet %+v", without)
	}
	if with.total() != without.total() {
		t.Fatalf("the prompts differ: %d tokens with caching, %d without", with.total(), without.total())
	}
	for i, u := range steps[1:] {
		if u.read < steps[i].read+steps[i].write {
			t.Errorf("step %d reads %d tokens, less than step %d cached (%d)", i+2, u.read, i+1, steps[i].read+steps[i].write)
		}
	}
	saving := 100 * float64(without.input-with.input) / float64(without.input)
	info, _ := llm.Lookup("anthropic/claude-sonnet-4-5")
	costWith, _ := info.Cost(with.input, with.read, with.write, 0)
	costWithout, _ := info.Cost(without.input, 0, 0, 0)
	if *benchFigures {
		fmt.Printf("BENCH cache_full_price_input_tokens_uncached %d tokens\n", without.input)
		fmt.Printf("BENCH cache_full_price_input_tokens_cached %d tokens\n", with.input)
		fmt.Printf("BENCH cache_read_input_tokens_cached %d tokens\n", with.read)
		fmt.Printf("BENCH cache_creation_input_tokens_cached %d tokens\n", with.write)
		fmt.Printf("BENCH cache_full_price_input_saving %.1f %%\n", saving)
		fmt.Printf("BENCH cache_input_cost_saving %.1f %%\n", 100*(costWithout-costWith)/costWithout)
		fmt.Printf("BENCH cache_input_cost_uncached %.4f USD\n", costWithout)
		fmt.Printf("BENCH cache_input_cost_cached %.4f USD\n", costWith)
	}
	t.Logf("20 steps, %d prompt tokens: full-price input %d without caching, %d with (%d read, %d written): %.1f%% fewer; input cost $%.4f → $%.4f",
		without.total(), without.input, with.input, with.read, with.write, saving, costWithout, costWith)
	if saving < 70 {
		t.Errorf("caching saves %.1f%% of the full-price input tokens; the goal is at least 70%%", saving)
	}
}
