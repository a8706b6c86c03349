package ui_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// richThread stores a thread whose reply has text, reasoning, tool calls
// (one failed, one waiting for approval) and usage, then a stopped reply.
func richThread(t *testing.T, e *apiEnv) string {
	t.Helper()
	ctx := t.Context()
	th, err := e.rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: "Rich — «thread»",
		Metadata: map[string]any{"model": testModel, "mode": "plan", "yolo": true}})
	if err != nil {
		t.Fatal(err)
	}
	reply := agentcore.Content{Format: 2, Parts: []agentcore.Part{
		{Type: "reasoning", Text: "Think."},
		{Type: "text", Text: "Reading **main.go**."},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "call-1",
			ToolName: "read_file", Args: json.RawMessage(`{"path": "main.go"}`), Result: json.RawMessage(`"package main"`), Step: 1}},
		{Type: "step-start"},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "suspended", ToolCallID: "call-2",
			ToolName: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"<x> & y"}`), Approval: true,
			SuspendPayload: json.RawMessage(`{"category":"edit"}`), Step: 2}},
	}, Metadata: map[string]any{"model": testModel, agentcore.MetaUsage: agentcore.Usage{InputTokens: 1500, OutputTokens: 42, TotalTokens: 1542},
		agentcore.MetaContextTokens: 1542}}
	for _, m := range []agentcore.Message{
		{Role: agentcore.RoleUser, Content: agentcore.TextContent("Read main.go\nplease")},
		{Role: agentcore.RoleAssistant, Content: reply},
		{Role: agentcore.RoleUser, Content: agentcore.TextContent("and then?")},
		{Role: agentcore.RoleAssistant, Content: agentcore.TextContent("Then I"), Status: agentcore.StatusInterrupted},
	} {
		m.ThreadID = th.ID
		if _, err := e.db.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return th.ID
}

// download GETs path and returns the body, checking the status and that it
// downloads as an attachment.
func (e *apiEnv) download(path, ctype string) []byte {
	e.t.Helper()
	resp := e.send("GET", path, "")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, ctype) {
		e.t.Fatalf("GET %s: Content-Type %q, want %s", path, got, ctype)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "filename") {
		e.t.Fatalf("GET %s: Content-Disposition %q", path, cd)
	}
	return body
}

// exportedMessages is the messages array of an export, with the ids a new
// thread may change taken out when drop is set.
func exportedMessages(t *testing.T, data []byte, drop bool) string {
	t.Helper()
	var f struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if drop {
		for _, m := range f.Messages {
			delete(m, "id")
			delete(m, "parentId") // ids are new in the copy
			delete(m, "threadId")
		}
	}
	b, _ := json.MarshalIndent(f.Messages, "", " ")
	return string(b)
}

func (e *apiEnv) threadCount() int {
	e.t.Helper()
	ts, err := e.rt.ListThreads(e.t.Context(), agentcore.ThreadQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ts)
}

// Export → import → export gives the same messages. Into the same Parley
// the copy is a new thread with new ids (the file's are taken); into
// another Parley it keeps every id.
func TestExportImportRoundTrip(t *testing.T) {
	e := newAPIEnv(t)
	id := richThread(t, e)
	first := e.download("/t/"+id+"/export.json", "application/json")
	if api := e.download("/api/memory/threads/"+id+"/export", "application/json"); exportedMessages(t, api, false) != exportedMessages(t, first, false) {
		t.Fatal("the API's export differs from the page's")
	}

	res := e.call("POST", "/api/memory/threads/import", string(first), http.StatusOK)
	newID, _ := get(res, "threads", 0, "id").(string)
	if newID == "" || newID == id || get(res, "threads", 0, "sourceId") != id || get(res, "kind") != "parley" || get(res, "threads", 0, "messages") != 4.0 {
		t.Fatalf("import answered %v", res)
	}
	second := e.download("/t/"+newID+"/export.json", "application/json")
	if a, b := exportedMessages(t, first, true), exportedMessages(t, second, true); a != b {
		t.Fatalf("messages changed in the round trip:\n%s\n---\n%s", a, b)
	}
	th, err := e.rt.GetThread(t.Context(), newID)
	if err != nil {
		t.Fatal(err)
	}
	if th.Title != "Rich — «thread»" || th.Metadata["mode"] != "plan" || th.Metadata["yolo"] != nil {
		t.Fatalf("imported thread %+v (yolo must not come from a file)", th)
	}

	other := newAPIEnv(t)
	res = other.call("POST", "/api/memory/threads/import", string(first), http.StatusOK)
	if get(res, "threads", 0, "id") != id || get(res, "threads", 0, "sourceId") != nil {
		t.Fatalf("into a fresh Parley: %v", res)
	}
	third := other.download("/t/"+id+"/export.json", "application/json")
	if a, b := exportedMessages(t, first, false), exportedMessages(t, third, false); a != b {
		t.Fatalf("messages changed moving to another Parley:\n%s\n---\n%s", a, b)
	}
}

// The Markdown export is a readable document of the same thread.
func TestExportMarkdown(t *testing.T) {
	e := newAPIEnv(t)
	id := richThread(t, e)
	md := string(e.download("/t/"+id+"/export.md", "text/markdown"))
	for _, want := range []string{"# Rich — «thread»", "### You", "Read main.go\nplease", "### Parley · " + testModel,
		"Tool call: <code>read_file</code> (done)", `"path": "main.go"`, "Tool call: <code>write_file</code> (waiting for the user)",
		"*1,500 tokens in · 42 out*", "(stopped before the reply was finished)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if api := string(e.download("/api/memory/threads/"+id+"/export?format=markdown", "text/markdown")); api[strings.Index(api, "\n"):] == "" {
		t.Fatal("empty API markdown")
	}
	resp := e.send("GET", "/t/nope/export.md", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown thread: %d", resp.StatusCode)
	}
	e.call("GET", "/api/memory/threads/"+id+"/export?format=pdf", "", http.StatusBadRequest)
}

// The bad-file corpus: every file is refused with a reason that names the
// problem, over the API (JSON error, 4xx) and from the page's form (the
// reason in #import-status), and nothing at all is created.
func TestImportBadFiles(t *testing.T) {
	e := newAPIEnv(t)
	good := e.download("/t/"+richThread(t, e)+"/export.json", "application/json")
	before := e.threadCount()

	huge := make([]byte, 50<<20) // 50 MB of valid-looking JSON
	copy(huge, `{"version": 1, "thread": {}, "messages": [`)
	for i := 42; i < len(huge); i++ {
		huge[i] = ' '
	}
	garbage := make([]byte, 4096)
	_, _ = rand.Read(garbage)
	badLast := bytes.Replace(good, []byte(`"role": "assistant",
      "content": {
        "format": 2,
        "parts": [
          {
            "type": "text",
            "text": "Then I"`), []byte(`"role": "assistant",
      "content": {
        "format": 3,
        "parts": [
          {
            "type": "text",
            "text": "Then I"`), 1)
	if bytes.Equal(badLast, good) {
		t.Fatal("test file: the last reply was not found")
	}
	cases := []struct {
		name   string
		data   []byte
		status int
		want   string
	}{
		{"50 MB", huge, http.StatusRequestEntityTooLarge, "larger than the 32 MiB import limit"},
		{"binary garbage", garbage, http.StatusBadRequest, "Not imported: the file is"},
		{"truncated", good[:len(good)-200], http.StatusBadRequest, "the file looks truncated"},
		{"wrong shape", []byte(`{"hello": "world"}`), http.StatusBadRequest, `neither a Parley export`},
		{"missing field", bytes.Replace(good, []byte(`"messages": [`), []byte(`"messagez": [`), 1), http.StatusBadRequest, `"messages" is missing`},
		{"last message bad", badLast, http.StatusBadRequest, "messages[3]: content.format: want 2"},
		{"chatgpt, one bad of two", []byte(`[` + chatGPTOK + `, {"title": "B", "mapping": {}}]`), http.StatusBadRequest, `conversation 2 ("B"): "current_node" is missing`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", e.url+"/api/memory/threads/import", bytes.NewReader(tc.data))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var v map[string]string
			_ = json.Unmarshal(body, &v)
			if resp.StatusCode != tc.status || !strings.Contains(v["error"], tc.want) {
				t.Fatalf("API: %d %s, want %d saying %q", resp.StatusCode, body, tc.status, tc.want)
			}

			html := e.upload(tc.data)
			if !strings.Contains(html, "import-error") || !strings.Contains(html, jsonHTML(tc.want)) || !strings.Contains(html, "Nothing was changed.") {
				t.Fatalf("form: %s, want the reason %q", clipText(html), tc.want)
			}
			if n := e.threadCount(); n != before {
				t.Fatalf("%d threads after a refused import, want %d", n, before)
			}
		})
	}
}

// jsonHTML is s as templ escapes it in text.
func jsonHTML(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "<", "&lt;", ">", "&gt;", "'", "&#39;").Replace(s)
}

func clipText(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// upload posts data as the sidebar's form does (multipart, from Datastar)
// and returns the streamed answer.
func (e *apiEnv) upload(data []byte) string {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "conversations.json")
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Datastar-Request", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("POST /import: %d %s", resp.StatusCode, out)
	}
	return string(out)
}

const chatGPTOK = `{"title": "Hello", "create_time": 1700000000, "update_time": 1700000100, "current_node": "b",
 "mapping": {"r": {"message": null, "parent": null}, "a": {"parent": "r", "message": {"author": {"role": "user"}, "create_time": 1700000001,
 "content": {"content_type": "text", "parts": ["Hi there"]}, "recipient": "all"}}, "b": {"parent": "a", "message": {"author": {"role": "assistant"},
 "create_time": 1700000002, "content": {"content_type": "text", "parts": ["Hello! How can I help?"]}, "recipient": "all", "metadata": {"model_slug": "gpt-4o"}}}},
 "id": "conv-1"}`

// A ChatGPT conversations.json uploaded from the page becomes threads, and
// the answer opens the newest.
func TestImportChatGPTFromForm(t *testing.T) {
	e := newAPIEnv(t)
	second := strings.Replace(strings.Replace(chatGPTOK, `"Hello"`, `"Later"`, 1), "1700000100", "1700009999", 1)
	html := e.upload([]byte("[" + chatGPTOK + ",\n" + second + "]"))
	ts, err := e.rt.ListThreads(t.Context(), agentcore.ThreadQuery{})
	if err != nil || len(ts) != 2 {
		t.Fatalf("%d threads, %v", len(ts), err)
	}
	var later agentcore.Thread
	for _, th := range ts {
		if th.Title == "Later" {
			later = th
		}
	}
	if !strings.Contains(html, "Imported 2 chats") || !strings.Contains(html, `data-goto="/t/`+later.ID+`"`) {
		t.Fatalf("answer %s does not open %s", html, later.ID)
	}
	msgs, _ := e.rt.ListMessages(t.Context(), later.ID, agentcore.MessageQuery{})
	if len(msgs) != 2 || msgs[0].Content.Text() != "Hi there" || msgs[1].Role != agentcore.RoleAssistant ||
		!msgs[1].CreatedAt.Equal(time.Unix(1700000002, 0)) {
		t.Fatalf("messages %+v", msgs)
	}
	// Imported chats are searchable like any other.
	page := e.send("GET", "/t/"+later.ID, "")
	b, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(b), "Hello! How can I help?") || !strings.Contains(string(b), "chatgpt/gpt-4o") {
		t.Fatal("the imported thread's page does not show its messages")
	}
}

// A reply shows its tokens (and the scripted model's $0 price); the header
// sums the thread and shows the context fill.
func TestUsageShownOnPage(t *testing.T) {
	e := newAPIEnv(t)
	th, _ := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default"})
	for _, u := range []scripted.Usage{{PromptTokens: 1200, CompletionTokens: 30}, {PromptTokens: 1300, CompletionTokens: 20}} {
		e.model.Push(scripted.Reply{Text: "Sure.", Usage: u})
		if _, err := e.rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
			t.Fatal(err)
		}
		if err := e.rt.Wait(t.Context(), th.ID); err != nil {
			t.Fatal(err)
		}
	}
	resp := e.send("GET", "/t/"+th.ID, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	for _, want := range []string{
		`<span class="usage-in">1.2k in</span> · <span class="usage-out">30 out</span>`,
		`<span class="usage-in">1.3k in</span> · <span class="usage-out">20 out</span>`,
		`<span class="tu-tokens">2.5k in · 50 out</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, `class="ctx`) {
		t.Error("a context meter for a model whose window is unknown")
	}
	if t.Failed() {
		i := strings.Index(page, `id="chat-header"`)
		t.Log(page[i:min(len(page), i+2000)])
	}
}
