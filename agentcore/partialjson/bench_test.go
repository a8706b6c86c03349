package partialjson

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchFigures turns TestBenchFigures into the measurement `make bench`
// prints: go test -v -run '^TestBenchFigures$' ./agentcore/partialjson -args -bench-figures
var benchFigures = flag.Bool("bench-figures", false, "print BENCH lines for partial-JSON streaming")

// deltaSize is the size of a streamed argument delta in the reference
// figure (npm partial-json: 5.4 s for a 113 KB write in 16-byte deltas).
const deltaSize = 16

// writeDoc returns the arguments of a write_file call of about size bytes:
// code-like text with quotes, backslashes, tabs, newlines, HTML characters
// (which encoding/json writes as \u escapes) and multi-byte UTF-8.
func writeDoc(size int) []byte {
	lines := []string{
		"package main\n",
		"import \"fmt\"\n",
		"func main() {\n",
		"\tfmt.Println(\"héllo, 世界 — \\\"quoted\\\"\")\n",
		"\tpath := `C:\\Users\\x`\n",
		"\tif x < 10 && y > 3 {\n",
		"\t\treturn // naïve café 😀\n",
		"\t}\n",
		"}\n",
	}
	var content strings.Builder
	for i := 0; content.Len() < size*9/10; i++ {
		content.WriteString(lines[i%len(lines)])
	}
	doc, err := json.Marshal(map[string]string{"path": "a/b.go", "content": content.String()})
	if err != nil {
		panic(err)
	}
	return doc
}

// preview streams doc in deltas the way the UI does: after each delta it
// asks what changed and reads the growing content.
func preview(doc []byte, delta int) (content string) {
	p := New()
	for i := 0; i < len(doc); i += delta {
		p.Write(doc[i:min(i+delta, len(doc))])
		p.Changed()
		content, _ = p.String("content")
	}
	return content
}

// reparse is the reference behaviour: re-parse the accumulated text after
// each delta.
func reparse(doc []byte, delta int) (content string) {
	for end := 0; end < len(doc); {
		end = min(end+delta, len(doc))
		v, _, err := refParse(string(doc[:end]))
		if m, ok := v.(map[string]any); ok && err == nil {
			content, _ = m["content"].(string)
		}
	}
	return content
}

func BenchmarkIncremental1MiB(b *testing.B) {
	doc := writeDoc(1 << 20)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		preview(doc, deltaSize)
	}
}

func BenchmarkReparse(b *testing.B) {
	doc := writeDoc(64 << 10)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		reparse(doc, deltaSize)
	}
}

func TestBenchFigures(t *testing.T) {
	if !*benchFigures {
		// Without the flag, a correctness pass over the same code paths.
		doc := writeDoc(8 << 10)
		var want struct{ Content string }
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		if got := preview(doc, deltaSize); got != want.Content {
			t.Errorf("preview content differs from encoding/json (%d vs %d bytes)", len(got), len(want.Content))
		}
		if got := reparse(doc, deltaSize); got != want.Content {
			t.Errorf("reparse content differs from encoding/json (%d vs %d bytes)", len(got), len(want.Content))
		}
		return
	}
	mib := writeDoc(1 << 20)
	ref := writeDoc(113_000)
	incMiB := fastest(5, func() { preview(mib, deltaSize) })
	incRef := fastest(5, func() { preview(ref, deltaSize) })
	re := fastest(1, func() { reparse(ref, deltaSize) })
	fmt.Printf("BENCH partialjson_1mib_16b_deltas %.1f ms\n", ms(incMiB))
	fmt.Printf("BENCH partialjson_113kb_reparse %.0f ms\n", ms(re))
	fmt.Printf("BENCH partialjson_113kb_incremental %.2f ms\n", ms(incRef))
	fmt.Printf("BENCH partialjson_reparse_ratio %.0f x\n", float64(re)/float64(incRef))
}

// fastest runs f n times and returns its shortest run, the figure least
// disturbed by other work on the machine.
func fastest(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range n {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
