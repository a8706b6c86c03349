package storage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"parley/agentcore"
)

// Spliced JSON reads back as encoding/json's does, whatever the texts hold:
// quotes, control characters, invalid UTF-8, U+2028, HTML, a marker of its
// own.
func TestEncodeSpliced(t *testing.T) {
	texts := []string{"", "plain", "a \"quoted\" \\ path\n\ttab\r", "\x00\x01\x1f\x7f", "bad \xff\xfe utf-8 \xe2\x82", "line\u2028sep\u2029", "<b>&amp;</b>",
		"é ✓ 𝄞", spliceMark + "0\x00", strings.Repeat("word ", 1000)}
	for _, text := range texts {
		for _, from := range []int{1, 4, spliceFrom} {
			c := agentcore.Content{Format: 2, Content: "other", Parts: []agentcore.Part{
				{Type: "text", Text: text},
				{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "partial-call", ToolCallID: "c1", ToolName: "t", ArgsText: `{"content": "` + text}},
				{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: "c2", ToolName: "t", Args: json.RawMessage(` {"content" : 1, "x": [1, 2]} `)}},
				{Type: "text", Text: text + "!"},
			}}
			got, err := encodeSpliced(c, from)
			want, werr := json.Marshal(c)
			if err != nil || werr != nil {
				t.Fatalf("%q from %d: %v, %v", text, from, err, werr)
			}
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("%q from %d: %s is not JSON: %v", text, from, got, err)
			}
			json.Unmarshal(want, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%q from %d:\n%s\nwant\n%s", text, from, got, want)
			}
		}
	}
}

// Arguments that are not JSON fail as encoding/json fails them.
func TestEncodeSplicedBadArgs(t *testing.T) {
	c := agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: "a text"},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: "c3", ToolName: "t", Args: json.RawMessage(`{bad json`)}}}}
	if _, err := encodeSpliced(c, 1); err == nil {
		t.Fatal("invalid arguments encoded")
	}
}

// A short text that looks like a marker is encoded as it is, beside a
// spliced one.
func TestEncodeSplicedOwnMarker(t *testing.T) {
	big := strings.Repeat("long ", 100)
	for _, own := range []string{spliceMark + "0\x00", spliceMark + "1\x00", spliceMark} {
		c := agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: own}, {Type: "text", Text: big},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: own, ToolName: own}}}}
		got, err := encodeSpliced(c, len(big))
		if err != nil {
			t.Fatal(err)
		}
		var back agentcore.Content
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back.Parts, c.Parts) {
			t.Errorf("%q: read back %+v, %v", own, back.Parts, err)
		}
	}
}
