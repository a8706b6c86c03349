package exchange

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/hostile"
)

var t0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

// sampleThread is a thread with everything a reply can hold: text,
// reasoning, a finished tool call, a failed one, a suspended approval, a
// source, usage; a stopped reply and a failed one.
func sampleThread() (agentcore.Thread, []agentcore.Message) {
	th := agentcore.Thread{ID: "th1", ResourceID: "default", Title: "Fix the `build`", Pinned: true,
		Metadata:  map[string]any{"model": "openai/gpt-4o", "mode": "plan", "yolo": true, "workspace": "/home/x/proj"},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}
	reply := agentcore.Content{Format: 2, Parts: []agentcore.Part{
		{Type: "reasoning", Text: "Look at the file first."},
		{Type: "text", Text: "Let me read it."},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c1",
			ToolName: "read_file", Args: json.RawMessage(`{"path":"main.go"}`), Result: json.RawMessage("\"package main\\n```go\\n\""), Step: 1}},
		{Type: "step-start"},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c2",
			ToolName: "execute_command", Args: json.RawMessage(`{"command":"go build"}`), Result: json.RawMessage(`{"error":"exit 1"}`), IsError: true, Step: 2}},
		{Type: "source", Source: &agentcore.Source{URL: "https://go.dev/doc", Title: "Go docs"}},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "suspended", ToolCallID: "c3",
			ToolName: "write_file", Args: json.RawMessage(`{"path":"main.go","content":"x"}`), Approval: true,
			SuspendPayload: json.RawMessage(`{"category":"edit"}`), Step: 3}},
		{Type: "text", Text: "Done <b>here</b> & there."},
	}, Content: "Let me read it.Done <b>here</b> & there.", Metadata: map[string]any{
		"model": "openai/gpt-4o", agentcore.MetaUsage: map[string]any{"inputTokens": 1200.0, "outputTokens": 80.0, "totalTokens": 1280.0},
		agentcore.MetaContextTokens: 900.0,
	}}
	msgs := []agentcore.Message{
		{ID: "m1", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleUser, Content: agentcore.TextContent("Why does it fail?\n\nSee `main.go`."), Status: agentcore.StatusComplete, CreatedAt: t0, Active: true},
		{ID: "m2", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleAssistant, Content: reply, Status: agentcore.StatusComplete, CreatedAt: t0.Add(time.Second), Active: true},
		{ID: "m3", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleUser, Content: agentcore.TextContent("again"), Status: agentcore.StatusComplete, CreatedAt: t0.Add(time.Minute), Active: true},
		{ID: "m4", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleAssistant, Content: agentcore.TextContent("Half"), Status: agentcore.StatusInterrupted, CreatedAt: t0.Add(time.Minute + time.Second), Active: true},
		{ID: "m5", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleAssistant, Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{}, Metadata: map[string]any{"error": "openai: 401 Unauthorized"}}, Status: agentcore.StatusError, CreatedAt: t0.Add(2 * time.Minute), Active: true},
	}
	return th, msgs
}

