package llm

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Streaming cost through every provider adapter: N bytes of reply text or
// of tool-call arguments in 16-byte deltas, served by a local HTTP server
// in the provider's own wire format. Figures (CPU time of this process,
// which includes the local server writing a prepared body):
//
//	go test -v -count=1 -run '^TestBenchFigures$' ./agentcore/llm/ -args -bench-figures
//
// and a profile:
//
//	go test -run '^$' -bench 'Stream/.*/1MiB' -benchtime 1x -cpuprofile cpu.out ./agentcore/llm/
var benchFigures = flag.Bool("bench-figures", false, "print BENCH lines for streaming through the provider adapters")

// benchDelta is the size of one streamed delta, as in the issue's
// measurements (1 MiB in 16-byte deltas).
const benchDelta = 16

// streamKind is what a bench stream carries.
type streamKind string

const (
	kindText streamKind = "text"
	kindArgs streamKind = "args"
)

// wire builds the response body a provider sends for a stream of deltas:
// text deltas, or one write_file call whose arguments come in deltas.
type wire struct {
	name  string // provider name, as in a spec
	spec  string
	base  string // base-URL suffix after the server's address
	build func(kind streamKind, deltas []string) string
	// argsWhole: the provider sends a call's arguments in one piece
	// (Gemini), so the args stream is one function call of N bytes.
	argsWhole bool
}

var wires = []wire{
	{name: "openai", spec: "openai/gpt-4o", base: "/v1", build: openAIWire},
	{name: "openai-compatible", spec: "openai-compatible/m", base: "/v1", build: openAIWire},
	{name: "ollama", spec: "ollama/llama3.2", base: "/v1", build: openAIWire},
	{name: "openrouter", spec: "openrouter/openai/gpt-4o", base: "/api/v1", build: openAIWire},
	{name: "anthropic", spec: "anthropic/claude-sonnet-4-5", base: "", build: anthropicWire},
	{name: "google", spec: "google/gemini-2.5-flash", base: "", build: geminiWire, argsWhole: true},
}

