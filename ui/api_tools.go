package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"

	"parley/agentcore"
)

// The tool API follows npm @mastra/server dist/server/handlers/tools.js: the
// default agent's tools — its own, and its sub-agents and workflows as the
// model sees them — listed by the name the model calls them, read, and run
// directly: no model, no thread, no tool hooks. The agent routes
// (/api/agents/:agentId/tools/:toolId[/execute]) do the same with the
// named agent's tools.
//
// As in Mastra, an execute drops the keys the tool's schema does not
// declare, and one whose input fails the schema answers 200 with the
// tool's error result, {error: true, message, validationErrors}
// (agentcore.Tool.CheckInput, which a run's calls go through too).

var errToolNotFound = &apiError{http.StatusNotFound, "Tool not found"}

// toolView is Mastra's serialized tool (serializedToolSchema). Schemas are
// strings holding SuperJSON, {"json": <JSON Schema>}, as Mastra's
// stringify(schema) writes them; Mastra's clients parse them back.
type toolView struct {
	ID           string `json:"id"`
	Description  string `json:"description,omitempty"`
	InputSchema  string `json:"inputSchema,omitempty"`
	OutputSchema string `json:"outputSchema,omitempty"`
	// RequireApproval is always false: whether a call waits for approval is
	// the chat's policy (Settings), not the tool's.
	RequireApproval bool `json:"requireApproval"`
}

func newToolView(name string, t *agentcore.Tool) toolView {
	return toolView{
		ID: toolID(name, t), Description: t.Description,
		InputSchema: superJSON(t.InputSchema), OutputSchema: superJSON(t.OutputSchema),
	}
}

// toolID is the tool's id, or else the name it is called by, so that every
// listed id can be looked up again.
func toolID(name string, t *agentcore.Tool) string { return cmp.Or(t.ID, name) }

// superJSON is SuperJSON's stringify of a plain JSON value. An absent or
// invalid schema is left out, as Mastra leaves out one it cannot serialize.
func superJSON(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	b, err := json.Marshal(struct {
		JSON json.RawMessage `json:"json"`
	}{schema})
	if err != nil {
		return ""
	}
	return string(b)
}

// toolSet is the default agent and the tools it offers the model.
func (s *Server) toolSet() (*agentcore.Agent, map[string]*agentcore.Tool) {
	a, err := s.rt.Agent("")
	if err != nil {
		return nil, nil // no agent, no tools
	}
	return a, a.ToolSet()
}

// toolsOf is the agent a tool route names ({agentId}, else the default
// agent) and its tools.
func (s *Server) toolsOf(r *http.Request) (*agentcore.Agent, map[string]*agentcore.Tool, error) {
	id := r.PathValue("agentId")
	if id == "" { // /api/tools: the route pattern gives an agent route its id
		a, set := s.toolSet()
		return a, set, nil
	}
	a, err := s.apiAgentIn(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	return a, a.Tools, nil // its own tools, as Mastra's agent.listTools() and GET /api/agents/:id
}

// findTool finds a tool by the name the model calls it, else by its id:
// Mastra looks tools up by id, and `mastra api tool list` shows ids only.
func findTool(set map[string]*agentcore.Tool, id string) (string, *agentcore.Tool, error) {
	if t, ok := set[id]; ok {
		return id, t, nil
	}
	// In name order, so that two tools sharing an id resolve the same way every time.
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if set[name].ID == id {
			return name, set[name], nil
		}
	}
	return "", nil, errToolNotFound
}

// apiListTools answers GET /api/tools: an object keyed by tool name.
func (s *Server) apiListTools(r *http.Request) (any, error) {
	_, set := s.toolSet()
	out := make(map[string]toolView, len(set))
	for name, t := range set {
		out[name] = newToolView(name, t)
	}
	return out, nil
}