// The JSON export is Mastra's v2 message shape in a {version, thread,
// messages} file, and reading it gives back exactly what was exported
// (thread settings that are the importer's to choose aside).
func TestJSONRoundTrip(t *testing.T) {
	th, msgs := sampleThread()
	data, err := JSON(th, msgs, t0)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	if top["version"] != 1.0 || top["format"] != Format || top["thread"] == nil {
		t.Fatalf("top level %v", top)
	}
	m2 := top["messages"].([]any)[1].(map[string]any)
	content := m2["content"].(map[string]any)
	if m2["threadId"] != "th1" || m2["role"] != "assistant" || content["format"] != 2.0 || m2["status"] != nil {
		t.Fatalf("message shape %v", m2)
	}
	call := content["parts"].([]any)[2].(map[string]any)["toolInvocation"].(map[string]any)
	if call["toolName"] != "read_file" || call["args"].(map[string]any)["path"] != "main.go" || call["state"] != "result" {
		t.Fatalf("tool call %v", call)
	}
	if top["messages"].([]any)[3].(map[string]any)["status"] != "interrupted" {
		t.Fatal("stopped reply lost its status")
	}
	if bytes.Contains(data, []byte(`"inactive"`)) || bytes.Contains(data, []byte(`"parentId"`)) {
		t.Fatal("a chat of one branch, its messages naming no parents, is marked as a tree")
	}

	res, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != KindParley || len(res.Threads) != 1 {
		t.Fatalf("read %+v", res)
	}
	got := res.Threads[0]
	wantThread := th
	wantThread.Metadata = map[string]any{"model": "openai/gpt-4o", "mode": "plan"} // no yolo, no workspace
	if !reflect.DeepEqual(got.Thread, wantThread) {
		t.Fatalf("thread\n got %+v\nwant %+v", got.Thread, wantThread)
	}
	if !reflect.DeepEqual(got.Messages, msgs) {
		for i := range msgs {
			if !reflect.DeepEqual(got.Messages[i], msgs[i]) {
				t.Errorf("message %d\n got %+v\nwant %+v", i, got.Messages[i], msgs[i])
			}
		}
		t.FailNow()
	}
	// And writing what was read gives the same file.
	again, err := JSON(got.Thread, got.Messages, t0)
	if err != nil {
		t.Fatal(err)
	}
	th.Metadata = wantThread.Metadata
	first, _ := JSON(th, msgs, t0)
	if !bytes.Equal(again, first) {
		t.Fatalf("second export differs:\n%s\n---\n%s", again, first)
	}
}

