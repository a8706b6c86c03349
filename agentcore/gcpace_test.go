package agentcore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/storage"
)

// gogc is the collector's GOGC now.
func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// While a big reply streams (text or a call's arguments) the collector
// runs tighter, so the heap does not grow to twice what is live; it is
// put back when the run ends, and a short reply leaves it alone.
func TestBigReplyTightensTheCollector(t *testing.T) {
	before := gogc()
	for _, c := range []struct {
		name  string
		size  int
		args  bool
		tight bool
	}{
		{"short text", 64 << 10, false, false},
		{"big text", 3 << 20, false, true},
		{"big arguments", 3 << 20, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			content := strings.Repeat("word and more words\n", c.size/20)
			model := &pieceModel{text: content, piece: 4 << 10}
			tools := map[string]*agentcore.Tool{}
			if c.args {
				in, _ := json.Marshal(map[string]string{"content": content})
				model = &pieceModel{args: string(in), piece: 4 << 10}
				tools["keep"] = &agentcore.Tool{ID: "keep", InputSchema: json.RawMessage(`{"type":"object"}`),
					Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) { return "kept", nil }}
			}
			db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
			if err != nil {
				t.Fatal(err)
			}
			agent := &agentcore.Agent{ID: "a", Model: "test/pieces", Tools: tools,
				Models: func(string) (llm.Model, error) { return model, nil }}
			rt := agentcore.NewRuntime(db, nil, agent)
			defer func() { rt.Close(); db.Close() }()
			th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r"})
			if err != nil {
				t.Fatal(err)
			}
			sub := rt.Subscribe(th.ID)
			defer sub.Close()
			if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
				t.Fatal(err)
			}
			streamed, tight := 0, false
			for done := false; !done; {
				<-sub.Ready()
				for _, e := range sub.Drain() {
					switch {
					case e.Type == agentcore.EventTextDelta || e.Type == agentcore.EventToolCallDelta:
						// A delta is published after the runtime has counted it.
						if streamed += len(e.Text); streamed >= 3<<20-64<<10 && gogc() == 25 {
							tight = true
						}
					case e.Terminal():
						if e.Type != agentcore.EventFinish {
							t.Fatalf("the run ended with %+v", e)
						}
						done = true
					}
				}
			}
			rt.Close() // the run's goroutine has ended
			if tight != c.tight {
				t.Errorf("GOGC was 25 while %d bytes streamed: %v, want %v", streamed, tight, c.tight)
			}
			if got := gogc(); got != before {
				t.Errorf("GOGC is %d after the run, want %d as before", got, before)
			}
		})
	}
}
