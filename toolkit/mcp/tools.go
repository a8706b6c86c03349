package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
)

// maxToolName is the longest tool name every provider accepts (OpenAI,
// Anthropic and Google all take [A-Za-z0-9_-]{1,64}; Google wants a letter
// or '_' first).
const maxToolName = 64

// maxMCPName is the longest tool name a server may give (the MCP rule for
// tool names: 1 to 128 letters, digits, '_', '-' or '.').
const maxMCPName = 128

// checkMCPName says why a server's name for a tool is refused, if it is. A
// server is another program: its names reach the settings page and, as
// the agent's tool names (ToolName), the tool cards. A name outside the
// MCP rule is refused rather than repaired, so the tool the user sees is
// the tool the server has.
func checkMCPName(name string) error {
	if name == "" {
		return errors.New("a tool without a name left out")
	}
	ok := len(name) <= maxMCPName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	if !ok {
		return fmt.Errorf("tool %.40q left out: its name is not 1 to %d letters, digits, '_', '-' or '.' (the MCP rule for tool names)", name, maxMCPName)
	}
	return nil
}

// maxResult bounds the text of one result the model is sent: a server
// that dumps megabytes must not flood the context window.
const maxResult = 64 << 10

// ToolName is the name the agent calls a server's tool by:
// "<server>_<tool>", with anything providers refuse replaced by '_', and
// cut to 64 characters with a short hash of the original when too long.
func ToolName(server, tool string) string {
	var b strings.Builder
	for _, r := range server + "_" + tool {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		name = "_" + name
	}
	if len(name) > maxToolName {
		sum := sha256.Sum256([]byte(server + "\x00" + tool))
		name = name[:maxToolName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return name
}

// list fetches the server's tools as agent tools. Tools that cannot be
// offered (a schema that does not compile, a name clash) are left out and
// named in problems.
func (s *server) list(ctx context.Context, session *mcp.ClientSession) (map[string]*agentcore.Tool, []ToolInfo, string, error) {
	var all []*mcp.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, "", err
		}
		all = append(all, t)
	}
	slices.SortFunc(all, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	tools := map[string]*agentcore.Tool{}
	var info []ToolInfo
	var problems []string
	for _, t := range all {
		if err := checkMCPName(t.Name); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		name := ToolName(s.name, t.Name)
		if _, dup := tools[name]; dup {
			problems = append(problems, fmt.Sprintf("tool %q left out: its name %s is taken by another of its tools", t.Name, name))
			continue
		}
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			problems = append(problems, fmt.Sprintf("tool %q left out: %v", t.Name, err))
			continue
		}
		tool := &agentcore.Tool{
			ID:          name,
			Description: description(s.name, t),
			InputSchema: schema,
			Execute:     s.caller(t.Name),
		}
		if err := tool.ValidateInput(json.RawMessage(`{}`)); err != nil {
			var se *agentcore.SchemaError
			if !errors.As(err, &se) {
				problems = append(problems, fmt.Sprintf("tool %q left out: its input schema does not compile: %v", t.Name, err))
				continue
			}
		}
		tools[name] = tool
		info = append(info, ToolInfo{Name: name, MCPName: t.Name, Description: t.Description})
	}
	return tools, info, strings.Join(problems, "\n"), nil
}

// inputSchema is the tool's input schema as JSON: an object schema, as the
// providers require.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("its input schema is not JSON: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, fmt.Errorf("its input schema has type %v, not object", t)
	}
	return b, nil
}

func description(server string, t *mcp.Tool) string {
	d := strings.TrimSpace(t.Description)
	if d == "" {
		d = t.Title
	}
	if d == "" {
		d = fmt.Sprintf("The %s tool of the %s MCP server.", t.Name, server)
	}
	return d
}

// caller runs the server's tool name. A result the server marks isError,
// a failure of the server and a call it leaves unanswered all come back to
// the model as a tool error.
func (s *server) caller(name string) func(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
	return func(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		s.m.mu.Lock()
		session, state, why := s.session, s.state, s.err
		s.m.mu.Unlock()
		if session == nil || state != StateReady {
			if why != "" {
				return nil, fmt.Errorf("the MCP server %q is not running (%s: %s)", s.name, state, why)
			}
			return nil, fmt.Errorf("the MCP server %q is not running (%s)", s.name, state)
		}
		limit := s.m.opts.CallTimeout
		cctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		res, err := session.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: input})
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, context.Cause(ctx) // the run was stopped
		case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
			msg := fmt.Sprintf("The MCP server %q did not answer the call to %s within %s; the call was cancelled.", s.name, name, limit)
			s.note(fmt.Sprintf("tools/call %s: no answer within %s", name, limit))
			return nil, errors.New(msg)
		case err != nil:
			s.note(fmt.Sprintf("tools/call %s: %v", name, err))
			return nil, fmt.Errorf("the MCP server %q failed the call to %s: %w", s.name, name, err)
		}
		text := resultText(res)
		if res.IsError {
			if text == "" {
				text = "the tool reported an error without a message"
			}
			return nil, errors.New(text)
		}
		return text, nil
	}
}

// note records the last thing that went wrong with a running server.
func (s *server) note(msg string) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.state == StateReady {
		s.err = msg
		s.m.rebuildLocked()
	}
}

// resultText is what the model reads of a result: its text parts joined,
// other parts named, the structured content when there is nothing else.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource: %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource: %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResult {
		text = strings.ToValidUTF8(text[:maxResult], "") + fmt.Sprintf("\n[… %d more bytes left out]", len(text)-maxResult)
	}
	return text
}
