package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/app/chat"
	"parley/storage"
	"parley/toolkit"
)

const agentsTestModel = "openai-compatible/x"

// agentsEnv is a server with the user's agents over a real store, running
// on the scripted model.
type agentsEnv struct {
	h      http.Handler
	url    string
	db     *storage.DB
	rt     *agentcore.Runtime
	agents *chat.Agents
	model  *scripted.Server
}

func newAgentsEnv(t *testing.T) *agentsEnv {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.NewServer()
	lm, err := llm.Open(agentsTestModel, llm.Config{
		BaseURLs: map[string]string{"openai-compatible": model.URL()}, APIKeys: map[string]string{"openai-compatible": "k"},
		Getenv: func(string) string { return "" }, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	open := func(spec string) (llm.Model, error) {
		if spec != agentsTestModel {
			return nil, fmt.Errorf("unknown model %s", spec)
		}
		return lm, nil
	}
	tool := func(name string) *agentcore.Tool {
		return &agentcore.Tool{ID: name, Description: "The " + name + " tool.", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) { return "ok", nil }}
	}
	agent := &agentcore.Agent{ID: "parley", Name: "Parley", Description: "The test agent.",
		Instructions: agentcore.Text("You are Parley."), Model: agentsTestModel, Models: open,
		Tools: map[string]*agentcore.Tool{"view": tool("view"), "find_files": tool("find_files"), "write_file": tool("write_file"), "execute_command": tool("execute_command")}}
	rt := agentcore.NewRuntime(db, nil, agent)
	agents := chat.NewAgents(db, agent, nil)
	ws, err := toolkit.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt.Prepare = chat.PrepareWith(agent, &toolkit.Workspaces{Default: ws}, agents)
	s, err := New(Config{Runtime: rt, Agents: agents, CheckModel: func(spec string) error { _, err := open(spec); return err },
		Models: func() []string { return []string{agentsTestModel} }})
	if err != nil {
		t.Fatal(err)
	}
	s.AllowHosts("127.0.0.1:7777")
	hs := httptest.NewServer(s.Handler())
	s.AllowHosts("127.0.0.1:7777", strings.TrimPrefix(hs.URL, "http://"))
	t.Cleanup(func() { s.Shutdown(); hs.Close(); rt.Close(); model.Close(); db.Close() })
	return &agentsEnv{h: s.Handler(), url: hs.URL, db: db, rt: rt, agents: agents, model: model}
}

func (e *agentsEnv) form(t *testing.T, path string, v url.Values) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(v.Encode()))
	r.Host = "127.0.0.1:7777"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

func (e *agentsEnv) page(t *testing.T, path string) string {
	t.Helper()
	w := do(e.h, "GET", path, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	return w.Body.String()
}

func (e *agentsEnv) upload(t *testing.T, data []byte) *httptest.ResponseRecorder {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "agent.json")
	_, _ = fw.Write(data)
	_ = mw.Close()
	r := httptest.NewRequest("POST", "/settings/agents/import", &buf)
	r.Host = "127.0.0.1:7777"
	r.Header.Set("Content-Type", mw.FormDataContentType())
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

var hostileNames = []string{`<img src=x onerror=alert(1)>`, `'); alert(1); ('`}

// TestAgentsPagesEscapeHostileValues: agent names, descriptions and
// instructions with markup or quotes reach Settings, the agent's page, the
// new-chat chooser and a chat's header only as escaped text, never in a
// Datastar expression.
func TestAgentsPagesEscapeHostileValues(t *testing.T) {
	e := newAgentsEnv(t)
	var ids []string
	for _, name := range hostileNames {
		w := e.form(t, "/settings/agents", url.Values{"name": {name}, "description": {name}, "instructions": {"Say " + name},
			"tools": {"view"}, "mode": {"build"}, "policy-edit": {"deny"}})
		if w.Code != http.StatusSeeOther {
			t.Fatalf("create %q: %d %s", name, w.Code, w.Body)
		}
		list, _ := e.agents.List(t.Context())
		ids = append(ids, list[len(list)-1].ID)
	}
	th, err := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: defaultResource, Metadata: chat.Metadata(chat.Settings{Agent: ids[0]})})
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"settings":   e.page(t, "/settings"),
		"agent page": e.page(t, "/settings/agents/"+ids[0]),
		"quote page": e.page(t, "/settings/agents/"+ids[1]),
		"new chat":   e.page(t, "/"),
		"chat":       e.page(t, "/t/"+th.ID),
	}
	for where, html := range pages {
		if strings.Contains(html, "<img src=x") {
			t.Errorf("%s: the name's markup is in the page", where)
		}
		if strings.Contains(html, "'); alert(1)") {
			t.Errorf("%s: the quoted name is in the page unescaped", where)
		}
		for _, attr := range dataExprs(html) {
			if strings.Contains(attr, "alert(1)") {
				t.Errorf("%s: a name reached a Datastar expression: %s", where, attr)
			}
		}
	}
	if !strings.Contains(pages["settings"], "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(pages["settings"], "&#39;); alert(1); (&#39;") {
		t.Error("Settings does not show the names as text")
	}
	if !strings.Contains(pages["chat"], `data-chat-agent`) || !strings.Contains(pages["chat"], "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the chat's header does not name its agent")
	}
	if !strings.Contains(pages["new chat"], `id="welcome-agent"`) {
		t.Error("the new-chat screen has no agent chooser")
	}
}

