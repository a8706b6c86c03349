package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

// Search figures for make bench:
// go test -v -run '^TestBenchFigures$' ./storage -args -bench-figures
var benchFigures = flag.Bool("bench-figures", false, "print BENCH lines for search over 100,000 messages")

// corpus makes a reproducible history: words drawn from a Zipf law over a
// made-up vocabulary (a few very common words, a long tail of rare ones),
// like natural text; one reply in four calls tools.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

var benchTools = []string{"view", "find_files", "search_content", "write_file", "edit_file", "execute_command",
	"web_fetch", "task_write", "github_create_issue", "linear_search_issues"}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo", "pe", "zu", "dan", "mor", "lin", "gar", "bel", "tor"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

func (c *corpus) text(words int) string {
	parts := make([]string, words)
	for i := range parts {
		parts[i] = c.word()
	}
	return strings.Join(parts, " ")
}

func (c *corpus) content(role agentcore.Role) agentcore.Content {
	if role == agentcore.RoleUser {
		return agentcore.TextContent(c.text(5 + c.rng.IntN(30)))
	}
	cont := agentcore.Content{Format: 2}
	if c.rng.IntN(4) == 0 {
		for i := range 1 + c.rng.IntN(2) {
			name := benchTools[c.rng.IntN(len(benchTools))]
			cont.Parts = append(cont.Parts, agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
				State: "result", ToolCallID: fmt.Sprintf("c%d", i), ToolName: name,
				Args: json.RawMessage(`{"path":"x.go"}`), Result: json.RawMessage(`"ok"`)}})
		}
	}
	cont.Parts = append(cont.Parts, agentcore.Part{Type: "text", Text: c.text(20 + c.rng.IntN(120))})
	return cont
}

// seedSearch writes threads × perThread messages in large transactions,
// through the same triggers that index every message.
func seedSearch(t testing.TB, db *DB, c *corpus, threads, perThread int) {
	t.Helper()
	ctx := context.Background()
	th := make([]agentcore.Thread, threads)
	for i := range th {
		th[i] = mustThread(t, db, agentcore.Thread{Title: c.text(2 + c.rng.IntN(4))})
	}
	base := time.Now().Add(-time.Duration(threads*perThread) * time.Second)
	for i, thr := range th {
		err := db.write(ctx, func(tx *sql.Tx) error {
			stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, created_at)
				VALUES (?, ?, ?, ?, ?, ?, 'complete', ?)`)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for s := range perThread {
				role := agentcore.RoleUser
				if s%2 == 1 {
					role = agentcore.RoleAssistant
				}
				content, _ := json.Marshal(c.content(role))
				at := base.Add(time.Duration(i*perThread+s) * time.Second)
				if _, err := stmt.ExecContext(ctx, NewID(), thr.ID, thr.ResourceID, s+1, role, string(content), ms(at)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// searchMix is what people type: a common word, a rarer one, two words,
// a word half typed, a tool name, a word of a thread title, and a word
// nothing has.
func searchMix(c *corpus, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		switch len(out) % 7 {
		case 0:
			out = append(out, c.vocab[c.rng.IntN(20)]+" ")
		case 1:
			out = append(out, c.vocab[200+c.rng.IntN(5000)]+" ")
		case 2:
			out = append(out, c.word()+" "+c.word()+" ")
		case 3:
			w := c.vocab[c.rng.IntN(2000)]
			out = append(out, w[:min(len(w), 3+c.rng.IntN(3))])
		case 4:
			out = append(out, benchTools[c.rng.IntN(len(benchTools))]+" ")
		case 5:
			out = append(out, c.word()+" "+c.vocab[c.rng.IntN(3000)][:3])
		case 6:
			out = append(out, "zyxquux ")
		}
	}
	return out
}

func TestBenchFigures(t *testing.T) {
	db := openTest(t)
	c := newCorpus(1)
	threads, per, queries := 20, 100, 140
	if *benchFigures {
		threads, per, queries = 1000, 100, 2100
	}
	start := time.Now()
	seedSearch(t, db, c, threads, per)
	seeded := time.Since(start)
	ctx := context.Background()

	var times []float64
	for _, q := range searchMix(c, queries) {
		t0 := time.Now()
		hits, err := db.Search(ctx, agentcore.SearchQuery{Text: q})
		times = append(times, float64(time.Since(t0).Microseconds())/1000)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if strings.HasPrefix(q, "zyxquux") && len(hits) > 0 {
			t.Errorf("search %q: %d hits for a word no message has", q, len(hits))
		}
	}
	// Common words and tool names always find something, and every hit
	// has its snippet.
	for _, q := range []string{c.vocab[0] + " ", "search_content ", c.vocab[1][:3]} {
		hits, err := db.Search(ctx, agentcore.SearchQuery{Text: q})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search %q: %d hits, %v", q, len(hits), err)
		}
		for _, h := range hits {
			if !slices.ContainsFunc(h.Snippet, func(p agentcore.SnippetPart) bool { return p.Match }) {
				t.Errorf("search %q: hit %s/%s has no match in its snippet %q", q, h.Field, h.MessageID, snippetText(h.Snippet))
			}
		}
	}
	if !*benchFigures {
		return
	}
	n := threads * per
	fmt.Printf("BENCH search_seed_%dk_messages %.1f s\n", n/1000, seeded.Seconds())
	fmt.Printf("BENCH search_%dk_messages_p50 %.2f ms\n", n/1000, quantile(times, 50))
	fmt.Printf("BENCH search_%dk_messages_p99 %.2f ms\n", n/1000, quantile(times, 99))
}

func quantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
