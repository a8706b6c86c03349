package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore/scripted"
	pmcp "parley/toolkit/mcp"
)

// served is a wired Parley answering on a loopback port.
type served struct {
	in  *Instance
	url string
	dir string
}

func serveParley(t *testing.T, prepare func(dir string)) *served {
	t.Helper()
	return serveModel(t, prepare, DemoModel)
}

// serveModel is serveParley started with --model model ("" for none).
func serveModel(t *testing.T, prepare func(dir string), model string) *served {
	t.Helper()
	dir := t.TempDir()
	if prepare != nil {
		prepare(dir)
	}
	demo := scripted.NewServer()
	t.Cleanup(demo.Close)
	ctx, cancel := context.WithCancel(context.Background())
	in, err := Open(ctx, Config{DataDir: dir, Workspace: dir, Model: model, Getenv: func(string) string { return "" }},
		Options{Scripted: demo, Keyring: brokenKeyring{}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- in.ServeOn(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; in.Close() })
	return &served{in: in, url: "http://" + ln.Addr().String(), dir: dir}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post sends a same-origin form (or JSON when body is not url.Values).
func (s *served) post(t *testing.T, path string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	ctype := "application/x-www-form-urlencoded"
	switch b := body.(type) {
	case url.Values:
		r = strings.NewReader(b.Encode())
	default:
		j, _ := json.Marshal(b)
		r, ctype = bytes.NewReader(j), "application/json"
	}
	req, _ := http.NewRequest(http.MethodPost, s.url+path, r)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Origin", s.url)
	req.Header.Set("Authorization", "Bearer "+s.in.Config.Token)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *served) get(t *testing.T, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.in.Config.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// A key saved in Settings is used, kept out of the database and never
// shown again; the connection test makes a real request with it.
func TestSettingsProviderKey(t *testing.T) {
	compat := scripted.NewServer()
	defer compat.Close()
	s := serveParley(t, nil)
	const key = "sk-compat-secret-7f3a9c1e5b2d4321"

	if code, body := s.post(t, "/settings/providers/openai-compatible/base", url.Values{"url": {compat.URL()}}); code != http.StatusSeeOther {
		t.Fatalf("save address: %d %s", code, body)
	}
	if code, body := s.post(t, "/settings/providers/openai-compatible/key", url.Values{"key": {key}}); code != http.StatusSeeOther {
		t.Fatalf("save key: %d %s", code, body)
	}
	page := s.get(t, "/settings")
	if strings.Contains(page, key) || strings.Contains(page, key[:20]) {
		t.Fatal("the settings page shows the key")
	}
	if !strings.Contains(page, "Saved (ends in 4321)") {
		t.Fatalf("the page does not say the key is saved:\n%s", page)
	}
	if !strings.Contains(page, "No OS keyring could be used") {
		t.Fatal("the page does not say where keys went")
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "keys.json"))
	if err != nil || !strings.Contains(string(b), key) {
		t.Fatalf("keys.json: %s %v", b, err)
	}
	for _, f := range []string{"parley.db", "parley.db-wal"} {
		if db, _ := os.ReadFile(filepath.Join(s.dir, f)); bytes.Contains(db, []byte(key)) {
			t.Fatalf("the key is in %s", f)
		}
	}

	code, body := s.post(t, "/settings/providers/openai-compatible/test", map[string]any{})
	if code != http.StatusOK || !strings.Contains(body, "connected: 1 models offered") || !strings.Contains(body, `id="test-openai-compatible"`) {
		t.Fatalf("test connection: %d %s", code, body)
	}
	a, _ := s.in.Runtime.Agent("")
	if _, err := a.Models("openai-compatible/scripted"); err != nil {
		t.Fatalf("a model of the configured provider cannot be opened: %v", err)
	}

	code, body = s.post(t, "/settings/providers/openai/key", url.Values{"key": {"sk bad key"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "spaces or control characters") || strings.Contains(body, "sk bad key") {
		t.Fatalf("a bad key: %d", code)
	}
	code, body = s.post(t, "/settings/providers/openai/test", map[string]any{})
	if !strings.Contains(body, "no API key") || !strings.Contains(body, "failed") {
		t.Fatalf("test without a key: %d %s", code, body)
	}
	if code, _ := s.post(t, "/settings/providers/openai-compatible/key/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("remove key: %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(s.dir, "keys.json")); strings.Contains(string(b), key) {
		t.Fatal("a removed key stayed in keys.json")
	}
}

func TestSettingsThemeAndModel(t *testing.T) {
	s := serveParley(t, nil)
	if !strings.Contains(s.get(t, "/"), `<html lang="en" data-theme="system"`) {
		t.Fatal("pages do not start on the system theme")
	}
	if code, body := s.post(t, "/settings/theme", map[string]string{"theme": "dark"}); code != http.StatusNoContent {
		t.Fatalf("theme: %d %s", code, body)
	}
	if !strings.Contains(s.get(t, "/"), `<html lang="en" data-theme="dark"`) {
		t.Fatal("the dark theme is not applied to pages")
	}
	if code, _ := s.post(t, "/settings/theme", map[string]string{"theme": "neon"}); code != http.StatusBadRequest {
		t.Fatalf("unknown theme: %d", code)
	}
	code, body := s.post(t, "/settings/model", url.Values{"model": {"openai/gpt-4.1"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "OPENAI_API_KEY") {
		t.Fatalf("a model without a key: %d", code)
	}
	if code, _ := s.post(t, "/settings/model", url.Values{"model": {DemoModel}}); code != http.StatusSeeOther {
		t.Fatalf("save default model: %d", code)
	}
	p, err := loadPreferences(context.Background(), s.in.Store)
	if err != nil || p.DefaultModel != DemoModel || p.Theme != "dark" {
		t.Fatalf("preferences %+v %v", p, err)
	}
}

// mcpHTTPServer is a streamable-HTTP MCP server with one tool, echo.
func mcpHTTPServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Repeat.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

func waitMCP(t *testing.T, m *pmcp.Manager, name string, state pmcp.State) pmcp.Status {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ch := m.Changed()
		for _, st := range m.Status() {
			if st.Name == name && st.State == state {
				return st
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s never became %s: %+v", name, state, m.Status())
		}
	}
}

// Servers come from mcp.json and from Settings; their tools are the
// agent's (and the API's) under the mcp approval category; a broken one
// shows its error without holding up the others.
func TestSettingsMCPServers(t *testing.T) {
	remote := mcpHTTPServer(t)
	s := serveParley(t, func(dir string) {
		doc := `{"mcpServers": {"filed": {"url": "` + remote + `"}, "broken": {"command": "parley-no-such-mcp-server"}}}`
		os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(doc), 0o600)
	})
	waitMCP(t, s.in.MCP, "filed", pmcp.StateReady)
	st := waitMCP(t, s.in.MCP, "broken", pmcp.StateFailed)
	if !strings.Contains(st.Error, "executable file not found") {
		t.Fatalf("broken: %q", st.Error)
	}

	code, body := s.post(t, "/settings/mcp", url.Values{"name": {"added"}, "url": {remote}, "headers": {"X-Team: parley"}})
	if code != http.StatusSeeOther {
		t.Fatalf("add: %d %s", code, body)
	}
	waitMCP(t, s.in.MCP, "added", pmcp.StateReady)
	page := s.get(t, "/settings")
	for _, want := range []string{`data-mcp="filed" data-state="ready"`, `data-mcp="added" data-state="ready"`, `data-mcp="broken" data-state="failed"`,
		`data-tool="added_echo"`, "from mcp.json", "from settings"} {
		if !strings.Contains(page, want) {
			t.Errorf("the settings page lacks %s", want)
		}
	}
	tools := s.get(t, "/api/tools")
	if !strings.Contains(tools, `"filed_echo"`) || !strings.Contains(tools, `"added_echo"`) {
		t.Fatalf("GET /api/tools lacks the MCP tools: %s", tools)
	}
	if !strings.Contains(page, "added_echo, filed_echo") {
		t.Error("the approvals table does not list the MCP tools under mcp")
	}

	// The form keeps what was typed when it is refused.
	code, body = s.post(t, "/settings/mcp", url.Values{"name": {"bad name!"}, "command": {"npx"}, "args": {"-y\nsome-server"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "server name") || !strings.Contains(body, "some-server") {
		t.Fatalf("bad name: %d", code)
	}
	if code, _ := s.post(t, "/settings/mcp", url.Values{"name": {"filed"}, "url": {remote}}); code != http.StatusBadRequest {
		t.Fatal("a Settings server took the name of an mcp.json one")
	}
	form := s.get(t, "/settings?mcp=added")
	if !strings.Contains(form, `name="original" value="added"`) || !strings.Contains(form, "X-Team: parley") {
		t.Fatal("the edit form does not show the server")
	}
	if code, _ := s.post(t, "/settings/mcp/added/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("remove: %d", code)
	}
	if _, ok := s.in.MCP.Tools()["added_echo"]; ok {
		t.Fatal("a removed server's tools are still offered")
	}
	if code, _ := s.post(t, "/settings/mcp/broken/restart", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("restart: %d", code)
	}
}
