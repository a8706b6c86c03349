package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

// hostile are texts whose JSON is not just the text in quotes: what
// encoding/json escapes (quotes, control characters, HTML, U+2028),
// invalid UTF-8, a marker of the writer's own.
var hostile = []string{"", "plain", "a \"quoted\" \\ path\n\ttab\r\b\f/", "\x00\x01\x1f\x7f", "bad \xff\xfe utf-8 \xe2\x82",
	"line\u2028sep\u2029", "<b>&amp;</b> <script>", "é ✓ 𝄞", apiMark + "0\x00", apiQuotedMark + `0\u0000"`}

// bigText is a text of about n bytes whose characters, valid and not,
// straddle every cut of writeQuotedHTML.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(hostile[i%len(hostile)])
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString("\x80\x80\x80\x80\x80 \xf0\x9d\x84 \xe2\x80\xa8 ")
	}
	return b.String()
}

// testMessages are a thread's messages as the API lists them: a big
// reply, tool calls with big arguments (spaced, HTML, U+2028) and a big
// result, hostile texts, markers of their own.
func testMessages(t testing.TB) []apiMessage {
	at := time.Date(2026, 12, 2, 15, 4, 5, 6e6, time.UTC)
	msg := func(id string, role agentcore.Role, c agentcore.Content) apiMessage {
		c = withStatus(c, "complete")
		return apiMessage{agentcore.Message{ID: id, ThreadID: "t1", ResourceID: "r<1>", Role: role, Content: c, CreatedAt: at, ParentID: "p-" + id}, "v2", "complete"}
	}
	big := bigText(3*apiWriteChunk + 17)
	args, _ := json.Marshal(map[string]string{"path": "big.go", "content": big})
	spaced := []byte(" {\n\t\"path\" : \"a<b>&c\u2028\u2029\" ,\r\n \"n\" : [ 1 , 2.5e3 , true , null , \"\\\" \\\\ \\u0041\" ] , \"content\" : " +
		string(mustMarshal(t, big)) + " } ")
	spaced = append(spaced, bytes.Repeat([]byte(" "), apiSpliceFrom)...)
	out := []apiMessage{
		msg("m1", agentcore.RoleUser, agentcore.TextContent("write it")),
		msg("m2", agentcore.RoleAssistant, agentcore.TextContent(big)),
		msg("m3", agentcore.RoleAssistant, agentcore.Content{Format: 2, Content: big + "!", Parts: []agentcore.Part{
			{Type: "text", Text: big},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c1", ToolName: "write_file", Args: args, Result: mustMarshal(t, big)}},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c2", ToolName: "write_file", Args: spaced,
				Progress: big, ModelOutput: big}},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "partial-call", ToolCallID: "c3", ToolName: "write_file", ArgsText: `{"content": "` + big}},
			{Type: "text", Text: apiMark + "1\x00"},
		}}),
	}
	for i, h := range hostile {
		c := agentcore.TextContent(h)
		c.Metadata = map[string]any{"note": h}
		m := msg("h"+string(rune('a'+i)), agentcore.RoleAssistant, c)
		m.Type = h
		out = append(out, m)
	}
	// A big text beside a marker of its own, in metadata.
	c := agentcore.TextContent(big)
	c.Metadata = map[string]any{"own": apiMark + "0\x00"}
	return append(out, msg("own", agentcore.RoleAssistant, c))
}

