package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
)

// waitLimit bounds every wait for a server to reach a state; the timeouts
// under test are far shorter.
const waitLimit = 20 * time.Second

func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	m := NewManager(opts)
	t.Cleanup(m.Close)
	return m
}

// stdio is a server that runs this test binary as the given test server.
func stdio(behaviour string) ServerConfig {
	return ServerConfig{Command: os.Args[0], Env: map[string]string{testServerEnv: behaviour}}
}

// waitFor waits until the named server's status satisfies ok.
func waitFor(t *testing.T, m *Manager, name string, ok func(Status) bool) Status {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := m.Changed()
		for _, st := range m.Status() {
			if st.Name == name && ok(st) {
				return st
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("server %s never got there; status %+v", name, m.Status())
		}
	}
}

func inState(s State) func(Status) bool { return func(st Status) bool { return st.State == s } }

func call(t *testing.T, m *Manager, name string, input string) (any, error) {
	t.Helper()
	tool := m.Tools()[name]
	if tool == nil {
		t.Fatalf("no tool %s among %v", name, slices.Sorted(maps.Keys(m.Tools())))
	}
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("input %s refused: %v", input, err)
	}
	return tool.Execute(context.Background(), json.RawMessage(input), &agentcore.ToolContext{ToolName: name})
}

// checkTools lists, calls and fails the test server's tools, as served by
// the server named srv.
func checkTools(t *testing.T, m *Manager, srv string) {
	t.Helper()
	st := waitFor(t, m, srv, inState(StateReady))
	var names []string
	for _, ti := range st.Tools {
		names = append(names, ti.Name)
	}
	want := []string{srv + "_crash", srv + "_echo", srv + "_fail", srv + "_garbage", srv + "_grow", srv + "_hang", srv + "_picture"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	echo := m.Tools()[srv+"_echo"]
	if echo.Description != "Repeat the text." || !strings.Contains(string(echo.InputSchema), `"required":["text"]`) {
		t.Fatalf("echo tool: %q %s", echo.Description, echo.InputSchema)
	}
	if err := echo.ValidateInput(json.RawMessage(`{}`)); err == nil {
		t.Fatal("the server's schema was not applied: {} passed without the required text")
	}
	out, err := call(t, m, srv+"_echo", `{"text":"hi there"}`)
	if err != nil || out != "echo: hi there" {
		t.Fatalf("echo = %v, %v", out, err)
	}
	if _, err := call(t, m, srv+"_fail", `{}`); err == nil || err.Error() != "the disk is full" {
		t.Fatalf("an isError result should come back as the tool's error, got %v", err)
	}
	out, err = call(t, m, srv+"_picture", `{}`)
	if err != nil || out != "a red dot:\n[image: image/png, 16 bytes]" {
		t.Fatalf("picture = %q, %v", out, err)
	}
	if !m.Offers(srv + "_echo") {
		t.Fatal("Offers does not know the server's tool")
	}
}

func TestStdioServer(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "local", Source: "test", Config: stdio("tools")}})
	checkTools(t, m, "local")
}

func TestHTTPServer(t *testing.T) {
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the manager's Close: its streams end first
	m := newManager(t, Options{})
	m.Apply([]Entry{
		{Name: "remote", Config: ServerConfig{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}}},
		{Name: "nokey", Config: ServerConfig{URL: srv.URL}},
	})
	checkTools(t, m, "remote")
	st := waitFor(t, m, "nokey", inState(StateFailed))
	if !strings.Contains(st.Error, "401") && !strings.Contains(strings.ToLower(st.Error), "unauthorized") {
		t.Fatalf("a refused connection should say so: %q", st.Error)
	}
}

// A server that dies shows as failed with its last words, its tools go,
// and a restart brings it back.
func TestServerCrash(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "fragile", Config: stdio("tools")}})
	waitFor(t, m, "fragile", inState(StateReady))
	if _, err := call(t, m, "fragile_crash", `{}`); err == nil {
		t.Fatal("a call whose server died succeeded")
	}
	st := waitFor(t, m, "fragile", inState(StateFailed))
	if !strings.Contains(st.Error, "crashing on purpose") {
		t.Fatalf("the failure should quote the server's stderr: %q", st.Error)
	}
	if len(m.Tools()) != 0 {
		t.Fatalf("a dead server's tools are still offered: %v", slices.Collect(maps.Keys(m.Tools())))
	}
	if !m.Offers("fragile_echo") {
		t.Fatal("a dead server's tool lost its mcp category")
	}
	if err := m.Restart("fragile"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, "fragile", inState(StateReady))
	if out, err := call(t, m, "fragile_echo", `{"text":"back"}`); err != nil || out != "echo: back" {
		t.Fatalf("after restart: %v, %v", out, err)
	}
	if err := m.Restart("nobody"); err == nil {
		t.Fatal("restarting an unknown server succeeded")
	}
}

