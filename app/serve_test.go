package app

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A taken port is named, with the flag that chooses another, instead of
// the system's bare "address already in use".
func TestTakenPortNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Main([]string{"serve", "--demo", "--addr", addr, "--data", dir, "--workspace", dir}, &out, &errb)
	msg := errb.String()
	if code != 1 {
		t.Fatalf("serve on a taken port: exit %d, stderr %q", code, msg)
	}
	for _, want := range []string{addr, "already in use", "--addr", `make run ARGS="--addr `} {
		if !strings.Contains(msg, want) {
			t.Errorf("serve on a taken port says %q; want it to contain %q", msg, want)
		}
	}
	if strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("serve on a taken port says more than one line: %q", msg)
	}
	if out.Len() != 0 {
		t.Errorf("serve on a taken port printed %q", out.String())
	}
}

// At start, serve says where the agent works and where the data is kept,
// beside the address.
func TestServeSaysWhereItWorks(t *testing.T) {
	data, work := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--demo", "--addr", "127.0.0.1:0", "--data", data, "--workspace", work}, out, &syncBuffer{})
	}()
	deadline := time.After(processWait)
	for !strings.Contains(out.String(), "Data folder") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve ended: %v; printed %q", err, out.String())
		case <-deadline:
			cancel()
			t.Fatalf("serve did not print its folders within %s: %q", processWait, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve on cancel: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("serve printed %q; want the address, the workspace and the data folder", out.String())
	}
	if !strings.HasPrefix(lines[0], "Parley is running at http://127.0.0.1:") {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "Workspace") || !strings.Contains(lines[1], work) || !strings.Contains(lines[1], "--workspace") {
		t.Errorf("workspace line %q; want it to name %s and --workspace", lines[1], work)
	}
	if !strings.HasPrefix(lines[2], "Data folder") || !strings.Contains(lines[2], data) || !strings.Contains(lines[2], "--data") {
		t.Errorf("data line %q; want it to name %s and --data", lines[2], data)
	}
}