func mustMarshal(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The messages API's body, written message by message, is byte for byte
// what encoding/json wrote of the whole list: for the active branch and
// the tree, for every page shape.
func TestMessageListAsEncoder(t *testing.T) {
	msgs := testMessages(t)
	for _, p := range []page{{Total: len(msgs), PerPage: 40}, {Total: 99, Page: 2, PerPage: false, HasMore: true}} {
		for _, tree := range []bool{false, true} {
			list := messageList{page: p}
			var want bytes.Buffer
			if tree {
				var nodes []apiTreeMessage
				for i := range msgs {
					n := apiTreeMessage{apiMessage: msgs[i], Active: i%2 == 0}
					if i > 0 {
						n.ParentID = &msgs[i].ParentID
					}
					nodes = append(nodes, n)
					list.msgs = append(list.msgs, &n)
				}
				json.NewEncoder(&want).Encode(struct {
					Messages   []apiTreeMessage `json:"messages"`
					UIMessages []any            `json:"uiMessages"`
					page
				}{nodes, nil, p})
			} else {
				for i := range msgs {
					m := msgs[i]
					list.msgs = append(list.msgs, &m)
				}
				json.NewEncoder(&want).Encode(struct {
					Messages   []apiMessage `json:"messages"`
					UIMessages []any        `json:"uiMessages"`
					page
				}{msgs, nil, p})
			}
			var got bytes.Buffer
			if err := list.writeJSON(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				i := 0
				for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
					i++
				}
				t.Fatalf("tree %v, page %+v: differs at byte %d of %d (want %d):\n%.300q\nwant\n%.300q",
					tree, p, i, got.Len(), want.Len(), got.Bytes()[i:], want.Bytes()[i:])
			}
		}
	}
	// An empty list.
	var got bytes.Buffer
	messageList{msgs: []contentMessage{}, page: page{PerPage: 40}}.writeJSON(&got)
	if want := `{"messages":[],"uiMessages":null,"total":0,"page":0,"perPage":40,"hasMore":false}` + "\n"; got.String() != want {
		t.Errorf("empty list: %s, want %s", got.String(), want)
	}
}

// Whatever is big, a message is written as json.Marshal writes it.
func TestWriteMessageSplices(t *testing.T) {
	for _, m := range testMessages(t) {
		for _, from := range []int{1, 2, 7, 64, apiSpliceFrom} {
			checkWriteMessage(t, &m, from)
		}
	}
}

func checkWriteMessage(t *testing.T, m *apiMessage, from int) {
	t.Helper()
	want, werr := json.Marshal(m)
	var got bytes.Buffer
	w := bufio.NewWriter(&got)
	err := writeMessage(w, m, from)
	w.Flush()
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s from %d: error %v, want %v", m.ID, from, err, werr)
	}
	if err == nil && !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s from %d:\n%.400q\nwant\n%.400q", m.ID, from, got.Bytes(), want)
	}
}

func FuzzWriteMessage(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, []byte(`{"a": [1, "<`+h+`>"]}`), 3)
	}
	f.Fuzz(func(t *testing.T, text string, args []byte, from int) {
		m := apiMessage{Message: agentcore.Message{ID: "m", Content: agentcore.Content{Format: 2, Content: text, Parts: []agentcore.Part{
			{Type: "text", Text: text},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: text, ToolName: "t", Args: args, ArgsText: text}},
		}}}}
		checkWriteMessage(t, &m, max(from%64, 1))
	})
}

// A big reply is written without being encoded whole: what is allocated
// is a small part of its size (it is written twice, as the text part and
// as content.content).
func TestWriteBigReplySmallBuffers(t *testing.T) {
	text := strings.Repeat("A line of *markdown*, \"quoted\" & <tagged>.\n", (4<<20)/44)
	m := apiMessage{agentcore.Message{ID: "m", Content: withStatus(agentcore.TextContent(text), "complete")}, "v2", "complete"}
	list := messageList{msgs: []contentMessage{&m}, page: page{PerPage: 40}}
	var n countingWriter
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := list.writeJSON(&n); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if int(n) < 2*len(text) {
		t.Fatalf("wrote %d bytes", n)
	}
	if allocated, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(text))/8; allocated > limit {
		t.Errorf("writing a %d-byte reply allocated %d bytes, want at most %d", len(text), allocated, limit)
	}
}

type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// appendQuotedHTML is encoding/json's string quoting, byte for byte.
func TestAppendQuotedHTMLAsMarshal(t *testing.T) {
	var all strings.Builder
	for b := range 256 {
		all.WriteByte(byte(b))
	}
	for _, s := range []string{"", "plain", all.String(), "\u2028\u2029 line seps", "<script>&'\"\\", "\x7f del", "café ☕ 𝄞",
		"\xff\xfe broken \xc3", "\xe2\x80", "tab\tnl\ncr\rbs\bff\f"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendQuotedHTML([]byte{'"'}, s); string(append(got, '"')) != string(want) {
			t.Errorf("%q: got %s, want %s", s, append(got, '"'), want)
		}
	}
}
