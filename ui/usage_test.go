package ui

import (
	"strings"
	"testing"

	"parley/agentcore"
)

// The header's figures: tokens summed over models, cost priced model by
// model (a lower bound when a model's price is unknown), the context fill
// against the current model's window.
func TestUsageView(t *testing.T) {
	gpt := agentcore.Usage{InputTokens: 900_000, CachedTokens: 100_000, OutputTokens: 50_000}
	claude := agentcore.Usage{InputTokens: 10_000, OutputTokens: 2_000}
	cases := []struct {
		name  string
		tu    agentcore.ThreadUsage
		model string
		want  struct{ in, out, cost, ctx string }
		pct   int
	}{
		{"priced models", agentcore.ThreadUsage{Replies: 3,
			ByModel:       map[string]agentcore.Usage{"openai/gpt-4o": gpt, "anthropic/claude-sonnet-4-20250514": claude},
			ContextTokens: 64_000, ContextModel: "openai/gpt-4o"}, "openai/gpt-4o",
			// gpt-4o: 0.9M × $2.50 + 0.1M × $1.25 + 0.05M × $10 = $2.875;
			// claude-sonnet-4: 0.01M × $3 + 0.002M × $15 = $0.06.
			struct{ in, out, cost, ctx string }{"1M", "52k", "$2.94", "64k / 128k"}, 50},
		{"one model unpriced", agentcore.ThreadUsage{Replies: 2,
			ByModel: map[string]agentcore.Usage{"anthropic/claude-sonnet-4": claude, "openai-compatible/mystery": {InputTokens: 5, OutputTokens: 5}}},
			"openai-compatible/mystery",
			struct{ in, out, cost, ctx string }{"10k", "2k", "≥ $0.060", ""}, 0},
		{"nothing priced", agentcore.ThreadUsage{Replies: 1,
			ByModel: map[string]agentcore.Usage{"openai-compatible/x": {InputTokens: 950, OutputTokens: 12}}, ContextTokens: 962}, "openai-compatible/x",
			struct{ in, out, cost, ctx string }{"950", "12", "", ""}, 0},
		{"full window", agentcore.ThreadUsage{Replies: 1,
			ByModel: map[string]agentcore.Usage{"ollama/llama3.2": {InputTokens: 1, OutputTokens: 1}}, ContextTokens: 250_000}, "openrouter/anthropic/claude-sonnet-4",
			struct{ in, out, cost, ctx string }{"1", "1", "$0", "250k / 200k"}, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := usageView(tc.tu, tc.model)
			got := struct{ in, out, cost, ctx string }{v.In, v.Out, v.Cost, v.Context}
			if got != tc.want || v.ContextPct != tc.pct || !v.Tokens {
				t.Fatalf("got %+v (%d%%), want %+v (%d%%); detail %q", got, v.ContextPct, tc.want, tc.pct, v.Detail)
			}
		})
	}
	if v := usageView(agentcore.ThreadUsage{}, "openai/gpt-4o"); v.Tokens || v.Cost != "" || v.Context != "" {
		t.Fatalf("empty thread shows %+v", v)
	}
}

func TestMessageUsage(t *testing.T) {
	c := agentcore.TextContent("x")
	if messageUsage(c, "openai/gpt-4o") != nil {
		t.Fatal("usage for a reply that recorded none")
	}
	c.Metadata = map[string]any{agentcore.MetaUsage: map[string]any{"inputTokens": 2000.0, "cachedInputTokens": 500.0, "outputTokens": 100.0, "reasoningTokens": 40.0}}
	u := messageUsage(c, "openai/gpt-4o")
	// 2000 × $2.50 + 500 × $1.25 + 100 × $10, per million = $0.006625.
	if u == nil || u.In != "2.5k" || u.Out != "100" || u.Cost != "$0.0066" {
		t.Fatalf("%+v", u)
	}
	want := "2,500 input tokens (500 read from cache), 100 output (40 reasoning) · $0.0066 at openai/gpt-4o list prices"
	if u.Detail != want {
		t.Fatalf("detail %q\n want %q", u.Detail, want)
	}
	if u := messageUsage(c, "openai-compatible/x"); u.Cost != "" || u.Detail != "2,500 input tokens (500 read from cache), 100 output (40 reasoning) · no price known for openai-compatible/x" {
		t.Fatalf("unpriced: %+v", u)
	}
}

// A Claude reply's cache reads and writes show apart and are priced at the
// catalog's cached and cache-write prices; the chat's total sums them.
func TestMessageUsageWithCacheWrites(t *testing.T) {
	c := agentcore.TextContent("x")
	c.Metadata = map[string]any{agentcore.MetaUsage: map[string]any{"inputTokens": 1000.0, "cachedInputTokens": 20000.0,
		"cacheWriteTokens": 4000.0, "outputTokens": 500.0}}
	u := messageUsage(c, "anthropic/claude-sonnet-4-5")
	// 1000 × $3 + 20000 × $0.30 + 4000 × $3.75 + 500 × $15, per million = $0.0315.
	if u == nil || u.In != "25k" || u.Cost != "$0.032" {
		t.Fatalf("%+v", u)
	}
	if want := "25,000 input tokens (20,000 read from cache, 4,000 written to cache), 500 output · $0.032 at anthropic/claude-sonnet-4-5 list prices"; u.Detail != want {
		t.Fatalf("detail %q\n want %q", u.Detail, want)
	}
	tu := agentcore.ThreadUsage{Replies: 2, ByModel: map[string]agentcore.Usage{
		"anthropic/claude-sonnet-4-5": {InputTokens: 2000, CachedTokens: 40000, CacheWriteTokens: 8000, OutputTokens: 1000}}}
	if v := usageView(tu, "anthropic/claude-sonnet-4-5"); v.Cost != "$0.063" || !strings.Contains(v.Detail, "8,000 written to cache") {
		t.Errorf("chat usage %+v", v)
	}
}

func TestTokensAndMoney(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1k", 1250: "1.3k", 9_949: "9.9k", 10_400: "10k", 128_000: "128k", 999_499: "999k", 999_500: "1M", 1_047_576: "1M", 2_500_000: "2.5M"} {
		if got := tokens(n); got != want {
			t.Errorf("tokens(%d) = %s, want %s", n, got, want)
		}
	}
	for usd, want := range map[float64]string{0: "$0", 0.00004: "<$0.0001", 0.0042: "$0.0042", 0.06: "$0.060", 2.935: "$2.94", 12: "$12.00"} {
		if got := money(usd); got != want {
			t.Errorf("money(%v) = %s, want %s", usd, got, want)
		}
	}
	if g := grouped(1234567); g != "1,234,567" {
		t.Errorf("grouped = %s", g)
	}
}