// A bad file is refused with an error that names what is wrong and where.
func TestReadBadFiles(t *testing.T) {
	th, msgs := sampleThread()
	good, _ := JSON(th, msgs, t0)
	edit := func(f func(map[string]any)) []byte {
		var v map[string]any
		_ = json.Unmarshal(good, &v)
		f(v)
		b, _ := json.Marshal(v)
		return b
	}
	message := func(i int, f func(map[string]any)) []byte {
		return edit(func(v map[string]any) { f(v["messages"].([]any)[i].(map[string]any)) })
	}
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0xff, 0x00}, 64)...)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", []byte("  \n"), "the file is empty"},
		{"binary", png, "binary, not JSON text (a zero byte at offset 8)"},
		{"latin-1", []byte(`{"title": "caf` + "\xe9" + `"}`), "not UTF-8 text, so not JSON (an invalid byte 0xe9 at offset 14)"},
		{"truncated", good[:len(good)/2], "the file looks truncated"},
		{"syntax", []byte("{\n\"version\": 1,\n\"thread\": {,}\n}"), "not valid JSON: invalid character ',' looking for beginning of object key string (line 3"},
		{"trailing", append(append([]byte{}, good...), []byte(`{"x":1}`)...), "goes on after its JSON value ends"},
		{"a number", []byte("42"), "neither a Parley export (an object) nor a ChatGPT conversations.json (an array)"},
		{"other object", []byte(`{"name": "x", "items": []}`), `its top-level keys are "items", "name"`},
		{"no messages", edit(func(v map[string]any) { delete(v, "messages") }), `"messages" is missing`},
		{"no thread", edit(func(v map[string]any) { delete(v, "thread") }), `"thread" is missing`},
		{"newer version", edit(func(v map[string]any) { v["version"] = 2 }), "version 2: this Parley reads version 1 exports"},
		{"version text", edit(func(v map[string]any) { v["version"] = "one" }), `version: want a number, got "one"`},
		{"other format", edit(func(v map[string]any) { v["format"] = "slack" }), `format: want "parley.thread", got "slack"`},
		{"thread not object", edit(func(v map[string]any) { v["thread"] = []any{} }), "thread: want an object, got []"},
		{"thread title number", edit(func(v map[string]any) { v["thread"].(map[string]any)["title"] = 5 }), "thread: title: want string, got a JSON number"},
		{"messages object", edit(func(v map[string]any) { v["messages"] = map[string]any{} }), "messages: want an array, got {}"},
		{"message string", edit(func(v map[string]any) { v["messages"].([]any)[2] = "hi" }), `messages[2]: want an object, got "hi"`},
		{"no role", message(1, func(m map[string]any) { delete(m, "role") }), `messages[1]: "role" is missing`},
		{"bad role", message(1, func(m map[string]any) { m["role"] = "tool" }), `messages[1]: role "tool" is not user, assistant, system or signal`},
		{"no content", message(0, func(m map[string]any) { delete(m, "content") }), `messages[0]: "content" is missing`},
		{"v1 content", message(0, func(m map[string]any) { m["content"].(map[string]any)["format"] = 1 }), "messages[0]: content.format: want 2 (Mastra's v2 messages), got 1"},
		{"no parts", message(0, func(m map[string]any) { delete(m["content"].(map[string]any), "parts") }), "messages[0]: content.parts: want an array"},
		{"file part", message(1, func(m map[string]any) {
			m["content"].(map[string]any)["parts"].([]any)[1] = map[string]any{"type": "file", "data": "x"}
		}), `messages[1]: content.parts[1]: a file part's data must be /files/<its SHA-256>, with the file among the export's files, not "x"`},
		{"call without id", message(1, func(m map[string]any) {
			delete(m["content"].(map[string]any)["parts"].([]any)[2].(map[string]any)["toolInvocation"].(map[string]any), "toolCallId")
		}), "messages[1]: content.parts[2]: toolInvocation needs toolCallId and toolName"},
		{"call state", message(1, func(m map[string]any) {
			m["content"].(map[string]any)["parts"].([]any)[2].(map[string]any)["toolInvocation"].(map[string]any)["state"] = "done"
		}), `toolInvocation.state "done" is not partial-call, call, suspended or result`},
		{"bad status", message(3, func(m map[string]any) { m["status"] = "lost" }), `messages[3]: status "lost"`},
		{"bad time", message(0, func(m map[string]any) { m["createdAt"] = "yesterday" }), `messages[0]: createdAt: "yesterday" is not an RFC 3339 time`},
		{"thread time", edit(func(v map[string]any) { v["thread"].(map[string]any)["updatedAt"] = 7 }), "thread: updatedAt: want a time as text, got 7"},
		{"duplicate id", message(2, func(m map[string]any) { m["id"] = "m1" }), `messages[2]: id "m1" repeats messages[0]`},
		{"chatgpt empty", []byte("[]"), "an empty array: no conversations to import"},
		{"chatgpt not objects", []byte(`[1, 2]`), "conversation 1: want an object, got 1"},
		{"chatgpt no mapping", []byte(`[{"title": "A", "current_node": "x"}]`), `conversation 1 ("A"): "mapping" is missing`},
		{"chatgpt no current", []byte(`[{"title": "A", "mapping": {}}]`), `conversation 1 ("A"): "current_node" is missing`},
		{"chatgpt dangling current", []byte(`[{"title": "A", "mapping": {}, "current_node": "n9"}]`), `current_node "n9" is not in the mapping`},
		{"chatgpt dangling parent", []byte(`[{"title": "A", "current_node": "b", "mapping": {"b": {"parent": "a"}}}]`), `node "b" names parent "a", which is not in the mapping`},
		{"chatgpt loop", []byte(`[{"title": "A", "current_node": "b", "mapping": {"a": {"parent": "b"}, "b": {"parent": "a"}}}]`), `the parent chain from current_node loops at node "b"`},
		{"chatgpt nothing to import", []byte(`[{"title": "A", "current_node": "a", "mapping": {"a": {"message": {"author": {"role": "system"}, "content": {"content_type": "text", "parts": ["sys"]}}}}}]`), "none of the 1 conversations has user or assistant text"},
		{"chatgpt mapping wrong type", []byte(`[{"title": "A", "current_node": "a", "mapping": []}]`), `conversation 1: mapping: want map[string]exchange.gptNode, got a JSON array`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(tc.data)
			if err == nil {
				t.Fatalf("read %d threads, want an error", len(res.Threads))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\n does not say %q", err, tc.want)
			}
		})
	}
}

