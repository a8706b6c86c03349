package storage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"parley/agentcore"
)

// A write past the database's room fails as agentcore.ErrDiskFull with
// SQLite's own message; MarkMessage still lands (it rewrites no content);
// once room is back, everything writes again.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	reply := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Content: agentcore.TextContent("the first 8 KB"), Status: agentcore.StatusStreaming})

	if err := db.LimitPages(ctx, 2); err != nil {
		t.Fatal(err)
	}
	big := agentcore.TextContent(strings.Repeat("a long reply ", 20_000)) // 260 KB: 60+ pages
	err := db.UpdateMessage(ctx, reply.ID, big, agentcore.StatusStreaming)
	if !errors.Is(err, agentcore.ErrDiskFull) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("update past the limit: %v, want ErrDiskFull", err)
	}
	_, err = db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: big})
	if !errors.Is(err, agentcore.ErrDiskFull) {
		t.Fatalf("append past the limit: %v, want ErrDiskFull", err)
	}

	mark := map[string]string{"error": "the disk is full: the reply could not be saved", "failure": "store", `it's "odd"`: "ok"}
	if err := db.MarkMessage(ctx, reply.ID, agentcore.StatusError, mark); err != nil {
		t.Fatalf("mark with the disk full: %v", err)
	}
	got, err := db.GetMessage(ctx, reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != agentcore.StatusError || got.Content.Text() != "the first 8 KB" ||
		got.Content.Metadata["error"] != mark["error"] || got.Content.Metadata["failure"] != "store" || got.Content.Metadata[`it's "odd"`] != "ok" {
		t.Fatalf("marked message: %s %q %v", got.Status, got.Content.Text(), got.Content.Metadata)
	}

	if err := db.LimitPages(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateMessage(ctx, reply.ID, big, agentcore.StatusComplete); err != nil {
		t.Fatalf("update once room is back: %v", err)
	}
	if err := db.MarkMessage(ctx, "no-such-id", agentcore.StatusError, nil); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("mark an unknown message: %v", err)
	}
}
