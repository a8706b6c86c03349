//go:build unix

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// TestStopAnswersWithinASecondWhileAToolBlocks: with a FIFO for .gitignore
// and a command blocked in sleep (one of whose processes left the group and
// holds the output open), Stop on the real runtime answers within 1 s, and
// the chat takes the next message.
func TestStopAnswersWithinASecondWhileAToolBlocks(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	in, err := Open(t.Context(), Config{DataDir: dir, Workspace: root, Model: DemoModel, Getenv: func(string) string { return "" }},
		Options{Scripted: model, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	rt := in.Runtime
	// YOLO: the command runs without asking, as the user allowed.
	th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r", Metadata: map[string]any{"yolo": true}})
	if err != nil {
		t.Fatal(err)
	}
	command := `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & sleep 60`
	model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{
		{ID: "find", Name: "find_files", Args: `{}`},
		{ID: "search", Name: "search_content", Args: `{"pattern":"x"}`},
		{ID: "sleep", Name: "execute_command", Args: `{"command":` + strconv.Quote(command) + `}`},
	}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(root, "escaped.pid")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
	}
	time.Sleep(100 * time.Millisecond) // into the sleep

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if !rt.Stop(ctx, th.ID) {
		t.Fatal("Stop found no run")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Stop answered after %v, want within 1 s", took)
	}
	if _, live := rt.Live(th.ID); live {
		t.Fatal("the chat still has a live run after Stop")
	}

	// The FIFO .gitignore was refused, not waited on.
	ms, err := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range ms {
		for _, p := range m.Content.Parts {
			if ti := p.ToolInvocation; ti != nil && ti.Result != nil {
				results = append(results, ti.ToolName+": "+string(ti.Result))
			}
		}
	}
	for _, r := range results {
		if name, _, _ := strings.Cut(r, ": "); name != "execute_command" && !strings.Contains(r, ".gitignore") {
			t.Errorf("%s's result does not name the .gitignore: %s", name, r)
		}
	}
	if len(results) < 2 {
		t.Errorf("want the results of find_files and search_content, got:\n%s", strings.Join(results, "\n"))
	}

	// The chat is usable: the next message gets its answer.
	model.Push(scripted.Reply{Text: "still here"})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "again"}); err != nil {
		t.Fatalf("send after Stop: %v", err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
}