// chatGPTSample is a conversations.json as ChatGPT's export writes it (the
// fields and node kinds of a real export, trimmed): one conversation with an
// edited user message (two branches; current_node is on the second), the
// hidden system root, custom instructions, a browsing tool call and its
// output between two assistant texts, a reasoning summary, an image upload;
// and one conversation holding only a system message.
const chatGPTSample = `[
 {
  "title": "Trip to Lisbon",
  "create_time": 1714552200.123456,
  "update_time": 1714555800.5,
  "mapping": {
   "root": {"id": "root", "message": null, "parent": null, "children": ["sys"]},
   "sys": {"id": "sys", "parent": "root", "children": ["ctx"], "message": {"id": "sys", "author": {"role": "system", "name": null, "metadata": {}}, "create_time": null, "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully", "end_turn": true, "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": true}, "recipient": "all"}},
   "ctx": {"id": "ctx", "parent": "sys", "children": ["u1", "u1b"], "message": {"id": "ctx", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": null, "content": {"content_type": "user_editable_context", "user_profile": "I like trains.", "user_instructions": ""}, "status": "finished_successfully", "weight": 1.0, "metadata": {"is_visually_hidden_from_conversation": true, "user_context_message_data": {"about_user_message": "I like trains."}}, "recipient": "all"}},
   "u1": {"id": "u1", "parent": "ctx", "children": ["a1"], "message": {"id": "u1", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714552201.0, "content": {"content_type": "text", "parts": ["Plan a day in Porto"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}},
   "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714552210.0, "content": {"content_type": "text", "parts": ["Porto branch that was abandoned"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {"model_slug": "gpt-4o"}, "recipient": "all"}},
   "u1b": {"id": "u1b", "parent": "ctx", "children": ["think"], "message": {"id": "u1b", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714552300.0, "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc", "width": 800, "height": 600}, "Plan a day in Lisbon, near this tram"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {"attachments": [{"id": "file-abc", "name": "tram.jpg"}]}, "recipient": "all"}},
   "think": {"id": "think", "parent": "u1b", "children": ["a2"], "message": {"id": "think", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714552301.0, "content": {"content_type": "thoughts", "thoughts": [{"summary": "Planning", "content": "Think about trams"}]}, "status": "finished_successfully", "weight": 1.0, "metadata": {"model_slug": "gpt-4o"}, "recipient": "all"}},
   "a2": {"id": "a2", "parent": "think", "children": ["call"], "message": {"id": "a2", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714552302.0, "content": {"content_type": "text", "parts": ["Let me check tram 28."]}, "status": "finished_successfully", "end_turn": false, "weight": 1.0, "metadata": {"model_slug": "gpt-4o"}, "recipient": "all"}},
   "call": {"id": "call", "parent": "a2", "children": ["out"], "message": {"id": "call", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714552303.0, "content": {"content_type": "code", "language": "unknown", "text": "search(\"tram 28 lisbon\")"}, "status": "finished_successfully", "weight": 1.0, "metadata": {"model_slug": "gpt-4o"}, "recipient": "browser"}},
   "out": {"id": "out", "parent": "call", "children": ["a3"], "message": {"id": "out", "author": {"role": "tool", "name": "browser", "metadata": {}}, "create_time": 1714552304.0, "content": {"content_type": "tether_browsing_display", "result": "Tram 28 runs every 10 minutes", "summary": null}, "status": "finished_successfully", "weight": 0.0, "metadata": {}, "recipient": "all"}},
   "a3": {"id": "a3", "parent": "out", "children": ["u2"], "message": {"id": "a3", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714552305.0, "content": {"content_type": "text", "parts": ["Morning: ride **tram 28** to Alfama.\n\nAfternoon: Belém."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o", "finish_details": {"type": "stop"}}, "recipient": "all"}},
   "u2": {"id": "u2", "parent": "a3", "children": ["a4"], "message": {"id": "u2", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714555790.0, "content": {"content_type": "text", "parts": ["Thanks!"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}},
   "a4": {"id": "a4", "parent": "u2", "children": [], "message": {"id": "a4", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714555800.0, "content": {"content_type": "text", "parts": ["Enjoy Lisbon."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o-mini"}, "recipient": "all"}}
  },
  "moderation_results": [],
  "current_node": "a4",
  "plugin_ids": null,
  "conversation_id": "6632a0c8-1111-2222-3333-444455556666",
  "conversation_template_id": null,
  "gizmo_id": null,
  "is_archived": false,
  "safe_urls": [],
  "default_model_slug": "gpt-4o",
  "id": "6632a0c8-1111-2222-3333-444455556666"
 },
 {
  "title": "Empty",
  "create_time": 1714000000.0,
  "update_time": 1714000000.0,
  "mapping": {
   "r": {"id": "r", "message": null, "parent": null, "children": ["s"]},
   "s": {"id": "s", "parent": "r", "children": [], "message": {"id": "s", "author": {"role": "system"}, "content": {"content_type": "text", "parts": [""]}, "metadata": {"is_visually_hidden_from_conversation": true}, "recipient": "all"}}
  },
  "current_node": "s",
  "id": "empty-1"
 }
]`

