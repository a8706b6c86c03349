package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"parley/agentcore"
)

// The JSON API speaks Mastra's server shape (npm @mastra/server,
// dist/server/handlers/agents.js, memory.js and tools.js, and the route schemas in
// dist/server/schemas): same paths, bodies, responses and error bodies
// ({"error": "…"}), so Mastra's own clients (the mastra CLI,
// @mastra/client-js) work against Parley unchanged.

// maxAPIBody bounds a request body: a chat message, not an upload.
const maxAPIBody = 4 << 20

// apiRoutes registers the JSON API in Mastra's server shape.
func (s *Server) apiRoutes(mux *http.ServeMux) {
	s.signalRoutes(mux)
	s.approvalRoutes(mux)
	s.idleRoutes(mux)
	mux.HandleFunc("GET /api/agents", s.api(s.apiListAgents))
	mux.HandleFunc("GET /api/agents/{agentId}", s.api(s.apiGetAgent))
	mux.HandleFunc("POST /api/agents/{agentId}/generate", s.api(s.apiGenerate))
	mux.HandleFunc("POST /api/agents/{agentId}/stream", s.apiStream)
	mux.HandleFunc("POST /api/agents/{agentId}/resume-stream", s.apiResumeStream)
	mux.HandleFunc("GET /api/memory/threads", s.api(s.apiListThreads))
	mux.HandleFunc("POST /api/memory/threads", s.api(s.apiCreateThread))
	mux.HandleFunc("GET /api/memory/threads/{threadId}", s.api(s.apiGetThread))
	mux.HandleFunc("PATCH /api/memory/threads/{threadId}", s.api(s.apiUpdateThread))
	mux.HandleFunc("DELETE /api/memory/threads/{threadId}", s.api(s.apiDeleteThread))
	mux.HandleFunc("GET /api/memory/threads/{threadId}/messages", s.api(s.apiListMessages))
	mux.HandleFunc("GET /api/memory/threads/{threadId}/export", s.apiExport)
	mux.HandleFunc("POST /api/memory/threads/import", s.api(s.apiImport))
	mux.HandleFunc("GET /api/search", s.api(s.apiSearch))
	mux.HandleFunc("GET /api/tools", s.api(s.apiListTools))
	mux.HandleFunc("GET /api/tools/{toolId}", s.api(s.apiGetTool))
	mux.HandleFunc("POST /api/tools/{toolId}/execute", s.api(s.apiExecuteTool))
	mux.HandleFunc("GET /api/agents/{agentId}/tools/{toolId}", s.api(s.apiGetTool))
	mux.HandleFunc("POST /api/agents/{agentId}/tools/{toolId}/execute", s.api(s.apiExecuteTool))
	mux.HandleFunc("GET /api/system/api-schema", s.apiSchema)
	mux.HandleFunc("/api/", s.api(func(r *http.Request) (any, error) {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Parley has no API route %s %s", r.Method, r.URL.Path)}
	}))
}