// A server that ignores its shutdown neither keeps Close (and so Parley's
// quit) waiting for ever nor outlives it: it is killed.
func TestCloseStubbornServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := stdio("stubborn")
	cfg.Env[testServerEnv+"_PID"] = pidFile
	m := NewManager(Options{Log: slog.New(slog.DiscardHandler)})
	m.Apply([]Entry{{Name: "stubborn", Config: cfg}})
	waitFor(t, m, "stubborn", inState(StateReady))
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(raw))
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("Close still waits for a server that ignores its shutdown")
	}
	if err := m.Restart("stubborn"); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("restart after Close: %v", err)
	}
	for deadline := time.Now().Add(waitLimit); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stubborn server (pid %d) outlived Close", pid)
		}
	}
}

// A call the server never answers ends at the call timeout with an error
// the model can read; the server stays up and says what happened.
func TestCallTimeout(t *testing.T) {
	m := newManager(t, Options{CallTimeout: 300 * time.Millisecond})
	m.Apply([]Entry{{Name: "slow", Config: stdio("tools")}})
	waitFor(t, m, "slow", inState(StateReady))
	_, err := call(t, m, "slow_hang", `{}`)
	if err == nil || !strings.Contains(err.Error(), "did not answer the call to hang within 300ms") {
		t.Fatalf("hang: %v", err)
	}
	st := waitFor(t, m, "slow", func(st Status) bool { return st.Error != "" })
	if st.State != StateReady || !strings.Contains(st.Error, "no answer within 300ms") {
		t.Fatalf("status after a timeout: %+v", st)
	}
	if out, err := call(t, m, "slow_echo", `{"text":"still here"}`); err != nil || out != "echo: still here" {
		t.Fatalf("after a timeout: %v, %v", out, err)
	}
}

// Servers that cannot start fail on their own, with the reason, while
// Apply returns at once and the good server next to them comes up.
func TestStartFailures(t *testing.T) {
	m := newManager(t, Options{StartTimeout: 500 * time.Millisecond})
	m.Apply([]Entry{
		{Name: "good", Config: stdio("tools")},
		{Name: "missing", Config: ServerConfig{Command: "parley-no-such-mcp-server"}},
		{Name: "dies", Config: stdio("exit-at-start")},
		{Name: "silent", Config: stdio("silent")},
		{Name: "empty", Config: ServerConfig{Args: []string{"x"}}},
		{Name: "both", Config: ServerConfig{Command: "x", URL: "http://127.0.0.1:1/"}},
		{Name: "ftp", Config: ServerConfig{URL: "ftp://example.com/mcp"}},
		{Name: "old", Config: ServerConfig{Type: "sse", URL: "http://127.0.0.1:1/sse"}},
		{Name: "off", Config: ServerConfig{Command: "x", Disabled: true}},
		{Name: "bad name!", Config: stdio("tools")},
	})
	for name, want := range map[string]string{
		"missing":   "executable file not found",
		"dies":      "GITHUB_TOKEN is not set",
		"silent":    "no answer within 500ms",
		"empty":     "a stdio server needs a command",
		"both":      "not both",
		"ftp":       `"ftp://example.com/mcp" is not an http(s) address`,
		"old":       `type "sse"`,
		"bad name!": "server name",
	} {
		st := waitFor(t, m, name, inState(StateFailed))
		if !strings.Contains(st.Error, want) {
			t.Errorf("%s: error %q, want it to mention %q", name, st.Error, want)
		}
	}
	if st := waitFor(t, m, "off", inState(StateStopped)); st.Error != "disabled" {
		t.Errorf("disabled server: %+v", st)
	}
	waitFor(t, m, "good", inState(StateReady))
	if tools := m.Tools(); len(tools) != 7 || tools["good_echo"] == nil {
		t.Fatalf("tools with failed servers around: %v", slices.Collect(maps.Keys(tools)))
	}
}

// A tool added at run time reaches the agent through list_changed.
func TestToolListChanged(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "live", Config: stdio("tools")}})
	waitFor(t, m, "live", inState(StateReady))
	if _, ok := m.Tools()["live_extra"]; ok {
		t.Fatal("extra exists before it was added")
	}
	if out, err := call(t, m, "live_grow", `{}`); err != nil || out != "grown" {
		t.Fatalf("grow: %v, %v", out, err)
	}
	waitFor(t, m, "live", func(st Status) bool {
		return slices.ContainsFunc(st.Tools, func(ti ToolInfo) bool { return ti.Name == "live_extra" })
	})
	if out, err := call(t, m, "live_extra", `{}`); err != nil || out != "extra!" {
		t.Fatalf("extra: %v, %v", out, err)
	}
}

// A server that writes garbage into the protocol stream does not hang the
// call: it fails within the call timeout, and the state says what broke.
func TestGarbageOnStdout(t *testing.T) {
	m := newManager(t, Options{CallTimeout: 2 * time.Second})
	m.Apply([]Entry{{Name: "noisy", Config: stdio("tools")}})
	waitFor(t, m, "noisy", inState(StateReady))
	_, err := call(t, m, "noisy_garbage", `{}`)
	if err == nil || !strings.Contains(err.Error(), `the MCP server "noisy" failed the call to garbage`) {
		t.Fatalf("garbage call: %v", err)
	}
	st := waitFor(t, m, "noisy", func(st Status) bool { return st.Error != "" })
	if !strings.Contains(st.Error, "invalid character") {
		t.Fatalf("the status does not say what broke: %+v", st)
	}
}

