package partialjson

import (
	"runtime/metrics"
	"strings"
	"testing"
)

// allocated is the bytes this process has allocated so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Feeding a long string argument (a write_file call's content) in small
// deltas, and reading it after each as a preview does, allocates about as
// much per delta at 4 MiB as at 64 KiB: the string is one buffer that grows
// by doubling, and reading it copies nothing.
func TestBytesPerDeltaDoNotGrowWithTheDocument(t *testing.T) {
	p := New()
	if _, err := p.WriteString(`{"path":"big.go","content":"`); err != nil {
		t.Fatal(err)
	}
	delta := strings.Repeat(`line\n\t`, 4) // 28 bytes, 24 once unescaped
	feed := func(n int) float64 {
		before := allocated()
		for range n / len(delta) {
			if _, err := p.WriteString(delta); err != nil {
				t.Fatal(err)
			}
			if _, ok := p.String("content"); !ok {
				t.Fatal("no content")
			}
		}
		return float64(allocated()-before) / float64(n/len(delta))
	}
	// Each measure spans a doubling of the string, so each holds the same
	// share of the buffer's growths.
	feed(64 << 10)
	small := feed(64 << 10)
	feed(4<<20 - 128<<10)
	large := feed(4 << 20)
	if limit := 8 * float64(len(delta)); small > limit || large > limit {
		t.Fatalf("a %d-byte delta allocates %.0f bytes at 64 KiB, %.0f at 4 MiB (limit %.0f)", len(delta), small, large, limit)
	}
	s, _ := p.String("content")
	if want := strings.Repeat("line\n\t", 4*((8<<20)/len(delta))); s != want {
		t.Fatalf("content has %d bytes, want %d", len(s), len(want))
	}
}
