package chat

import (
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/toolkit"
)

// A chat's thinking level lives in its metadata under "thinking"; an odd
// stored value reads as the model's default; Prepare hands it to the run.
func TestThinkingSetting(t *testing.T) {
	meta := map[string]any{}
	encode(meta, Settings{}, Settings{Thinking: llm.ThinkingHigh})
	if meta[keyThinking] != "high" {
		t.Fatalf("stored %v", meta)
	}
	if got := decode(meta).Thinking; got != llm.ThinkingHigh {
		t.Fatalf("read back %q", got)
	}
	encode(meta, Settings{Thinking: llm.ThinkingHigh}, Settings{})
	if _, ok := meta[keyThinking]; ok {
		t.Fatalf("the default is stored: %v", meta)
	}
	for _, odd := range []any{"extreme", 3.0, true, map[string]any{}} {
		if got := decode(map[string]any{keyThinking: odd}).Thinking; got != llm.ThinkingDefault {
			t.Errorf("%v reads as %q", odd, got)
		}
	}
	if err := (&Chats{}).SetThinking(t.Context(), "t", "extreme"); err == nil {
		t.Error("an unknown level was accepted")
	}

	agent := &agentcore.Agent{ID: "a"}
	var opts agentcore.StreamOptions
	Prepare(agent, testWorkspaces(t))(agentcore.Thread{ID: "t", Metadata: map[string]any{keyThinking: "low"}}, &opts)
	if opts.Thinking != llm.ThinkingLow {
		t.Errorf("the run's thinking is %q", opts.Thinking)
	}
}

func testWorkspaces(t *testing.T) *toolkit.Workspaces {
	ws, err := toolkit.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &toolkit.Workspaces{Default: ws}
}
