package storage

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"parley/agentcore"
)

// hostileTexts are texts whose JSON is not just the text in quotes.
var hostileTexts = []string{"", "plain", "a \"quoted\" \\ path\n\ttab\r\b\f/", "\x00\x01\x1f\x7f", "bad \xff\xfe utf-8 \xe2\x82",
	"line\u2028sep\u2029", "<b>&amp;</b>", "é ✓ 𝄞", spliceMark + "0\x00", strings.Repeat("word ", 1000)}

// storedJSONs are stored contents as encodeContent and older versions
// wrote them, and by hand: escapes encoding/json does not write, lone
// surrogates, a big string in places that are not spliced back.
func storedJSONs(t testing.TB) [][]byte {
	var out [][]byte
	for _, text := range hostileTexts {
		c := agentcore.Content{Format: 2, Metadata: map[string]any{"k": text}, Parts: []agentcore.Part{
			{Type: "text", Text: text},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "partial-call", ToolCallID: "c1", ToolName: "t", ArgsText: `{"content": "` + text}},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c2", ToolName: "write_file",
				Args: mustJSON(t, map[string]string{"path": "a.go", "content": text, "more": text + "!"}), Result: mustJSON(t, text), Progress: text, ModelOutput: text}},
			{Type: "text", Text: text + "!"},
		}}
		for _, from := range []int{1, 4, spliceFrom} {
			b, err := encodeSpliced(c, from)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		c.Content = "other " + text
		b, _ := json.Marshal(c)
		out = append(out, b)
	}
	return append(out,
		[]byte(`{"format":2,"parts":[{"type":"text","text":"\u00e9\ud834\udd1e\ud800x\udc00\ud800\u0041\/\'"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"\ud800\ud800"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"tab	inside"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"\x"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"\u12"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"unterminated}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"a"}],"long key long key":1}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"\u0000parley-splice-0\u0000"}]}`),
		[]byte(`{"format":2,"parts":[{"type":"text","text":"a\\"},{"type":"text","text":"b\\\""}]}`),
		[]byte(` { "format" : 2 , "parts" : [ { "type" : "text" , "text" : "spaced" } ] } `),
		[]byte(`[]`), []byte(``), []byte(`{"format":2,"parts":[{"type":"text","text":1}]}`),
	)
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Stored content reads back as json.Unmarshal reads it, whatever is
// spliced: the same content, or an error where it errs.
func TestDecodeSplicedAsUnmarshal(t *testing.T) {
	for _, b := range storedJSONs(t) {
		for _, from := range []int{1, 3, 8, 64, spliceFrom} {
			checkDecode(t, b, from)
		}
	}
}

func checkDecode(t *testing.T, b []byte, from int) {
	t.Helper()
	var got, want agentcore.Content
	err := decodeSpliced(b, &got, from)
	werr := json.Unmarshal(b, &want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%.200q from %d: error %v, want %v", b, from, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q from %d:\n%+v\nwant\n%+v", b, from, got, want)
	}
}

func FuzzDecodeSpliced(f *testing.F) {
	for _, b := range storedJSONs(f) {
		f.Add(b, 4)
	}
	f.Fuzz(func(t *testing.T, b []byte, from int) {
		checkDecode(t, b, max(from%128, 1))
	})
}

// A big reply read back costs one copy of its text beside the stored JSON
// it is read from: not encoding/json's two (an unquoted buffer, then the
// string made of it).
func TestDecodeBigReplyOneCopy(t *testing.T) {
	text := strings.Repeat("A line of *markdown*, \"quoted\" & <tagged>.\n", (4<<20)/44)
	b, err := encodeContent(agentcore.TextContent(text))
	if err != nil {
		t.Fatal(err)
	}
	var c agentcore.Content
	allocated := heapAllocated(func() {
		if err := decodeContent(b, &c); err != nil {
			t.Fatal(err)
		}
	})
	if c.Content != text || len(c.Parts) != 1 || c.Parts[0].Text != text {
		t.Fatalf("read back %d bytes, want %d", len(c.Content), len(text))
	}
	if limit := uint64(len(text)) * 5 / 4; allocated > limit {
		t.Errorf("decoding a %d-byte reply allocated %d bytes, want at most %d", len(text), allocated, limit)
	}
}

// heapAllocated is how many bytes f allocates.
func heapAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
