package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore/hostile"
)

// hostileToolNames are tool names a hostile server could give: each breaks
// out of a JavaScript string, an HTML attribute, a script element or a URL
// path if used unescaped.
var hostileToolNames = hostile.IDs()

// newHostileServer serves a tool under each hostile name, and one named by
// the MCP rule ("ok.tool").
func newHostileServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "parley-hostile", Version: "1.0.0"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}) // it logs each bad name
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	answer := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	for _, name := range append(hostileToolNames, "ok.tool") {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: empty}, answer)
	}
	return s
}

// A server's tools whose names break the MCP rule are refused, each named
// (clipped) in the server's status; its other tools are offered.
func TestHostileToolNamesRefused(t *testing.T) {
	m := newManager(t, Options{})
	m.Apply([]Entry{{Name: "srv", Source: "test", Config: stdio("hostile")}})
	st := waitFor(t, m, "srv", inState(StateReady))
	if len(st.Tools) != 1 || st.Tools[0].Name != "srv_ok_tool" || st.Tools[0].MCPName != "ok.tool" {
		t.Fatalf("tools offered %+v, want only srv_ok_tool", st.Tools)
	}
	if got := len(m.Tools()); got != 1 {
		t.Fatalf("%d tools offered to the agent, want 1", got)
	}
	if n := strings.Count(st.Error, "(the MCP rule for tool names)"); n != len(hostileToolNames) {
		t.Fatalf("the status names %d refused tools, want %d: %.500s", n, len(hostileToolNames), st.Error)
	}
	if len(st.Error) > 200*len(hostileToolNames) {
		t.Fatalf("the status is %d bytes: a refused name is not clipped", len(st.Error))
	}
	if out, err := call(t, m, "srv_ok_tool", `{}`); err != nil || out != "ok" {
		t.Fatalf("srv_ok_tool = %v, %v", out, err)
	}
}

func TestCheckMCPName(t *testing.T) {
	for _, ok := range []string{"a", "read_file", "github.search-issues", strings.Repeat("x", maxMCPName)} {
		if err := checkMCPName(ok); err != nil {
			t.Errorf("checkMCPName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range append(hostileToolNames, "", strings.Repeat("x", maxMCPName+1), "a/b", "é") {
		if err := checkMCPName(bad); err == nil {
			t.Errorf("checkMCPName(%.40q) = nil, want an error", bad)
		}
	}
}
