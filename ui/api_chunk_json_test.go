package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// A stream chunk is written as the line encoding/json made of it, whatever
// its arguments and result hold: spaced JSON, HTML, U+2028, invalid
// UTF-8, markers of their own; a chunk that cannot be encoded is not
// written.
func TestWriteChunkAsMarshal(t *testing.T) {
	big := bigText(3*apiWriteChunk + 5)
	args := mustMarshal(t, map[string]string{"path": "big.go", "content": big})
	spaced := json.RawMessage(" {\n\t\"path\" : \"a<b>&c\u2028\" , \"content\" : " + string(mustMarshal(t, big)) + " } ")
	own := mustMarshal(t, map[string]string{"content": big, "mark": apiMark + "0\x00"})
	chunks := []chunk{
		{Type: "text-delta", RunID: "r1", From: "AGENT", Payload: map[string]string{"id": "m1", "text": "<b>" + big}},
		{Type: "tool-call", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": "c1", "toolName": "write_file", "args": args}},
		{Type: "tool-result", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": "c1", "toolName": "write_file",
			"result": mustMarshal(t, big), "args": spaced, "isError": true}},
		{Type: "tool-call", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": apiMark + "1\x00", "args": args, "more": own}},
		{Type: "tool-call", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": "c2", "args": json.RawMessage(`{"small": "<"}`)}},
		{Type: "tool-call", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": "c3", "args": json.RawMessage(`{"bad` + big)}},
		{Type: "data-signal", RunID: "r1", From: "AGENT", Data: map[string]any{"x": args}, Transient: true},
	}
	for _, from := range []int{1, 9, apiSpliceFrom} {
		for _, c := range chunks {
			data, werr := json.Marshal(c)
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			err := writeChunk(w, c, from)
			w.Flush()
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s from %d: error %v, want %v", c.Type, from, err, werr)
			}
			want := "data: " + string(data) + "\n\n"
			if werr != nil {
				want = ""
			}
			if got.String() != want {
				t.Fatalf("%s from %d:\n%.300q\nwant\n%.300q", c.Type, from, got.String(), want)
			}
		}
	}
}

// A tool call's big arguments are written without being encoded whole.
func TestWriteBigChunkSmallBuffers(t *testing.T) {
	content := strings.Repeat("func main() { fmt.Println(\"<hello>\") }\n", (4<<20)/40)
	args := mustMarshal(t, map[string]string{"path": "big.go", "content": content})
	c := chunk{Type: "tool-result", RunID: "r1", From: "AGENT", Payload: map[string]any{"toolCallId": "c1", "toolName": "write_file", "result": json.RawMessage(`"ok"`), "args": args}}
	var n countingWriter
	w := bufio.NewWriterSize(&n, apiWriteChunk)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := writeChunk(w, c, apiSpliceFrom); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	runtime.ReadMemStats(&after)
	if int(n) < len(args) {
		t.Fatalf("wrote %d bytes", n)
	}
	if allocated, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(args))/8; allocated > limit {
		t.Errorf("writing %d bytes of arguments allocated %d bytes, want at most %d", len(args), allocated, limit)
	}
}