// apiError is an error with the HTTP status it answers with.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// api adapts a handler returning a JSON value or an error.
func (s *Server) api(h func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h(r)
		if err != nil {
			s.apiFail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// issuesError is a 400 listing what failed validation, field by field, in
// the shape of Mastra's formatZodError: {"error": "…", "issues": [{field, message}]}.
type issuesError struct {
	msg    string
	issues []apiIssue
}

type apiIssue struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *issuesError) Error() string { return e.msg }

// apiFail answers with Mastra's error body, {"error": "…"}.
func (s *Server) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client is gone
	}
	var ie *issuesError
	if errors.As(err, &ie) {
		writeJSON(w, http.StatusBadRequest, struct {
			Error  string     `json:"error"`
			Issues []apiIssue `json:"issues"`
		}{ie.msg, ie.issues})
		return
	}
	code := statusOf(err)
	if code == http.StatusInternalServerError {
		s.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	if s, ok := v.(streamedJSON); ok {
		_ = s.writeJSON(w)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody reads a JSON object into v, naming what is wrong if it cannot.
func decodeBody(r *http.Request, v any) error {
	return decodeBodyUpTo(r, v, maxAPIBody)
}

// decodeBodyUpTo is decodeBody for a body of up to limit bytes.
func decodeBodyUpTo(r *http.Request, v any, limit int64) error {
	err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, limit)).Decode(v)
	var typeErr *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return badRequest("Invalid request body: it is empty, want a JSON object")
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return badRequest("Invalid request body: want a JSON object, not %s", typeErr.Value)
	case errors.As(err, &typeErr):
		return badRequest("Invalid request body: %s must be %s, not %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &tooBig):
		return &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body too large (limit %d bytes)", tooBig.Limit)}
	}
	return badRequest("Invalid request body: %v", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonType names a Go kind the way a JSON client thinks of it.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// agentView is Mastra's serialized agent (serializedAgentSchema). As in
// Mastra, tools are the agent's own (agent.listTools()); its sub-agents and
// workflows, which the model calls as "agent-<key>" and "workflow-<key>"
// tools, are listed under agents and workflows. Parley's agents have no
// skills or processors: those are present and empty, as Mastra sends them.
type agentView struct {
	ID               string                 `json:"id,omitempty"` // in the list only, as Mastra does
	Name             string                 `json:"name"`
	Description      string                 `json:"description,omitempty"`
	Instructions     any                    `json:"instructions"`
	Tools            map[string]toolView    `json:"tools"`
	Agents           map[string]agentRef    `json:"agents"`
	Workflows        map[string]workflowRef `json:"workflows"`
	Skills           []any                  `json:"skills"`
	WorkspaceTools   []string               `json:"workspaceTools"`
	BrowserTools     []string               `json:"browserTools"`
	HasBrowser       bool                   `json:"hasBrowser"`
	InputProcessors  []any                  `json:"inputProcessors"`
	OutputProcessors []any                  `json:"outputProcessors"`
	Provider         string                 `json:"provider,omitempty"`
	ModelID          string                 `json:"modelId,omitempty"`
	SupportsMemory   bool                   `json:"supportsMemory"`
	Source           string                 `json:"source"`
}

// agentRef is a sub-agent as Mastra lists it (serializedAgentDefinitionSchema).
type agentRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// workflowRef is a workflow as Mastra lists an agent's: its name only.
type workflowRef struct {
	Name string `json:"name"`
}

func newAgentView(a *agentcore.Agent) agentView {
	// One system message is shown as the string it was; more as the list.
	var instructions any = a.Instructions
	if len(a.Instructions) == 1 {
		instructions = a.Instructions[0].Content
	}
	tools := make(map[string]toolView, len(a.Tools))
	for name, t := range a.Tools {
		tools[name] = newToolView(name, t)
	}
	agents := make(map[string]agentRef, len(a.Agents))
	for key, sub := range a.Agents {
		agents[key] = agentRef{ID: sub.ID, Name: cmp.Or(sub.Name, key)}
	}
	workflows := make(map[string]workflowRef, len(a.Workflows))
	for key, w := range a.Workflows {
		workflows[key] = workflowRef{Name: cmp.Or(w.ID, key)} // a Parley workflow's id is its name
	}
	provider, modelID := splitModel(a.CurrentModel())
	return agentView{
		Name: a.Name, Description: a.Description, Instructions: instructions,
		Tools: tools, Agents: agents, Workflows: workflows,
		Skills: []any{}, WorkspaceTools: []string{}, BrowserTools: []string{},
		InputProcessors: []any{}, OutputProcessors: []any{},
		Provider: provider, ModelID: modelID, SupportsMemory: true, Source: "code",
	}
}

// splitModel splits "provider/model" as Mastra's parseModelString does: at
// the first slash ("openrouter/anthropic/x" is provider openrouter).
func splitModel(spec string) (provider, modelID string) {
	provider, modelID, ok := strings.Cut(spec, "/")
	if !ok {
		return "", spec
	}
	return provider, modelID
}

// apiListAgents answers GET /api/agents: an object keyed by agent id, the
// runtime's agents and the user's own (Settings → Agents; Mastra's
// source "stored", as its stored agents are).
func (s *Server) apiListAgents(r *http.Request) (any, error) {
	out := map[string]agentView{}
	for _, a := range s.rt.Agents() {
		v := newAgentView(a)
		v.ID = a.ID
		out[a.ID] = v
	}
	if ag := s.cfg.Agents; ag != nil {
		list, err := ag.List(r.Context())
		if err != nil {
			return nil, err
		}
		for _, d := range list {
			if _, taken := out[d.ID]; taken {
				continue // a runtime agent wins its id
			}
			v := newAgentView(ag.Runnable(d))
			v.ID, v.Source = d.ID, "stored"
			out[d.ID] = v
		}
	}
	return out, nil
}

func (s *Server) apiGetAgent(r *http.Request) (any, error) {
	a, err := s.apiAgentIn(r.Context(), r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	v := newAgentView(a)
	if !s.runtimeAgent(a) {
		v.Source = "stored"
	}
	return v, nil
}

// apiAgent finds a runtime agent by id, with Mastra's 404 text.
func (s *Server) apiAgent(id string) (*agentcore.Agent, error) {
	if id == "" {
		return nil, badRequest("Agent ID is required")
	}
	a, err := s.rt.Agent(id)
	if err != nil {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Agent with id %s not found", id)}
	}
	return a, nil
}

// apiAgentIn finds an agent by id among the runtime's and the user's own
// (as the runtime runs it outside a chat), with Mastra's 404 text.
func (s *Server) apiAgentIn(ctx context.Context, id string) (*agentcore.Agent, error) {
	a, err := s.apiAgent(id)
	if err == nil || s.cfg.Agents == nil || id == "" {
		return a, err
	}
	d, gerr := s.cfg.Agents.Get(ctx, id)
	if gerr != nil {
		return nil, err
	}
	return s.cfg.Agents.Runnable(d), nil
}

// runtimeAgent reports whether a is one of the runtime's own agents (not
// one of the user's, which run as the built-in agent in a chat).
func (s *Server) runtimeAgent(a *agentcore.Agent) bool {
	got, err := s.rt.Agent(a.ID)
	return err == nil && got == a
}

// checkThreadID limits the thread ids a client may choose: they end up in
// URLs (/t/<id>) and DOM ids (agentcore.ValidID).
func checkThreadID(id string) error {
	if !agentcore.ValidID(id) {
		return badRequest("threadId %q: use 1 to 128 letters, digits, '-' or '_'", id)
	}
	return nil
}