// dataExprs are the values of the data-on:*, data-init and similar
// attributes of html (Datastar expressions), as the page has them.
func dataExprs(html string) []string {
	var out []string
	for _, prefix := range []string{`data-on:`, `data-init=`, `data-show=`, `data-class:`, `data-attr:`, `data-signals`} {
		rest := html
		for {
			i := strings.Index(rest, prefix)
			if i < 0 {
				break
			}
			rest = rest[i:]
			end := strings.IndexAny(rest[1:], ">")
			if end < 0 {
				break
			}
			out = append(out, rest[:end+1])
			rest = rest[end+1:]
		}
	}
	return out
}

// TestAgentsSettingsRoutes: create, refuse (naming the field, as typed),
// edit, duplicate, delete; the built-in agent is shown but neither changed
// nor deleted.
func TestAgentsSettingsRoutes(t *testing.T) {
	e := newAgentsEnv(t)
	ctx := t.Context()
	w := e.form(t, "/settings/agents", url.Values{"name": {"Reviewer"}, "instructions": {"Review."}, "tools": {"view", "find_files"}, "mode": {"plan"}, "model": {agentsTestModel}})
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Location"), "#agent-reviewer") {
		t.Fatalf("create: %d %s", w.Code, w.Header().Get("Location"))
	}
	d, err := e.agents.Get(ctx, "reviewer")
	if err != nil || d.Mode != chat.ModePlan || !slices.Equal(d.Tools, []string{"find_files", "view"}) || d.Model != agentsTestModel {
		t.Fatalf("stored %+v, %v", d, err)
	}
	// Refused: the form comes back as typed, with the field named.
	w = e.form(t, "/settings/agents", url.Values{"name": {"Other"}, "instructions": {"Typed text"}, "tools": {"nope"}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `data-agent-error="tools"`) || !strings.Contains(w.Body.String(), "Typed text") {
		t.Fatalf("unknown tool: %d %s", w.Code, w.Body)
	}
	w = e.form(t, "/settings/agents", url.Values{"name": {"Other"}, "instructions": {"x"}, "model": {"nope/model"}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `data-agent-error="model"`) {
		t.Fatalf("a model that cannot be used: %d", w.Code)
	}
	if list, _ := e.agents.List(ctx); len(list) != 1 {
		t.Fatalf("%d agents after refusals", len(list))
	}
	// Edit.
	w = e.form(t, "/settings/agents/reviewer", url.Values{"name": {"Reviewer"}, "instructions": {"Review harder."}, "mode": {"build"}, "policy-execute": {"deny"}})
	if d, _ := e.agents.Get(ctx, "reviewer"); w.Code != http.StatusSeeOther || d.Instructions != "Review harder." || len(d.Tools) != 0 || d.Policies["execute"] != "deny" {
		t.Fatalf("edit: %d %+v", w.Code, d)
	}
	// Duplicate opens the copy's page.
	w = e.form(t, "/settings/agents/reviewer/duplicate", nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings/agents/reviewer-copy" {
		t.Fatalf("duplicate: %d %s", w.Code, w.Header().Get("Location"))
	}
	// The built-in agent: a page to view, no save; not deleted.
	page := e.page(t, "/settings/agents/parley")
	if !strings.Contains(page, "You are Parley.") || strings.Contains(page, `id="agent-save"`) {
		t.Fatal("the built-in agent's page")
	}
	if w := e.form(t, "/settings/agents/parley", url.Values{"name": {"Mine"}, "instructions": {"x"}}); w.Code == http.StatusSeeOther {
		t.Fatal("the built-in agent was changed")
	}
	if w := e.form(t, "/settings/agents/parley/delete", nil); w.Code == http.StatusSeeOther {
		t.Fatal("the built-in agent was deleted")
	}
	// Delete.
	if w := e.form(t, "/settings/agents/reviewer/delete", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("delete: %d", w.Code)
	}
	if _, err := e.agents.Get(ctx, "reviewer"); err == nil {
		t.Fatal("not deleted")
	}
	// Export: a JSON file to download.
	w = do(e.h, "GET", "/settings/agents/reviewer-copy/export", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Disposition"), `filename="reviewer-copy.agent.json"`) || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("export: %d %s", w.Code, w.Header())
	}
	// A new chat with the agent keeps it.
	w = e.form(t, "/threads", url.Values{"text": {"Hi"}, "agent": {"reviewer-copy"}, "mode": {"build"}, "model": {agentsTestModel}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("new chat: %d %s", w.Code, w.Body)
	}
	id := strings.TrimPrefix(w.Header().Get("Location"), "/t/")
	th, err := e.rt.GetThread(ctx, id)
	if err != nil || chat.Of(th).Agent != "reviewer-copy" {
		t.Fatalf("the new chat's agent: %+v, %v", chat.Of(th), err)
	}
	_ = e.rt.Wait(ctx, id)
}

// TestAgentsImportRefusesBadFiles: an upload that is not an agent file is
// refused with the field named, and nothing is stored; a good one is.
func TestAgentsImportRefusesBadFiles(t *testing.T) {
	e := newAgentsEnv(t)
	good := func(agent string) []byte {
		return []byte(`{"format":"parley-agent","version":1,"agent":` + agent + `}`)
	}
	for _, c := range []struct {
		file []byte
		want string
	}{
		{good(`{"name":"Big","instructions":"` + strings.Repeat("x", 10<<20) + `","tools":[]}`), "instructions: 10.0 MiB is too long"},
		{good(`{"name":"T","instructions":"x","tools":["view","format_disk"]}`), `tools: &#34;format_disk&#34; is not one of Parley`},
		{good(`{"name":["no"],"instructions":"x","tools":[]}`), "name: must be a string"},
		{good(`{"name":"M","instructions":"x","tools":[],"mode":"<script>"}`), "mode: &#34;&lt;script&gt;&#34; is not a mode"},
		{[]byte(`{"format":"other"}`), "format:"},
		{[]byte(`<html>`), "the file is not JSON"},
	} {
		w := e.upload(t, c.file)
		if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "Not imported: "+c.want) {
			i := strings.Index(w.Body.String(), "Not imported")
			t.Errorf("import %.60s: %d, want %q in %.300s", c.file, w.Code, c.want, w.Body.String()[max(i, 0):])
		}
	}
	if list, _ := e.agents.List(t.Context()); len(list) != 0 {
		t.Fatalf("%d agents stored from bad files", len(list))
	}
	if w := e.upload(t, good(`{"name":"Fine","instructions":"x","tools":["view"]}`)); w.Code != http.StatusSeeOther {
		t.Fatalf("a good file: %d %s", w.Code, w.Body)
	}
}

// TestAPIOwnAgents: GET /api/agents lists the built-in agent and the
// user's (source "stored"), GET /api/agents/{id} each, and generate runs
// one by id, with and without a thread, offering the model only its tools.
func TestAPIOwnAgents(t *testing.T) {
	e := newAgentsEnv(t)
	ctx := t.Context()
	d, err := e.agents.Create(ctx, chat.AgentDef{Name: "Finder", Description: "Finds files.", Instructions: "Only find files.", Tools: []string{"find_files"}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string, status int) map[string]any {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, e.url+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		var v map[string]any
		_ = json.Unmarshal(raw, &v)
		return v
	}
	list := call("GET", "/api/agents", "", 200)
	mine, _ := list[d.ID].(map[string]any)
	if list["parley"] == nil || mine == nil || mine["id"] != d.ID || mine["name"] != "Finder" || mine["source"] != "stored" || mine["instructions"] != "Only find files." {
		t.Fatalf("GET /api/agents = %v", list)
	}
	if tools, _ := mine["tools"].(map[string]any); len(tools) != 1 || tools["find_files"] == nil {
		t.Fatalf("the agent's tools: %v", mine["tools"])
	}
	one := call("GET", "/api/agents/"+d.ID, "", 200)
	if one["name"] != "Finder" || one["description"] != "Finds files." || one["source"] != "stored" {
		t.Fatalf("GET /api/agents/%s = %v", d.ID, one)
	}
	call("GET", "/api/agents/nope", "", 404)
	// The agent's routes know it: its own tools only, its memory.
	call("GET", "/api/agents/"+d.ID+"/tools/find_files", "", 200)
	call("GET", "/api/agents/"+d.ID+"/tools/execute_command", "", 404)
	call("GET", "/api/memory/status?agentId="+d.ID, "", 200)

	offered := func(req scripted.Request) []string {
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		return names
	}
	// Without a thread.
	e.model.Push(scripted.Reply{Text: "Found."})
	out := call("POST", "/api/agents/"+d.ID+"/generate", `{"messages":"Find it"}`, 200)
	reqs := e.model.Requests()
	if out["text"] != "Found." || !slices.Equal(offered(reqs[len(reqs)-1]), []string{"find_files"}) || !strings.Contains(string(reqs[len(reqs)-1].Body), "Only find files.") {
		t.Fatalf("generate without a thread: %v; offered %v", out, offered(reqs[len(reqs)-1]))
	}
	// Streamed, as `mastra api agent run` does with --stream.
	e.model.Push(scripted.Reply{Text: "Streamed."})
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/api/agents/"+d.ID+"/stream", strings.NewReader(`{"messages":"Stream it"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	reqs = e.model.Requests()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text":"Streamed"`) || !slices.Equal(offered(reqs[len(reqs)-1]), []string{"find_files"}) {
		t.Fatalf("stream: %d %s; offered %v", resp.StatusCode, body, offered(reqs[len(reqs)-1]))
	}
	// On a thread: the thread is the agent's.
	e.model.Push(scripted.Reply{Text: "Found again."})
	out = call("POST", "/api/agents/"+d.ID+"/generate", `{"messages":"Find it","memory":{"thread":"t1","resource":"me"}}`, 200)
	reqs = e.model.Requests()
	if out["text"] != "Found again." || !slices.Equal(offered(reqs[len(reqs)-1]), []string{"find_files"}) || strings.Contains(string(reqs[len(reqs)-1].Body), "You are Parley.") {
		t.Fatalf("generate on a thread: %v; offered %v", out, offered(reqs[len(reqs)-1]))
	}
	th, err := e.rt.GetThread(ctx, "t1")
	if err != nil || chat.Of(th).Agent != d.ID {
		t.Fatalf("the thread's agent: %+v %v", chat.Of(th), err)
	}
	// The built-in agent on the same thread takes it back.
	e.model.Push(scripted.Reply{Text: "All tools."})
	call("POST", "/api/agents/parley/generate", `{"messages":"Hi","memory":{"thread":"t1","resource":"me"}}`, 200)
	reqs = e.model.Requests()
	if got := offered(reqs[len(reqs)-1]); len(got) != 4 {
		t.Fatalf("the built-in agent offered %v", got)
	}
}
