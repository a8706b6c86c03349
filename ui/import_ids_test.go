package ui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/hostile"
)

// hostileIDs are ids an attacker would put in a shared file: each breaks
// out of a JavaScript string, an HTML attribute, a script element or a URL
// path if used unescaped.
var hostileIDs = hostile.IDs()

// hostileExport is a Parley export whose thread id, message ids and tool
// call id are bad.
func hostileExport(t *testing.T, bad string) []byte {
	t.Helper()
	msg := func(id, role string, parts ...any) map[string]any {
		return map[string]any{"id": id, "threadId": bad, "resourceId": "default", "role": role,
			"content": map[string]any{"format": 2, "parts": parts}, "createdAt": "2025-03-04T10:00:00Z"}
	}
	f := map[string]any{"format": "parley.thread", "version": 1, "exportedAt": "2025-03-04T10:00:00Z",
		"thread": map[string]any{"id": bad, "resourceId": "default", "title": "Shared", "createdAt": "2025-03-04T10:00:00Z", "updatedAt": "2025-03-04T10:00:00Z"},
		"messages": []any{
			msg(bad, "user", map[string]any{"type": "text", "text": "Which file?"}),
			msg(bad+"2", "assistant", map[string]any{"type": "tool-invocation", "toolInvocation": map[string]any{
				"state": "suspended", "toolCallId": bad, "toolName": "ask_user", "args": map[string]any{"question": "Which?"},
				"suspendPayload": map[string]any{"question": "Which?"}}}),
		}}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A shared file with ids Parley would not accept is imported with new
// ones, and the answer says how many were replaced: through the API and
// through the page's form, whose chat then opens.
func TestImportReplacesInvalidIDs(t *testing.T) {
	e := newAPIEnv(t)
	for i, bad := range hostileIDs {
		res := e.call("POST", "/api/memory/threads/import", string(hostileExport(t, bad)), http.StatusOK)
		id, _ := get(res, "threads", 0, "id").(string)
		if !agentcore.ValidID(id) || get(res, "threads", 0, "sourceId") != nil {
			t.Fatalf("id %d: import answered %.300v", i, res)
		}
		if get(res, "replacedIds") != 4.0 || get(res, "note") != "4 ids were not valid and were replaced." {
			t.Fatalf("id %d: import answered replacedIds %v, note %q; want 4 and the sentence", i, get(res, "replacedIds"), get(res, "note"))
		}
		msgs, err := e.rt.ListMessages(t.Context(), id, agentcore.MessageQuery{})
		if err != nil || len(msgs) != 2 {
			t.Fatalf("id %d: %d messages, %v", i, len(msgs), err)
		}
		for _, m := range msgs {
			if !agentcore.ValidID(m.ID) || m.ThreadID != id {
				t.Fatalf("id %d: message %.40q of thread %.40q", i, m.ID, m.ThreadID)
			}
		}
		call := msgs[1].Content.Parts[0].ToolInvocation.ToolCallID
		if !agentcore.ValidID(call) {
			t.Fatalf("id %d: tool call stored as %.40q", i, call)
		}
		page := e.send("GET", "/t/"+id, "")
		page.Body.Close()
		if page.StatusCode != http.StatusOK {
			t.Fatalf("id %d: the imported chat's page answered %d", i, page.StatusCode)
		}
	}

	html := e.upload(hostileExport(t, hostileIDs[0]))
	if !strings.Contains(html, "Imported 1 chat. 4 ids were not valid and were replaced. Opening…") {
		t.Fatalf("the form's answer does not say ids were replaced: %s", html)
	}
	if strings.Contains(html, "alert(1)") {
		t.Fatalf("the form's answer carries the file's id: %s", html)
	}
	good := e.call("POST", "/api/memory/threads/import", strings.ReplaceAll(string(hostileExport(t, "zz")), `"zz"`, `"fine"`), http.StatusOK)
	if get(good, "replacedIds") != nil || get(good, "note") != nil {
		t.Fatalf("a file with valid ids: %v", good)
	}
}
