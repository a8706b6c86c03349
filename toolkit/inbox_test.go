package toolkit_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/storage"
	"parley/toolkit"
)

func TestNotificationInboxTool(t *testing.T) {
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	agent := &agentcore.Agent{ID: "a", Model: "none/none", DeliveryPolicy: &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}}
	rt := agentcore.NewRuntime(db, nil, agent)
	defer rt.Close()
	th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "build", Summary: "Build 12 failed on main", Priority: agentcore.PriorityHigh}, agentcore.NotifyTarget{ThreadID: th.ID})
	rt.Notify(t.Context(), agentcore.NotificationInput{Source: "github", Kind: "review", Summary: "Ana approved PR 7"}, agentcore.NotifyTarget{ThreadID: th.ID})
	tool := toolkit.NotificationInboxTool(rt)
	call := func(in string) (any, error) {
		t.Helper()
		return tool.Execute(t.Context(), json.RawMessage(in), &agentcore.ToolContext{ThreadID: th.ID})
	}
	out, err := call(`{"action":"list"}`)
	if err != nil || len(out.(map[string]any)["notifications"].([]agentcore.Notification)) != 2 {
		t.Fatalf("list: %v %v", out, err)
	}
	out, err = call(`{"action":"search","query":"BUILD 12"}`)
	if list := out.(map[string]any)["notifications"].([]agentcore.Notification); err != nil || len(list) != 1 || list[0].ID != first.Record.ID {
		t.Fatalf("search: %v %v", out, err)
	}
	out, err = call(`{"action":"list","priority":"high","source":"ci"}`)
	if list := out.(map[string]any)["notifications"].([]agentcore.Notification); err != nil || len(list) != 1 {
		t.Fatalf("filtered list: %v %v", out, err)
	}
	res, err := call(`{"action":"read","id":"` + first.Record.ID + `"}`)
	if err != nil || res.(agentcore.ReadResult).Message != "1 notification(s) will now be delivered." {
		t.Fatalf("read: %+v %v", res, err)
	}
	out, err = call(`{"action":"archive","id":"` + first.Record.ID + `"}`)
	if err != nil || out.(map[string]any)["notification"].(agentcore.Notification).Status != agentcore.NoteArchived {
		t.Fatalf("archive: %v %v", out, err)
	}
	for in, want := range map[string]string{
		`{"action":"search"}`:              "notification-inbox search requires query",
		`{"action":"dismiss"}`:             "notification-inbox dismiss requires id",
		`{"action":"markSeen"}`:            "notification-inbox markSeen requires id",
		`{"action":"read","id":"missing"}`: "Notification missing was not found for thread " + th.ID,
	} {
		if _, err := call(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if _, err := tool.Execute(t.Context(), json.RawMessage(`{"action":"list"}`), &agentcore.ToolContext{}); err == nil || err.Error() != "notification-inbox requires a threadId" {
		t.Fatalf("no thread: %v", err)
	}
}
