package agentcore_test

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/storage"
)

// The memory of one big reply in the runtime and the store, without the
// server around them (e2e TestBenchReplyMemory measures all of it): a
// reply of 10 MiB, as text or as a tool call's argument, in 16-byte
// deltas, streamed from the scripted model into a real SQLite store. Run
// it with -memprofile to see where the copies come from:
//
//	go test -run '^$' -bench BenchmarkReplyMemory -benchtime 1x -memprofile mem.out ./agentcore/
//
// It reports the process's peak resident memory over its baseline, as a
// multiple of the reply's size (peak-xN).
func BenchmarkReplyMemory(b *testing.B) {
	const size = 10 << 20
	for _, args := range []bool{false, true} {
		name := "text"
		if args {
			name = "args"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				replyMemory(b, size, args)
			}
		})
	}
}

func replyMemory(b *testing.B, size int, args bool) {
	content := strings.Repeat("word and more words\n", size/20)
	model := &pieceModel{text: content}
	tools := map[string]*agentcore.Tool{}
	if args {
		in, _ := json.Marshal(map[string]string{"content": content})
		model = &pieceModel{args: string(in)}
		tools["keep"] = &agentcore.Tool{ID: "keep", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) { return "kept", nil }}
	}
	db, err := storage.Open(b.Context(), filepath.Join(b.TempDir(), "p.db"))
	if err != nil {
		b.Fatal(err)
	}
	agent := &agentcore.Agent{ID: "a", Model: "test/pieces", Tools: tools,
		Models: func(string) (llm.Model, error) { return model, nil }}
	rt := agentcore.NewRuntime(db, nil, agent)
	defer func() { rt.Close(); db.Close() }()
	th, err := rt.CreateThread(b.Context(), agentcore.Thread{ResourceID: "r"})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	// The peak is reset (Linux's clear_refs) to what is resident now: an
	// earlier run's peak would hide this one's.
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	base := vmKiB(b, "VmRSS")
	hwm0 := vmKiB(b, "VmHWM")
	// What Go holds (heap and the rest) is sampled beside the process's
	// resident memory: SQLite's memory (modernc's allocator maps its own)
	// is the difference.
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	goBase := s[0].Value.Uint64() - s[1].Value.Uint64()
	stop, goPeak := make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
		peak := goBase
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				goPeak <- peak
				return
			case <-tick.C:
			}
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64()-s[1].Value.Uint64())
		}
	}()
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	if _, err := rt.Send(b.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		b.Fatal(err)
	}
	for done := false; !done; {
		<-sub.Ready()
		for _, e := range sub.Drain() {
			if e.Terminal() {
				if e.Type != agentcore.EventFinish {
					b.Fatalf("the run ended with %+v", e)
				}
				done = true
			}
		}
	}
	close(stop)
	b.ReportMetric(float64((<-goPeak-goBase)>>10)/float64(size>>10), "go-peak-xN")
	if hwm := vmKiB(b, "VmHWM"); hwm > hwm0 {
		b.ReportMetric(float64(hwm-base)/float64(size>>10), "peak-xN")
	}
	// What is left once the reply is done: Go's garbage collected and
	// returned, as app/memory.go does after a run.
	runtime.GC()
	debug.FreeOSMemory()
	b.ReportMetric(float64(vmKiB(b, "VmRSS")-base)/float64(size>>10), "after-xN")
}

// vmKiB reads a "Vm…" line of this process's /proc status, in KiB (0
// where there is no /proc).
func vmKiB(tb testing.TB, field string) int {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(s)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// pieceModel streams text, or one tool call with args, in 16-byte deltas
// cut from one string (no copy of it lives in the model), then answers
// "kept" to the call's result.
type pieceModel struct {
	text, args string
	calls      int
	piece      int // bytes per delta; 0: 16
}

func (m *pieceModel) Spec() string { return "test/pieces" }

func (m *pieceModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Part, error] {
	m.calls++
	return func(yield func(llm.Part, error) bool) {
		s, typ := m.text, llm.PartTextDelta
		if m.args != "" && m.calls == 1 {
			s, typ = m.args, llm.PartToolInputDelta
			if !yield(llm.Part{Type: llm.PartToolInputStart, ToolCallID: "big", ToolName: "keep"}, nil) {
				return
			}
		} else if m.args != "" {
			s = "kept"
		}
		piece := cmp.Or(m.piece, 16)
		for i := 0; i < len(s); i += piece {
			if !yield(llm.Part{Type: typ, ToolCallID: "big", Text: s[i:min(i+piece, len(s))]}, nil) {
				return
			}
		}
		if typ == llm.PartToolInputDelta {
			if !yield(llm.Part{Type: llm.PartToolInputEnd, ToolCallID: "big"}, nil) ||
				!yield(llm.Part{Type: llm.PartToolCall, ToolCallID: "big", ToolName: "keep", Input: s}, nil) {
				return
			}
		}
		yield(llm.Part{Type: llm.PartFinish, FinishReason: "stop"}, nil)
	}
}
