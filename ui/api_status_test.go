package ui_test

import (
	"testing"

	"parley/agentcore"
)

// The messages API says how each reply ended, beside Mastra's fields (its
// clients ignore what they do not know): a reply cut by a crash, one the
// user stopped and one the provider failed are told from a whole one.
func TestAPIMessagesCarryStatus(t *testing.T) {
	e := newAPIEnv(t)
	th, err := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default", Title: "Statuses"})
	if err != nil {
		t.Fatal(err)
	}
	seed := []struct {
		status agentcore.MessageStatus
		meta   map[string]any
		want   string
	}{
		{agentcore.StatusComplete, nil, "complete"},
		{agentcore.StatusInterrupted, nil, "interrupted"},
		{agentcore.StatusInterrupted, map[string]any{"stopped": "user"}, "stopped"},
		{agentcore.StatusError, map[string]any{"error": "openai: 500 Internal Server Error"}, "failed"},
		{agentcore.StatusStreaming, nil, "interrupted"}, // stored as streaming, and no run writes it
	}
	for _, s := range seed {
		c := agentcore.TextContent("a reply")
		c.Metadata = s.meta
		if _, err := e.db.AppendMessage(t.Context(), agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: c, Status: s.status}); err != nil {
			t.Fatal(err)
		}
	}
	got := e.call("GET", "/api/memory/threads/"+th.ID+"/messages?resourceId=default", "", 200)
	msgs := got["messages"].([]any)
	if len(msgs) != len(seed) {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		m := m.(map[string]any)
		meta, _ := m["content"].(map[string]any)["metadata"].(map[string]any)
		if m["status"] != seed[i].want || meta["status"] != seed[i].want {
			t.Errorf("message %d: status %v, content.metadata.status %v, want %s", i, m["status"], meta["status"], seed[i].want)
		}
	}
}
