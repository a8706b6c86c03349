package chat

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/storage"
)

func TestApprovalGate(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	th, _ := db.CreateThread(ctx, agentcore.Thread{})
	yolo, _ := db.CreateThread(ctx, agentcore.Thread{Metadata: map[string]any{"yolo": true}})
	cats := map[string]string{"view": "read", "edit_file": "edit", "execute_command": "execute", "web_fetch": "web"}
	g := NewGate(db, "/w", func(n string) string { return cats[n] }, nil)
	call := func(thread, tool, input string, approval *agentcore.ApprovalDecision) *agentcore.ToolDecision {
		t.Helper()
		d, err := g.Before(ctx, agentcore.ToolCallInfo{ToolName: tool, Input: json.RawMessage(input), Approval: approval,
			Context: &agentcore.ToolContext{ThreadID: thread}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	asks := func(d *agentcore.ToolDecision) bool { return d != nil && d.RequireApproval }

	if d := call(th.ID, "view", `{}`, nil); d != nil {
		t.Fatalf("read asked: %+v", d)
	}
	if d := call(th.ID, "edit_file", `{}`, nil); !asks(d) || d.ApprovalPayload.(approvalRequest).Category != "edit" {
		t.Fatalf("edit did not ask: %+v", d)
	}
	if d := call(yolo.ID, "edit_file", `{}`, nil); d != nil {
		t.Fatalf("YOLO thread asked: %+v", d)
	}
	if d := call(th.ID, "edit_file", `{}`, &agentcore.ApprovalDecision{Decision: "deny", Reason: "not that file"}); d == nil || !strings.Contains(d.Error, "Their reason: not that file") {
		t.Fatalf("deny: %+v", d)
	}
	if d := call(th.ID, "edit_file", `{}`, &agentcore.ApprovalDecision{Decision: "allow"}); d != nil {
		t.Fatalf("allow once: %+v", d)
	}
	if !asks(call(th.ID, "edit_file", `{}`, nil)) {
		t.Fatal("allow once was remembered")
	}
	call(th.ID, "edit_file", `{}`, &agentcore.ApprovalDecision{Decision: "always"})
	if d := call(th.ID, "edit_file", `{}`, nil); d != nil {
		t.Fatalf("always allow was not remembered: %+v", d)
	}
	// Commands: remembered per prefix; chained commands always ask.
	call(th.ID, "execute_command", `{"command":"go test ./..."}`, &agentcore.ApprovalDecision{Decision: "always"})
	if d := call(th.ID, "execute_command", `{"command":"go test -run X ./ui"}`, nil); d != nil {
		t.Fatalf("same prefix asked: %+v", d)
	}
	for _, cmd := range []string{`go build .`, `go test ./... && rm -rf ~`, `go test $(evil)`} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if !asks(call(th.ID, "execute_command", string(in), nil)) {
			t.Errorf("%q was let through", cmd)
		}
	}
	// A deny policy refuses without asking.
	raw, _ := json.Marshal(Approvals{Policies: map[string]string{"web": PolicyDeny}})
	_ = db.SetSetting(ctx, approvalsKey, raw)
	if d := call(th.ID, "web_fetch", `{}`, nil); d == nil || d.RequireApproval || !strings.Contains(d.Error, "turned off") {
		t.Fatalf("deny policy: %+v", d)
	}
}
