package llm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A big tool call input that Parley's transport writes into the request
// body gives the body the SDK itself writes, byte for byte, for every
// OpenAI-style provider.
func TestSplicedInputIsTheSDKsBody(t *testing.T) {
	big := `{"path":"a.txt","content":"` + strings.Repeat(`<b>&amp; \"q\" \\ é\u2028 \n`+"\t\xff\u2028\x01\b\f\r\x1f\u2029\xe2\x80", spliceFrom/20) + `"}`
	small := `{"path":"b.txt"}`
	req := Request{Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, Text: "writing", ToolCalls: []ToolCall{{ID: "c1", Name: "write_file", Input: big}, {ID: "c2", Name: "write_file", Input: small}, {ID: "c3", Name: "write_file", Input: big + " "}}},
		{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c1", Name: "write_file", Output: "ok"}, {CallID: "c2", Name: "write_file", Output: "ok"}, {CallID: "c3", Name: "write_file", Output: "ok"}}},
	}, Tools: benchTool}
	for _, w := range wires {
		if w.name == "anthropic" || w.name == "google" {
			continue
		}
		t.Run(w.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			body := w.build(kindText, split("ok"))
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.ContentLength != int64(len(b)) {
					t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(b))
				}
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				rw.Header().Set("Content-Type", "text/event-stream")
				rw.Write([]byte(body))
			}))
			defer srv.Close()
			m := openBench(t, w, srv)
			stream := func() {
				for _, err := range m.Stream(t.Context(), req) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			stream()
			spliceMin = 1 << 40
			stream()
			spliceMin = spliceFrom
			if len(bodies) != 2 {
				t.Fatalf("%d requests", len(bodies))
			}
			if bytes.Contains(bodies[0], []byte("parley-input")) || !bytes.Equal(bodies[0], bodies[1]) {
				t.Errorf("spliced body (%d bytes) differs from the SDK's (%d bytes)", len(bodies[0]), len(bodies[1]))
			}
		})
	}
}

// The request that sends a 10 MiB write_file argument back to the model
// with the tool's result, through openai-compatible: B/op is what it
// allocates (20.6x the argument when the SDK encoded it, 1.1x spliced):
//
//	go test -run '^$' -bench RequestWithBigInput -benchtime 1x ./agentcore/llm/
func BenchmarkRequestWithBigInput(b *testing.B) {
	w := wires[1]
	srv := benchServer(b, w.build(kindText, split("ok")))
	m := openBench(b, w, srv)
	req := Request{Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "write_file", Input: benchArgs(10 << 20)}}},
		{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c1", Name: "write_file", Output: "ok"}}},
	}, Tools: benchTool}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range m.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A quoteReader writes what quoteParts does, whatever falls at the cut of
// its windows: a rune of 2, 3 or 4 bytes, U+2028, an escaped byte, or
// invalid UTF-8 (a lone continuation byte, a sequence cut short).
func TestQuoteReaderWindows(t *testing.T) {
	for _, tail := range []string{"é", "日", "😀", "\u2028", "\"\\\n\x01", "\xff", "\x80\x80\x80\x80", "\xe2\x80", "\xf0\x9f\x98"} {
		for off := range 6 {
			s := strings.Repeat("a", quoteWindow-off) + tail + strings.Repeat(tail+"b", quoteWindow/len(tail)) + tail
			var want []byte
			quoteParts(s, func(p string) { want = append(want, p...) })
			got, err := io.ReadAll(&quoteReader{s: s})
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%q at offset %d: %d bytes, want %d (%v)", tail, off, len(got), len(want), err)
			}
			if n := quotedSize(s); n != len(want) {
				t.Errorf("%q at offset %d: quotedSize %d, want %d", tail, off, n, len(want))
			}
		}
	}
	if got, _ := io.ReadAll(&quoteReader{}); string(got) != `""` {
		t.Errorf("the empty string reads %q", got)
	}
}
