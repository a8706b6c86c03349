package agentcore

import (
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore/hostile"
)

// hostileIDs are ids an attacker would pick: each breaks out of a
// JavaScript string, an HTML attribute, a script element or a URL path if
// used unescaped.
var hostileIDs = append(hostile.IDs(), "")

func TestValidID(t *testing.T) {
	for _, id := range []string{"a", "t1", "call_abc-DEF_09", "0196b0e3c8d14f7a9e2b5c6d7e8f9a0b", strings.Repeat("x", MaxIDLen), NewID(), NewCallID()} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
	for _, id := range append(hostileIDs, strings.Repeat("x", MaxIDLen+1), "a.b", "a/b", "é", "a\x00") {
		if ValidID(id) {
			t.Errorf("ValidID(%.40q) = true, want false", id)
		}
	}
}

// ReissueIDs clears bad thread and message ids (the store issues new ones),
// replaces bad tool call ids the same way wherever they appear, counts
// each bad id once, keeps good ids, and leaves the caller's parts alone.
func TestReissueIDs(t *testing.T) {
	bad := `c');alert(1);('`
	call := func(id, state string) Part {
		return Part{Type: "tool-invocation", ToolInvocation: &ToolInvocation{State: state, ToolCallID: id, ToolName: "ask_user", Args: json.RawMessage(`{}`)}}
	}
	orig := call(bad, "suspended")
	imp := ThreadImport{Thread: Thread{ID: "t\u2028"}, Messages: []Message{
		{ID: "m1", Role: RoleUser, Content: TextContent("hi")},
		{ID: "m2</script>", Role: RoleAssistant, Content: Content{Format: 2, Parts: []Part{orig, call("good_1", "result")}}},
		{ID: "", Role: RoleAssistant, Content: Content{Format: 2, Parts: []Part{call(bad, "result"), call("", "result")}}},
	}}
	if n := imp.ReissueIDs(); n != 4 { // thread, m2, the bad call id, the empty call id
		t.Fatalf("ReissueIDs replaced %d ids, want 4", n)
	}
	if imp.Thread.ID != "" || imp.Messages[0].ID != "m1" || imp.Messages[1].ID != "" || imp.Messages[2].ID != "" {
		t.Fatalf("ids after ReissueIDs: thread %q, messages %q %q %q", imp.Thread.ID, imp.Messages[0].ID, imp.Messages[1].ID, imp.Messages[2].ID)
	}
	first := imp.Messages[1].Content.Parts[0].ToolInvocation.ToolCallID
	again := imp.Messages[2].Content.Parts[0].ToolInvocation.ToolCallID
	empty := imp.Messages[2].Content.Parts[1].ToolInvocation.ToolCallID
	if !ValidID(first) || !strings.HasPrefix(first, "call_") || first != again {
		t.Fatalf("the bad call id became %q and %q, want one new call_ id", first, again)
	}
	if !ValidID(empty) || empty == first {
		t.Fatalf("the empty call id became %q (the other is %q)", empty, first)
	}
	if got := imp.Messages[1].Content.Parts[1].ToolInvocation.ToolCallID; got != "good_1" {
		t.Fatalf("a valid call id changed to %q", got)
	}
	if orig.ToolInvocation.ToolCallID != bad {
		t.Fatalf("the caller's part was changed to %q", orig.ToolInvocation.ToolCallID)
	}
	if n := imp.ReissueIDs(); n != 0 {
		t.Fatalf("a second ReissueIDs replaced %d ids, want 0", n)
	}
}