// apiGetTool answers GET /api/tools/:toolId and
// GET /api/agents/:agentId/tools/:toolId.
func (s *Server) apiGetTool(r *http.Request) (any, error) {
	_, set, err := s.toolsOf(r)
	if err != nil {
		return nil, err
	}
	name, t, err := findTool(set, r.PathValue("toolId"))
	if err != nil {
		return nil, err
	}
	return newToolView(name, t), nil
}

// toolBody is Mastra's executeToolContextBodySchema, plus the thread and
// resource the call is made for: Parley hands them to the tool, Mastra's
// server ignores them.
type toolBody struct {
	Data           json.RawMessage `json:"data"`
	ThreadID       string          `json:"threadId"`
	ResourceID     string          `json:"resourceId"`
	RequestContext map[string]any  `json:"requestContext"`
}

// apiExecuteTool answers POST /api/tools/:toolId/execute?runId and
// POST /api/agents/:agentId/tools/:toolId/execute with the tool's raw
// output, as Mastra does. The checks come in Mastra's order: the body, the
// agent, the tool, the data, then the data against the input schema.
func (s *Server) apiExecuteTool(r *http.Request) (any, error) {
	var b toolBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if len(b.Data) == 0 {
		return nil, &issuesError{"Invalid request body", []apiIssue{{Field: "data", Message: "data is required"}}}
	}
	agent, set, err := s.toolsOf(r)
	if err != nil {
		return nil, err
	}
	name, tool, err := findTool(set, r.PathValue("toolId"))
	if err != nil {
		return nil, err
	}
	if tool.Execute == nil {
		return nil, badRequest("Tool is not executable")
	}
	if r.PathValue("agentId") == "" && falsy(b.Data) {
		// Mastra's validateBody refuses any falsy data (null, false, 0, "")
		// on /api/tools; its agent route hands it to the tool.
		return nil, badRequest(`Argument "data" is required`)
	}
	data, invalid, err := tool.CheckInput(toolID(name, tool), b.Data)
	switch {
	case err != nil:
		return nil, err
	case invalid != nil:
		return invalid, nil
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel) // server shutdown ends the call
	defer stop()
	tc := &agentcore.ToolContext{
		ToolCallID: agentcore.NewID(), // tools may key what they keep by it
		ToolName:   name, AgentID: agent.ID, RunID: r.URL.Query().Get("runId"),
		ThreadID: b.ThreadID, ResourceID: b.ResourceID, RequestContext: b.RequestContext,
		Suspendable: false, // no run to suspend: a tool that asks the user answers without asking
	}
	out, err := s.runTool(ctx, tool, data, tc)
	var suspended *agentcore.SuspendError
	switch {
	case err != nil && s.ctx.Err() != nil:
		return nil, &apiError{http.StatusServiceUnavailable, "Parley is shutting down"}
	case errors.As(err, &suspended):
		return nil, &apiError{http.StatusConflict, fmt.Sprintf("Tool %s suspended to ask the user, which a direct call cannot do: call it from a chat", name)}
	case err != nil:
		// Mastra's handleError: the tool's message, 500. Wrapped, so that
		// an error the tool wraps (not found, busy) is not taken for the request's.
		return nil, &apiError{http.StatusInternalServerError, err.Error()}
	}
	if err := tool.ValidateOutput(out); err != nil {
		return nil, fmt.Errorf("tool %s returned output that does not match its output schema:\n- %s",
			name, strings.ReplaceAll(err.Error(), "\n", "\n- "))
	}
	// Encoded here, not by writeJSON: output that is not JSON must fail
	// before the 200 is sent.
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool %s returned output that is not JSON: %w", name, err)
	}
	return json.RawMessage(raw), nil
}

// runTool calls the tool; a panic becomes an error, as it does in a run.
func (s *Server) runTool(ctx context.Context, t *agentcore.Tool, input json.RawMessage, tc *agentcore.ToolContext) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("tool panicked", "tool", tc.ToolName, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("tool %s crashed: %v", tc.ToolName, p)
		}
	}()
	return t.Execute(ctx, input, tc)
}

// falsy reports whether data is what JavaScript takes for false.
func falsy(data json.RawMessage) bool {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	}
	return false
}