// benchArgs returns write_file arguments of exactly n bytes (n ≥ 64), a
// valid JSON object.
func benchArgs(n int) string {
	head, tail := `{"path":"notes.txt","content":"`, `"}`
	line := `func main() { fmt.Println(\"hello, world\") } // \t tab\n`
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < n-len(tail) {
		b.WriteString(line[:min(len(line), n-len(tail)-b.Len())])
	}
	s := b.String()
	if strings.HasSuffix(s, `\`) { // never end inside an escape
		s = s[:len(s)-1] + "x"
	}
	return s + tail
}

// benchText returns n bytes of reply text.
func benchText(n int) string {
	line := "Streaming a reply costs time proportional to its length. \"Quoted\" <b>\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// split cuts s into pieces of benchDelta bytes.
func split(s string) []string {
	out := make([]string, 0, len(s)/benchDelta+1)
	for len(s) > 0 {
		n := min(benchDelta, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return string(b)
}

func openAIWire(kind streamKind, deltas []string) string {
	var b strings.Builder
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = jsonString(finish)
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, fin)
	}
	finish := "stop"
	if kind == kindText {
		chunk(`{"role":"assistant","content":""}`, "")
		for _, d := range deltas {
			chunk(`{"content":`+jsonString(d)+`}`, "")
		}
	} else {
		finish = "tool_calls"
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":""}}]}`, "")
		for _, d := range deltas {
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(d)+`}}]}`, "")
		}
	}
	chunk(`{}`, finish)
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func anthropicWire(kind streamKind, deltas []string) string {
	var b strings.Builder
	event := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	event("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	stop := "end_turn"
	if kind == kindText {
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, d := range deltas {
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(d)+`}}`)
		}
	} else {
		stop = "tool_use"
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}`)
		for _, d := range deltas {
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonString(d)+`}}`)
		}
	}
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":20}}`)
	event("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

func geminiWire(kind streamKind, deltas []string) string {
	var b strings.Builder
	chunk := func(part string) {
		fmt.Fprintf(&b, `data: {"candidates":[{"content":{"parts":[%s],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash"}`+"\r\n\r\n", part)
	}
	if kind == kindText {
		for _, d := range deltas {
			chunk(`{"text":` + jsonString(d) + `}`)
		}
	} else {
		chunk(`{"functionCall":{"name":"write_file","args":` + strings.Join(deltas, "") + `}}`)
	}
	// The last chunk closes the candidate and carries the usage.
	b.WriteString(`data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20,"totalTokenCount":30},"modelVersion":"gemini-2.5-flash"}` + "\r\n\r\n")
	return b.String()
}

// benchServer serves body to every request, as fast as the client reads.
func benchServer(tb testing.TB, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 4096)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(body))
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func openBench(tb testing.TB, w wire, srv *httptest.Server) Model {
	tb.Helper()
	m, err := Open(w.spec, Config{
		APIKeys:    map[string]string{w.name: "test-key"},
		BaseURLs:   map[string]string{w.name: srv.URL + w.base},
		Getenv:     func(string) string { return "" },
		MaxRetries: -1,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

var benchTool = []ToolSpec{{Name: "write_file", Description: "Write a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}}

// benchStream is one prepared stream: a server and a model opened on it.
type benchStream struct {
	w    wire
	kind streamKind
	want string // the text or the arguments the stream carries
	m    Model
}

func newBenchStream(tb testing.TB, w wire, kind streamKind, n int) *benchStream {
	want := benchText(n)
	if kind == kindArgs {
		want = benchArgs(n)
	}
	srv := benchServer(tb, w.build(kind, split(want)))
	return &benchStream{w: w, kind: kind, want: want, m: openBench(tb, w, srv)}
}

// run streams once and checks what arrived; it returns the number of
// deltas the adapter yielded.
func (s *benchStream) run(tb testing.TB) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	req := Request{Messages: []Message{{Role: RoleUser, Text: "write"}}, Tools: benchTool}
	var (
		got    strings.Builder
		input  string
		deltas int
		finish bool
	)
	for p, err := range s.m.Stream(ctx, req) {
		if err != nil {
			tb.Fatalf("%s %s: %v", s.w.name, s.kind, err)
		}
		switch p.Type {
		case PartTextDelta, PartToolInputDelta:
			got.WriteString(p.Text)
			deltas++
		case PartToolCall:
			input = p.Input
		case PartFinish:
			finish = true
		}
	}
	if !finish {
		tb.Fatalf("%s %s: no finish", s.w.name, s.kind)
	}
	if s.kind == kindArgs && s.w.argsWhole {
		// Gemini's adapter re-encodes the arguments it decoded.
		var got, want any
		if json.Unmarshal([]byte(input), &got) != nil || json.Unmarshal([]byte(s.want), &want) != nil || !reflect.DeepEqual(got, want) {
			tb.Fatalf("%s %s: tool input of %d bytes, want %d", s.w.name, s.kind, len(input), len(s.want))
		}
		return deltas
	}
	if got.String() != s.want {
		tb.Fatalf("%s %s: %d bytes of deltas, want %d", s.w.name, s.kind, got.Len(), len(s.want))
	}
	if s.kind == kindArgs && input != s.want {
		tb.Fatalf("%s %s: tool input of %d bytes, want %d", s.w.name, s.kind, len(input), len(s.want))
	}
	return deltas
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchSizes = []struct {
	name string
	n    int
}{{"256KiB", 256 << 10}, {"1MiB", 1 << 20}}

func BenchmarkStream(b *testing.B) {
	for _, w := range wires {
		for _, kind := range []streamKind{kindText, kindArgs} {
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%s/%s/%s", w.name, kind, size.name), func(b *testing.B) {
					s := newBenchStream(b, w, kind, size.n)
					b.SetBytes(int64(size.n))
					b.ResetTimer()
					for b.Loop() {
						s.run(b)
					}
				})
			}
		}
	}
}

// TestBenchFigures prints the CPU time of each stream with -bench-figures;
// without it, it streams a small sample through every adapter and checks
// that what arrives is what was sent.
func TestBenchFigures(t *testing.T) {
	if !*benchFigures {
		for _, w := range wires {
			for _, kind := range []streamKind{kindText, kindArgs} {
				newBenchStream(t, w, kind, 4<<10).run(t)
			}
		}
		return
	}
	for _, w := range wires {
		for _, kind := range []streamKind{kindText, kindArgs} {
			var cpu [2]time.Duration
			for i, size := range benchSizes {
				s := newBenchStream(t, w, kind, size.n)
				cpu[i] = fastestCPU(3, func() { s.run(t) })
				fmt.Printf("BENCH llm_stream_%s_%s_%s %.1f ms\n", w.name, kind, strings.ToLower(size.name), ms(cpu[i]))
			}
			// Linear: 4× the bytes cost about 4× the CPU.
			fmt.Printf("BENCH llm_stream_%s_%s_1mib_over_256kib %.1f x\n", w.name, kind, float64(cpu[1])/float64(cpu[0]))
		}
	}
}

// fastestCPU runs f n times and returns the least CPU time a run took,
// the figure least disturbed by other work in the process.
func fastestCPU(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range n {
		start := cpuTime()
		f()
		best = min(best, cpuTime()-start)
	}
	return best
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// linearProviders are the adapters whose streams Parley reads with the
// SDK's stream types (sdkstream.go): all of them.
var linearProviders = []string{"openai", "openai-compatible", "ollama", "openrouter", "anthropic", "google"}

// TestStreamingIsLinear checks the shape of the cost rather than its time:
// the bytes allocated per byte streamed do not grow with the stream. An
// adapter that copies everything before each 16-byte delta (string +=)
// allocates on average half the stream per delta: 16 times more per byte
// for a stream 16 times longer. (Per byte rather than per delta, because
// Gemini sends a call's arguments whole, in one delta.)
func TestStreamingIsLinear(t *testing.T) {
	const small, large = 4 << 10, 64 << 10
	for _, w := range wires {
		if !slices.Contains(linearProviders, w.name) {
			continue
		}
		for _, kind := range []streamKind{kindText, kindArgs} {
			t.Run(w.name+"/"+string(kind), func(t *testing.T) {
				perByte := func(n int) float64 {
					s := newBenchStream(t, w, kind, n)
					s.run(t) // warm up: connection, decoders
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					s.run(t)
					runtime.ReadMemStats(&after)
					return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
				}
				s, l := perByte(small), perByte(large)
				t.Logf("bytes allocated per byte streamed: %.1f (%d KiB), %.1f (%d KiB)", s, small>>10, l, large>>10)
				if l > 3*s {
					t.Errorf("a byte of a %d KiB stream allocates %.1f bytes, %.1f times one of a %d KiB stream (%.1f): the adapter copies what came before",
						large>>10, l, l/s, small>>10, s)
				}
			})
		}
	}
}
