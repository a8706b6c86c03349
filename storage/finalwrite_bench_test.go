package storage

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"parley/agentcore"
)

// vmKiB reads a "Vm…" line of this process's /proc status, in KiB; false
// where there is no /proc (the figure is Linux's).
func vmKiB(t *testing.T, field string) (int, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n, true
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0, false
}

// The final write of a long reply fills its usage columns and its search
// entry (the triggers of 0006, 0005 and 0010); with -bench-figures, for a
// 10 MiB reply, it prints how much the process's peak memory grew by that
// one write (0010 parses the reply's JSON once for its usage, not eight
// times: 360 -> 235 MB on the machine of its note).
func TestBenchFinalWrite(t *testing.T) {
	size := 256 << 10
	if *benchFigures {
		size = 10 << 20
	}
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	c := agentcore.TextContent(strings.Repeat("word and more words ", size/20))
	c.Metadata = map[string]any{"model": "openai/gpt-5", "usage": map[string]any{"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: c, Status: agentcore.StatusStreaming})
	runtime.GC()
	debug.FreeOSMemory()
	// The peak is reset (Linux's clear_refs) to what is resident now: the
	// setup's own peak would hide a write that stays below it.
	measured := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	before, _ := vmKiB(t, "VmRSS")
	if err := db.UpdateMessage(t.Context(), m.ID, c, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if after, _ := vmKiB(t, "VmHWM"); *benchFigures && measured {
		fmt.Printf("BENCH storage_final_write_10MiB_peak_growth %d MiB\n", (after-before)>>10)
	}
	u, err := db.ThreadUsage(t.Context(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.ByModel["openai/gpt-5"]; u.Replies != 1 || got.InputTokens != 3 || got.OutputTokens != 4 || got.TotalTokens != 7 {
		t.Fatalf("usage after the final write: %+v", u)
	}
	if ids := search(t, db, "words"); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("search after the final write: %v", ids)
	}
}
