package storage

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"parley/agentcore"
)

// bigReply is a reply whose JSON is past offHeapFrom: a long text and a
// call with long arguments, each ending in a word found nowhere else.
func bigReply(size int) agentcore.Content {
	text := strings.Repeat("word and \"more\" words\n", size/22) + "zebrafinch"
	args, _ := json.Marshal(map[string]string{"content": strings.Repeat("code\t", size/5) + "okapi"})
	c := agentcore.TextContent(text)
	c.Parts = append(c.Parts, agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
		State: "call", ToolCallID: "call_1", ToolName: "write_file", Args: args}})
	c.Metadata = map[string]any{"model": "openai/gpt-5"}
	return c
}

// A big reply's JSON made for a write outside the heap is the JSON
// encodeContent makes, and releasing it twice is harmless.
func TestEncodeForWrite(t *testing.T) {
	for _, c := range []agentcore.Content{agentcore.TextContent("short"), bigReply(offHeapFrom), bigReply(3 * offHeapFrom)} {
		want, err := encodeContent(c)
		if err != nil {
			t.Fatal(err)
		}
		got, release, err := encodeForWrite(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encodeForWrite of %d bytes differs from encodeContent", len(want))
		}
		release()
		release()
	}
}

// A big reply written while it streams and then finally reads back whole
// each time, and is found by the last word of its text; a streaming write
// of it does not put its JSON in Go's heap.
func TestUpdateBigReply(t *testing.T) {
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{}}, Status: agentcore.StatusStreaming})
	c := bigReply(4 << 20)
	check := func(status agentcore.MessageStatus) {
		t.Helper()
		got, err := db.GetMessage(t.Context(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != status || got.Content.Text() != c.Text() || len(got.Content.Parts) != 2 ||
			!bytes.Equal(got.Content.Parts[1].ToolInvocation.Args, c.Parts[1].ToolInvocation.Args) {
			t.Fatalf("read back after a %s write: status %s, %d parts, text %d bytes (want %d)",
				status, got.Status, len(got.Content.Parts), len(got.Content.Text()), len(c.Text()))
		}
	}
	least := uint64(1 << 62)
	for range 3 {
		runtime.GC()
		before := heapAllocs()
		if err := db.UpdateMessage(t.Context(), m.ID, c, agentcore.StatusStreaming); err != nil {
			t.Fatal(err)
		}
		least = min(least, heapAllocs()-before)
		check(agentcore.StatusStreaming)
	}
	if mapBytesOffHeap && least > 1<<20 {
		t.Errorf("a streaming write of a %d-byte reply allocated %d bytes in the heap", len(c.Text()), least)
	}
	if err := db.UpdateMessage(t.Context(), m.ID, c, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	check(agentcore.StatusComplete)
	if ids := search(t, db, "zebrafinch"); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("search for the text's last word: %v", ids)
	}
}

// heapAllocs is how many bytes the process has allocated in Go's heap.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