// A ChatGPT export imports as user and assistant text, every branch, the
// one the user last saw active: hidden, system, tool and reasoning nodes
// are left out, text split around a tool call reads as one reply, and a
// conversation with nothing to show is skipped.
func TestReadChatGPT(t *testing.T) {
	res, err := Read([]byte(chatGPTSample))
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != KindChatGPT || len(res.Threads) != 1 || res.Skipped != 1 {
		t.Fatalf("kind %s, %d threads, %d skipped", res.Kind, len(res.Threads), res.Skipped)
	}
	th := res.Threads[0]
	if th.Thread.Title != "Trip to Lisbon" || !th.Thread.CreatedAt.Equal(time.UnixMilli(1714552200123)) ||
		!th.Thread.UpdatedAt.Equal(time.UnixMilli(1714555800500)) || th.Thread.Metadata["chatgptId"] != "6632a0c8-1111-2222-3333-444455556666" {
		t.Fatalf("thread %+v", th.Thread)
	}
	type row struct {
		Role   agentcore.Role
		Text   string
		Model  any
		At     int64
		Parent int // index, -1 for a root
		Active bool
	}
	var got []row
	pos := map[string]int{}
	for i, m := range th.Messages {
		p, ok := pos[m.ParentID]
		if !ok {
			p = -1
		}
		pos[m.ID] = i
		got = append(got, row{m.Role, m.Content.Text(), m.Content.Metadata["model"], m.CreatedAt.Unix(), p, m.Active})
		if m.Content.Format != 2 || m.Content.Content != m.Content.Text() {
			t.Errorf("content not v2: %+v", m.Content)
		}
		if !agentcore.ValidID(m.ID) {
			t.Errorf("message id %q", m.ID)
		}
	}
	want := []row{
		{agentcore.RoleUser, "Plan a day in Porto", nil, 1714552201, -1, false},
		{agentcore.RoleAssistant, "Porto branch that was abandoned", "chatgpt/gpt-4o", 1714552210, 0, false},
		{agentcore.RoleUser, "*[an attachment that was not imported]*\n\nPlan a day in Lisbon, near this tram", nil, 1714552300, -1, true},
		{agentcore.RoleAssistant, "Let me check tram 28.\n\nMorning: ride **tram 28** to Alfama.\n\nAfternoon: Belém.", "chatgpt/gpt-4o", 1714552302, 2, true},
		{agentcore.RoleUser, "Thanks!", nil, 1714555790, 3, true},
		{agentcore.RoleAssistant, "Enjoy Lisbon.", "chatgpt/gpt-4o-mini", 1714555800, 4, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages\n got %+v\nwant %+v", got, want)
	}

	// One conversation on its own (not in an array) reads too.
	var convs []json.RawMessage
	_ = json.Unmarshal([]byte(chatGPTSample), &convs)
	one, err := Read(convs[0])
	if err != nil || len(one.Threads) != 1 || len(one.Threads[0].Messages) != 6 {
		t.Fatalf("single conversation: %+v, %v", one, err)
	}
}

// The Markdown export reads as a document: headings per message, tool calls
// with arguments and results in fences that survive backticks inside.
func TestMarkdown(t *testing.T) {
	th, msgs := sampleThread()
	md := string(Markdown(th, msgs, t0))
	for _, want := range []string{
		"# Fix the `build`\n",
		"*Exported from Parley on 4 Mar 2025 10:00 UTC · 5 messages · thread `th1`*",
		"### You\n\n*4 Mar 2025 10:00 UTC*\n\nWhy does it fail?\n\nSee `main.go`.\n",
		"### Parley · openai/gpt-4o\n",
		"<details><summary>Reasoning</summary>\n\n> Look at the file first.",
		"<details><summary>Tool call: <code>read_file</code> (done)</summary>\n\nArguments:\n\n```json\n{\n  \"path\": \"main.go\"\n}\n```",
		"Result:\n\n````\npackage main\n```go\n````",
		"Tool call: <code>execute_command</code> (failed)",
		"Error:\n\n```\n{\n  \"error\": \"exit 1\"\n}\n```",
		"Tool call: <code>write_file</code> (waiting for the user)",
		"- Source: <https://go.dev/doc> — Go docs",
		"Done <b>here</b> & there.",
		"*1,200 tokens in · 80 out*",
		"Half\n\n*(stopped before the reply was finished)*",
		"*(the model could not answer: openai: 401 Unauthorized)*",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

// FuzzRead: any bytes either read as threads whose messages are all v2
// with a known role, or give an error; never a panic.
func FuzzRead(f *testing.F) {
	th, msgs := sampleThread()
	good, _ := JSON(th, msgs, t0)
	f.Add(good)
	f.Add([]byte(chatGPTSample))
	f.Add([]byte(`[{"title":"x","current_node":"a","mapping":{"a":{"parent":"a"}}}]`))
	f.Add([]byte(`{"version":1,"thread":{},"messages":[{"role":"user","content":{"format":2,"parts":[]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(data)
		if err != nil {
			return
		}
		if len(res.Threads) == 0 {
			t.Fatal("no error and no threads")
		}
		for _, imp := range res.Threads {
			for _, m := range imp.Messages {
				if m.Content.Format != 2 || m.Content.Parts == nil || !roles[m.Role] {
					t.Fatalf("accepted a message that is not v2: %+v", m)
				}
			}
		}
	})
}

// hostileIDs are ids an attacker would put in a shared file: each breaks
// out of a JavaScript string, an HTML attribute, a script element or a URL
// path if used unescaped.
var hostileIDs = hostile.IDs()

// A Parley export whose thread, message and tool call ids Parley would not
// accept is read with those ids replaced (thread and message ids left for
// the store to issue, tool calls given call_ ids), and Read counts them.
func TestReadReplacesInvalidIDs(t *testing.T) {
	for i, bad := range hostileIDs {
		th, msgs := sampleThread()
		th.ID = bad
		for j := range msgs {
			msgs[j].ThreadID = bad
		}
		msgs[0].ID = bad
		msgs[1].ID = bad + "2"
		ti := msgs[1].Content.Parts[2].ToolInvocation
		ti.ToolCallID = bad
		data, err := JSON(th, msgs, t0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Read(data)
		if err != nil {
			t.Fatalf("id %d: %v", i, err)
		}
		if res.ReplacedIDs != 4 {
			t.Errorf("id %d: ReplacedIDs = %d, want 4 (thread, two messages, a tool call)", i, res.ReplacedIDs)
		}
		imp := res.Threads[0]
		if imp.Thread.ID != "" || imp.Messages[0].ID != "" || imp.Messages[1].ID != "" || imp.Messages[2].ID != "m3" {
			t.Fatalf("id %d: ids read as thread %.40q, messages %.40q %.40q %q", i, imp.Thread.ID, imp.Messages[0].ID, imp.Messages[1].ID, imp.Messages[2].ID)
		}
		got := imp.Messages[1].Content.Parts[2].ToolInvocation.ToolCallID
		if !agentcore.ValidID(got) || !strings.HasPrefix(got, "call_") {
			t.Fatalf("id %d: the tool call id was read as %.40q", i, got)
		}
		if c2 := imp.Messages[1].Content.Parts[4].ToolInvocation.ToolCallID; c2 != "c2" {
			t.Fatalf("id %d: a valid tool call id became %q", i, c2)
		}
	}
	th, msgs := sampleThread()
	data, _ := JSON(th, msgs, t0)
	if res, err := Read(data); err != nil || res.ReplacedIDs != 0 {
		t.Fatalf("a file with valid ids: ReplacedIDs %d, %v", res.ReplacedIDs, err)
	}
}
