package ui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
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
// As in Mastra, an execute whose input fails the tool's schema answers 200
// with the tool's error result, {error: true, message, validationErrors}:
// Mastra's text, with dotted paths, zod's wording where the failure has a
// zod equivalent, and the arguments as 2-space JSON.

// maxShownArguments bounds the input echoed in a validation error, as
// Mastra's truncateForLogging does.
const maxShownArguments = 200

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
	a, err := s.apiAgent(id)
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
	if err := tool.ValidateInput(b.Data); err != nil {
		return inputError(toolID(name, tool), tool.InputSchema, b.Data, err)
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
	out, err := s.runTool(ctx, tool, b.Data, tc)
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

// toolInputError is Mastra's result for input that fails a tool's schema
// (validateToolInput in @mastra/core): the call answers 200 with it.
type toolInputError struct {
	Error            bool        `json:"error"`
	Message          string      `json:"message"`
	ValidationErrors fieldErrors `json:"validationErrors"`
}

// fieldErrors is Mastra's buildFormattedErrors: the messages at a path, and
// those below it by key.
type fieldErrors struct {
	Errors []string                `json:"errors"`
	Fields map[string]*fieldErrors `json:"fields"`
}

func (f *fieldErrors) add(path []string, msg string) {
	for _, key := range path {
		next := f.Fields[key]
		if next == nil {
			next = &fieldErrors{Errors: []string{}, Fields: map[string]*fieldErrors{}}
			f.Fields[key] = next
		}
		f = next
	}
	f.Errors = append(f.Errors, msg)
}

// inputError is Mastra's validation result for data that fails the input
// schema, one issue per failure the validator names.
func inputError(id string, schema, data json.RawMessage, err error) (any, error) {
	var se *agentcore.SchemaError
	if !errors.As(err, &se) {
		return nil, fmt.Errorf("tool %s cannot validate its input: %w", id, err)
	}
	out := toolInputError{Error: true, ValidationErrors: fieldErrors{Errors: []string{}, Fields: map[string]*fieldErrors{}}}
	var lines []string
	for _, p := range se.Problems {
		for _, is := range zodIssues(schema, p) {
			out.ValidationErrors.add(is.path, is.msg)
			lines = append(lines, "- "+cmp.Or(strings.Join(is.path, "."), "root")+": "+is.msg)
		}
	}
	out.Message = fmt.Sprintf("Tool input validation failed for %s. Please fix the following errors and try again:\n%s\n\nProvided arguments: %s",
		id, strings.Join(lines, "\n"), shownArguments(data))
	return out, nil
}

// shownArguments is Mastra's truncateForLogging: the input as 2-space JSON
// in its own key order, cut at 200 characters.
func shownArguments(data json.RawMessage) string {
	var b bytes.Buffer
	shown := string(data)
	if json.Indent(&b, data, "", "  ") == nil {
		shown = b.String()
	}
	if r := []rune(shown); len(r) > maxShownArguments {
		shown = string(r[:maxShownArguments]) + "... (truncated)"
	}
	return shown
}

type zodIssue struct {
	path []string
	msg  string
}

var (
	missingProps = regexp.MustCompile(`^missing properties: (.+)$`)
	extraProps   = regexp.MustCompile(`^additionalProperties (.+) not allowed$`)
	quoted       = regexp.MustCompile(`'([^']*)'`)
	wrongType    = regexp.MustCompile(`^expected (\w+), but got (\w+)$`)
	oneOf        = regexp.MustCompile(`^value must be one of (.+)$`)
)

// zodIssues turns one of the validator's problems ("/a/0: message") into
// the issues zod reports for it: a dotted path and zod's wording for a
// missing property, a wrong type, a value outside an enum and an unknown
// key; other messages are kept as the validator wrote them.
func zodIssues(schema json.RawMessage, problem string) []zodIssue {
	loc, msg, _ := strings.Cut(problem, ": ")
	var path []string
	if loc != "(root)" && loc != "" {
		for _, k := range strings.Split(strings.TrimPrefix(loc, "/"), "/") {
			path = append(path, strings.NewReplacer("~1", "/", "~0", "~").Replace(k))
		}
	}
	if m := missingProps.FindStringSubmatch(msg); m != nil {
		var out []zodIssue
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			p := append(slices.Clip(path), q[1])
			want := "Invalid input"
			if t := schemaType(schema, p); t != "" {
				want = "Invalid input: expected " + t + ", received undefined"
			}
			out = append(out, zodIssue{p, want})
		}
		return out
	}
	if m := extraProps.FindStringSubmatch(msg); m != nil {
		keys := quoted.FindAllStringSubmatch(m[1], -1)
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = strconv.Quote(k[1])
		}
		word := "key"
		if len(names) > 1 {
			word = "keys"
		}
		return []zodIssue{{path, fmt.Sprintf("Unrecognized %s: %s", word, strings.Join(names, ", "))}}
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		return []zodIssue{{path, "Invalid input: expected " + zodType(m[1]) + ", received " + zodType(m[2])}}
	}
	if m := oneOf.FindStringSubmatch(msg); m != nil {
		return []zodIssue{{path, "Invalid option: expected one of " + strings.ReplaceAll(m[1], ", ", "|")}}
	}
	return []zodIssue{{path, msg}}
}

// zodType names a JSON Schema type as zod does (an integer is a number).
func zodType(t string) string {
	if t == "integer" {
		return "number"
	}
	return t
}

// schemaType is the type the schema gives the value at path, following
// properties and items; "" when the schema does not say.
func schemaType(schema json.RawMessage, path []string) string {
	var node map[string]any
	if json.Unmarshal(schema, &node) != nil {
		return ""
	}
	for _, key := range path {
		var next any
		if props, ok := node["properties"].(map[string]any); ok {
			next = props[key]
		}
		if next == nil {
			next = node["items"]
		}
		if node, _ = next.(map[string]any); node == nil {
			return ""
		}
	}
	t, _ := node["type"].(string)
	return zodType(t)
}