// Apply restarts a server whose configuration changed and stops one that
// is gone; Close ends them all.
func TestApplyReconciles(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "a", Config: stdio("tools")}, {Name: "b", Config: stdio("tools")}})
	waitFor(t, m, "a", inState(StateReady))
	waitFor(t, m, "b", inState(StateReady))
	cfg := stdio("tools")
	cfg.Args = []string{"-test.run=^$"}
	m.Apply([]Entry{{Name: "a", Config: cfg}})
	if st := m.Status(); len(st) != 1 || st[0].Name != "a" {
		t.Fatalf("after removing b: %+v", st)
	}
	if _, ok := m.Tools()["b_echo"]; ok {
		t.Fatal("a removed server's tools are still offered")
	}
	st := waitFor(t, m, "a", inState(StateReady))
	if !strings.HasSuffix(st.Target, "-test.run=^$") {
		t.Fatalf("changed server runs %q", st.Target)
	}
	m.Close()
	if len(m.Tools()) != 0 || len(m.Status()) != 0 {
		t.Fatal("Close left servers behind")
	}
}

// An agent run calls a server's tool by its agent name: what the model
// sends goes to the server, and what the server answers comes back.
func TestAgentCallsServerTool(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "docs", Config: stdio("tools")}})
	waitFor(t, m, "docs", inState(StateReady))
	model := scripted.NewServer()
	defer model.Close()
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": model.URL()}, APIKeys: map[string]string{"openai-compatible": "k"},
		Getenv: func(string) string { return "" }, MaxRetries: -1}
	a := &agentcore.Agent{ID: "a", Model: "openai-compatible/test", ToolSource: m.Tools, Log: slog.New(slog.DiscardHandler),
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }}
	model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "docs_echo", Args: `{"text":"from the model"}`}, {ID: "c2", Name: "docs_fail", Args: `{}`}}},
		scripted.Reply{Text: "done"})
	res, err := a.Generate(context.Background(), []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("go")}}, agentcore.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range res.ToolResults {
		got[e.ToolName] = string(e.Result)
		if e.ToolName == "docs_fail" && !e.IsError {
			t.Error("an isError result reached the model as a success")
		}
	}
	if got["docs_echo"] != `"echo: from the model"` || !strings.Contains(got["docs_fail"], "the disk is full") {
		t.Fatalf("results %v", got)
	}
	var offered []string
	for _, tl := range model.Requests()[0].Tools {
		offered = append(offered, tl.Function.Name)
	}
	if !slices.Contains(offered, "docs_echo") || !strings.Contains(string(model.Requests()[0].Tools[0].Function.Parameters), `"type":"object"`) {
		t.Fatalf("offered %v", offered)
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, c := range []struct{ server, tool, want string }{
		{"github", "create_issue", "github_create_issue"},
		{"my.server", "read file", "my_server_read_file"},
		{"fs", "ünïcode/tool", "fs__n_code_tool"},
		{"1password", "get", "_1password_get"},
		{"s", long, ""},
	} {
		got := ToolName(c.server, c.tool)
		if c.want != "" && got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if len(got) > maxToolName || strings.Trim(got, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("ToolName(%q, %q) = %q is not provider-legal", c.server, c.tool, got)
		}
	}
	if ToolName("s", long) == ToolName("s", long+"y") {
		t.Error("two long names cut to the same name")
	}
}

func TestParseFile(t *testing.T) {
	servers, err := ParseFile([]byte(`{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}},
		"remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "autoApprove": []},
		"typed": {"type": "streamable-http", "url": "https://example.com/mcp"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	if fs := servers["fs"]; fs.Transport() != TransportStdio || fs.Target() != "npx -y @modelcontextprotocol/server-filesystem /tmp" || fs.Env["DEBUG"] != "1" || fs.Validate() != nil {
		t.Errorf("fs: %+v", fs)
	}
	if r := servers["remote"]; r.Transport() != TransportHTTP || r.Headers["Authorization"] != "Bearer x" || r.Validate() != nil {
		t.Errorf("remote: %+v", r)
	}
	if ty := servers["typed"]; ty.Transport() != TransportHTTP || ty.Validate() != nil {
		t.Errorf("typed: %+v", ty)
	}
	for _, bad := range []struct{ doc, want string }{
		{`[1,2]`, "not JSON of the form"},
		{`{"servers": {}}`, `no "mcpServers" object`},
		{`{"mcpServers": {"x": {"command": 3}}}`, `server "x"`},
		{`{"mcpServers": `, "not JSON of the form"},
	} {
		if _, err := ParseFile([]byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseFile(%s) = %v, want %q", bad.doc, err, bad.want)
		}
	}
	if s, err := ParseFile([]byte("  \n")); err != nil || len(s) != 0 {
		t.Errorf("an empty file: %v %v", s, err)
	}
}
