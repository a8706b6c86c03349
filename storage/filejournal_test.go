package storage

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"parley/agentcore"
)

// The journal keeps each content once, stops keeping contents past the
// chat's cap (saying so), and forgets them with the chat.
func TestFileJournalKeepsOnceCapsAndForgets(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	th, err := db.CreateThread(ctx, agentcore.Thread{ResourceID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	same := []byte("the same content")
	for i := range 2 {
		if err := db.RecordFileWrite(ctx, agentcore.FileWrite{ThreadID: th.ID, ToolCallID: fmt.Sprint("c", i), Workspace: "/w", Path: "a.txt", Existed: true, Before: same, AfterHash: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	var blobs int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM file_blobs`).Scan(&blobs); err != nil || blobs != 1 {
		t.Fatalf("one content written twice: %d blobs, %v", blobs, err)
	}

	// Up to the cap, then recorded without the content.
	mib := JournalChatCap >> 20
	var calls []string
	for i := range mib + 1 {
		call := fmt.Sprint("big", i)
		calls = append(calls, call)
		content := bytes.Repeat([]byte{byte('a' + i%26), byte(i)}, 1<<19)
		if err := db.RecordFileWrite(ctx, agentcore.FileWrite{ThreadID: th.ID, ToolCallID: call, Workspace: "/w", Path: fmt.Sprint("f", i), Existed: true, Before: content}); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := db.FileWrites(ctx, th.ID, calls)
	if err != nil || len(ws) != mib+1 {
		t.Fatalf("%d writes, %v", len(ws), err)
	}
	if last := ws[len(ws)-1]; last.BeforeHash != "" || last.Before != nil || !strings.Contains(last.NotKept, "MiB") {
		t.Fatalf("the write past the cap: kept %q, %q", last.BeforeHash, last.NotKept)
	}
	if first := ws[0]; len(first.Before) != 1<<20 || first.BeforeHash != ContentHash(first.Before) {
		t.Fatalf("the first big write was not kept whole: %d bytes", len(first.Before))
	}
	// Hostile ids just find nothing.
	if got, err := db.FileWrites(ctx, th.ID, []string{"'); DROP TABLE file_writes; --"}); err != nil || len(got) != 0 {
		t.Fatalf("a hostile call id: %v %v", got, err)
	}

	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM file_blobs`).Scan(&blobs); err != nil || blobs != 0 {
		t.Fatalf("after the chat was deleted: %d blobs left, %v", blobs, err)
	}
}
