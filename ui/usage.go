package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/components"
)

// messageUsage is a reply's footer from the usage it recorded; nil when it
// recorded none. model prices it.
func messageUsage(c agentcore.Content, model string) *components.Usage {
	u, ok := agentcore.MessageUsage(c)
	if !ok || u.IsZero() {
		return nil
	}
	v := &components.Usage{In: tokens(u.InputTokens + u.CachedTokens + u.CacheWriteTokens), Out: tokens(u.OutputTokens)}
	detail := []string{usageDetail(u)}
	if info, ok := llm.Lookup(model); ok {
		if usd, ok := info.Cost(u.InputTokens, u.CachedTokens, u.CacheWriteTokens, u.OutputTokens); ok {
			v.Cost = money(usd)
			detail = append(detail, v.Cost+" at "+model+" list prices")
		}
	} else if model != "" {
		detail = append(detail, "no price known for "+model)
	}
	v.Detail = strings.Join(detail, " · ")
	return v
}

// threadUsage is the chat header's total and the current model's context
// fill. A failure to read it hides it: usage is never worth a broken page.
func (s *Server) threadUsage(ctx context.Context, t agentcore.Thread) components.ThreadUsage {
	tu, err := s.rt.ThreadUsage(ctx, t.ID)
	if err != nil {
		s.log.Warn("thread usage", "thread", t.ID, "err", err)
		return components.ThreadUsage{}
	}
	return usageView(tu, s.threadModel(t))
}

// usageView words a thread's usage for the header; model is the model the
// thread's next reply uses.
func usageView(tu agentcore.ThreadUsage, model string) components.ThreadUsage {
	total := tu.Total()
	v := components.ThreadUsage{Tokens: tu.Replies > 0 && !total.IsZero(),
		In: tokens(total.InputTokens + total.CachedTokens + total.CacheWriteTokens), Out: tokens(total.OutputTokens)}
	var detail []string
	if v.Tokens {
		detail = append(detail, fmt.Sprintf("This chat: %s over %d %s", usageDetail(total), tu.Replies, plural(tu.Replies, "reply", "replies")))
	}

	// Prices are per model: a thread that switched models is costed
	// model by model, and a model without a known price makes the sum a
	// lower bound.
	var usd float64
	var priced, unpriced []string
	for _, m := range sortedKeys(tu.ByModel) {
		u := tu.ByModel[m]
		if info, ok := llm.Lookup(m); ok {
			if c, ok := info.Cost(u.InputTokens, u.CachedTokens, u.CacheWriteTokens, u.OutputTokens); ok {
				usd += c
				priced = append(priced, m)
				continue
			}
		}
		unpriced = append(unpriced, cmp.Or(m, "an unrecorded model"))
	}
	if len(priced) > 0 {
		v.Cost = money(usd)
		if len(unpriced) > 0 {
			v.Cost = "≥ " + v.Cost
		}
		detail = append(detail, "cost "+v.Cost+" at list prices")
	}
	if len(unpriced) > 0 && v.Tokens {
		detail = append(detail, "no price known for "+strings.Join(unpriced, ", "))
	}

	if info, ok := llm.Lookup(model); ok && info.ContextWindow > 0 && tu.ContextTokens > 0 {
		pct := int(min(tu.ContextTokens*100/info.ContextWindow, 100))
		v.Context, v.ContextPct = tokens(tu.ContextTokens)+" / "+tokens(info.ContextWindow), pct
		d := fmt.Sprintf("context: %s of %s's %s-token window (%d%%)", grouped(tu.ContextTokens), model, grouped(info.ContextWindow), pct)
		if tu.ContextModel != "" && tu.ContextModel != model {
			d += ", as measured on " + tu.ContextModel
		}
		detail = append(detail, d)
	}
	v.Detail = strings.Join(detail, " · ")
	return v
}

// usageDetail is every count of u, for a tooltip.
func usageDetail(u agentcore.Usage) string {
	s := grouped(u.InputTokens+u.CachedTokens+u.CacheWriteTokens) + " input tokens"
	var cache []string
	if u.CachedTokens > 0 {
		cache = append(cache, grouped(u.CachedTokens)+" read from cache")
	}
	if u.CacheWriteTokens > 0 {
		cache = append(cache, grouped(u.CacheWriteTokens)+" written to cache")
	}
	if len(cache) > 0 {
		s += " (" + strings.Join(cache, ", ") + ")"
	}
	s += ", " + grouped(u.OutputTokens) + " output"
	if u.ReasoningTokens > 0 {
		s += " (" + grouped(u.ReasoningTokens) + " reasoning)"
	}
	return s
}

// tokens is a compact token count: 950, 9.8k, 128k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 9_950:
		return tenths((n+50)/100) + "k"
	case n < 999_500:
		return fmt.Sprintf("%dk", (n+500)/1000)
	default:
		return tenths((n+50_000)/100_000) + "M"
	}
}

// tenths writes a count of tenths: 13 → "1.3", 20 → "2".
func tenths(n int64) string {
	if n%10 == 0 {
		return fmt.Sprint(n / 10)
	}
	return fmt.Sprintf("%d.%d", n/10, n%10)
}

// grouped is n with thousands separators: 12,345.
func grouped(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// money is a cost in dollars with the precision small costs need.
func money(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	case usd < 1:
		return fmt.Sprintf("$%.3f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
