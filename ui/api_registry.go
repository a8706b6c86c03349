package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
	"parley/app/chat"
	"parley/toolkit"
)

// The rest of Mastra's API that the `mastra api` CLI reaches, for what
// Parley has: memory search (Parley's full-text search) and status, working
// memory (Parley keeps none), workflows (Parley serves none) and the MCP
// registry (Parley's own MCP server, /api/mcp, as server "parley"). Shapes
// and error texts are @mastra/server's (dist/server/handlers/memory.js,
// workflows.js, mcp.js).

// mcpServerID is Parley's own MCP server in Mastra's MCP registry.
const mcpServerID = "parley"

// memorySearchMax bounds GET /api/memory/search's limit, as /api/search's.
const memorySearchMax = 100

// registryRoutes registers memory search and status, working memory and
// workflows; mcpRegistryRoutes the MCP registry (it needs the MCP server's
// asks).
func (s *Server) registryRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/memory/search", s.api(s.apiMemorySearch))
	mux.HandleFunc("GET /api/memory/status", s.api(s.apiMemoryStatus))
	mux.HandleFunc("GET /api/memory/threads/{threadId}/working-memory", s.api(s.apiGetWorkingMemory))
	mux.HandleFunc("POST /api/memory/threads/{threadId}/working-memory", s.api(s.apiUpdateWorkingMemory))
	mux.HandleFunc("GET /api/workflows", s.api(func(*http.Request) (any, error) { return map[string]any{}, nil }))
	noWorkflow := s.api(func(*http.Request) (any, error) { return nil, errNoWorkflow })
	for _, p := range []string{
		"GET /api/workflows/{workflowId}",
		"GET /api/workflows/{workflowId}/runs",
		"GET /api/workflows/{workflowId}/runs/{runId}",
		"POST /api/workflows/{workflowId}/start-async",
		"POST /api/workflows/{workflowId}/resume-async",
		"POST /api/workflows/{workflowId}/runs/{runId}/cancel",
	} {
		mux.HandleFunc(p, noWorkflow)
	}
}

// errNoWorkflow is Mastra's answer for a workflow id it does not know:
// Parley has no workflows, so it is every id's.
var errNoWorkflow = &apiError{http.StatusNotFound, "Workflow not found"}

// required answers Mastra's validateBody 400 for the first of names that
// the query lacks.
func required(r *http.Request, names ...string) error {
	for _, n := range names {
		if r.URL.Query().Get(n) == "" {
			return badRequest("Argument %q is required", n)
		}
	}
	return nil
}

// memorySearchHit is one result of GET /api/memory/search, as Mastra's.
type memorySearchHit struct {
	ID          string         `json:"id"`
	Role        agentcore.Role `json:"role"`
	Content     string         `json:"content"`
	CreatedAt   time.Time      `json:"createdAt"`
	ThreadID    string         `json:"threadId"`
	ThreadTitle string         `json:"threadTitle"`
}

// apiMemorySearch answers GET /api/memory/search?agentId&resourceId&searchQuery[&threadId][&limit]
// with Parley's full-text search over the resource's chats (or one chat):
// the resource's messages among the best matches, newest first, each with
// its snippet as content.
func (s *Server) apiMemorySearch(r *http.Request) (any, error) {
	if err := required(r, "agentId", "searchQuery", "resourceId"); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if _, err := s.apiAgentIn(r.Context(), q.Get("agentId")); err != nil {
		return nil, err
	}
	text := q.Get("searchQuery")
	if len(text) > maxQueryBytes {
		return nil, badRequest("searchQuery is too long: at most %d bytes", maxQueryBytes)
	}
	limit := 20 // Mastra's default
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > memorySearchMax {
			return nil, badRequest("limit must be a whole number from 1 to %d, not %q", memorySearchMax, v)
		}
		limit = n
	}
	threadID := q.Get("threadId")
	if threadID != "" {
		if err := checkThreadID(threadID); err != nil {
			return nil, err
		}
	}
	scope := "resource"
	if threadID != "" {
		scope = "thread"
	}
	// Search a full page, then keep the resource's (or the thread's) hits.
	hits, err := s.rt.Search(r.Context(), agentcore.SearchQuery{Text: text, Limit: memorySearchMax})
	if err != nil {
		return nil, fmt.Errorf("memory search: %w", err)
	}
	owner := map[string]bool{} // thread id → it is the resource's
	out := []memorySearchHit{}
	for _, h := range hits {
		if h.MessageID == "" || (threadID != "" && h.ThreadID != threadID) {
			continue // a title is not a message
		}
		mine, seen := owner[h.ThreadID]
		if !seen {
			t, err := s.rt.GetThread(r.Context(), h.ThreadID)
			mine = err == nil && t.ResourceID == q.Get("resourceId")
			owner[h.ThreadID] = mine
		}
		if !mine {
			continue
		}
		var text strings.Builder
		for _, p := range h.Snippet {
			text.WriteString(p.Text)
		}
		out = append(out, memorySearchHit{ID: h.MessageID, Role: h.Role, Content: text.String(), CreatedAt: h.At,
			ThreadID: h.ThreadID, ThreadTitle: h.ThreadTitle})
		if len(out) == limit {
			break
		}
	}
	// Newest first, as Mastra sorts its results.
	slices.SortStableFunc(out, func(a, b memorySearchHit) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return map[string]any{"results": out, "count": len(out), "query": text, "searchScope": scope, "searchType": "text"}, nil
}

// apiMemoryStatus answers GET /api/memory/status?agentId: Parley's agents
// keep their chats in its SQLite store.
func (s *Server) apiMemoryStatus(r *http.Request) (any, error) {
	if err := required(r, "agentId"); err != nil {
		return nil, err
	}
	if _, err := s.apiAgentIn(r.Context(), r.URL.Query().Get("agentId")); err != nil {
		return nil, err
	}
	return map[string]any{"result": true, "memoryType": "local"}, nil
}

// apiGetWorkingMemory answers GET …/working-memory as Mastra's
// GET_WORKING_MEMORY_ROUTE (@mastra/server handlers/memory): Parley's
// working memory is the resource's (scope "resource"), so it is the
// thread's resource's, or ?resourceId's for a thread not there.
// threadExists says whether the chat is there. With memory off for the
// agent (or none kept here) it is null, as Mastra's without working memory.
func (s *Server) apiGetWorkingMemory(r *http.Request) (any, error) {
	if err := required(r, "agentId"); err != nil {
		return nil, err
	}
	id := r.PathValue("threadId")
	if err := checkThreadID(id); err != nil {
		return nil, err
	}
	resource := r.URL.Query().Get("resourceId")
	t, err := s.apiThread(r.Context(), id, resource)
	var notThere *apiError
	if errors.As(err, &notThere) && notThere.status == http.StatusNotFound {
		err = nil
	} else if err != nil {
		return nil, fmt.Errorf("working memory of %s: %w", id, err)
	} else {
		resource = t.ResourceID
	}
	exists := t.ID != ""
	none := map[string]any{"workingMemory": nil, "source": "thread", "workingMemoryTemplate": nil, "threadExists": exists}
	m, ok := s.memory()
	if !ok {
		return none, nil
	}
	a, err := s.rt.Agent(r.URL.Query().Get("agentId"))
	if err != nil {
		return none, nil // Mastra reads without the agent, and finds no memory
	}
	if on, err := m.MemoryEnabled(r.Context(), a.ID); err != nil || !on {
		return none, err
	}
	out := map[string]any{"workingMemory": nil, "source": "resource",
		"workingMemoryTemplate": map[string]any{"format": "markdown", "content": toolkit.DefaultWorkingMemoryTemplate}, "threadExists": exists}
	if resource == "" {
		return out, nil // no thread and no resourceId: nothing to read
	}
	doc, err := m.MemoryDocument(r.Context(), resource)
	if err != nil {
		return nil, fmt.Errorf("working memory of %s: %w", resource, err)
	}
	if doc.Set && doc.Text != "" {
		out["workingMemory"] = doc.Text
	}
	return out, nil
}

// apiUpdateWorkingMemory answers POST …/working-memory as Mastra's
// UPDATE_WORKING_MEMORY_ROUTE: {workingMemory} replaces the thread's
// resource's working memory, {success: true}. An unknown thread is
// Mastra's 404 "Thread not found"; memory off for the agent (or none kept
// here) a 400; a document over the limit a 400 that names it.
func (s *Server) apiUpdateWorkingMemory(r *http.Request) (any, error) {
	var b struct {
		WorkingMemory *string        `json:"workingMemory"`
		ResourceID    *string        `json:"resourceId"`
		MemoryConfig  map[string]any `json:"memoryConfig"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if b.WorkingMemory == nil || *b.WorkingMemory == "" {
		return nil, badRequest(`Argument "workingMemory" is required`)
	}
	m, ok := s.memory()
	if !ok {
		return nil, badRequest("Working memory is not enabled: Parley keeps no working memory here")
	}
	if err := required(r, "agentId"); err != nil {
		return nil, err
	}
	a, err := s.apiAgentIn(r.Context(), r.URL.Query().Get("agentId"))
	if err != nil {
		return nil, err
	}
	id := r.PathValue("threadId")
	if err := checkThreadID(id); err != nil {
		return nil, err
	}
	if on, err := m.MemoryEnabled(r.Context(), a.ID); err != nil {
		return nil, err
	} else if !on {
		return nil, badRequest("%s (memory is off for agent %s in Settings)", chat.ErrMemoryOff, a.ID)
	}
	resource := ""
	if b.ResourceID != nil {
		resource = *b.ResourceID
	}
	t, err := s.apiThread(r.Context(), id, resource)
	var notThere *apiError
	if errors.As(err, &notThere) && notThere.status == http.StatusNotFound {
		return nil, &apiError{http.StatusNotFound, "Thread not found"}
	} else if err != nil {
		return nil, err
	}
	if err := m.SaveMemory(r.Context(), t.ResourceID, *b.WorkingMemory); err != nil {
		var tooLong *toolkit.TooLongError
		if errors.As(err, &tooLong) {
			return nil, badRequest("%s", err)
		}
		return nil, fmt.Errorf("update working memory of %s: %w", t.ResourceID, err)
	}
	return map[string]any{"success": true}, nil
}

// mcpVersionDetail is Parley's MCP server's version in Mastra's registry.
var mcpVersionDetail = map[string]any{"version": "1", "release_date": "", "is_latest": true}

// mcpRegistryRoutes registers Mastra's MCP registry routes for Parley's own
// MCP server. Tools are listed and called through an in-process session
// with the same server /api/mcp serves: the same tools, checks and answers.
func (s *Server) mcpRegistryRoutes(mux *http.ServeMux, asks *chat.Asks) {
	mux.HandleFunc("GET /api/mcp/v0/servers", s.api(s.apiMCPServers))
	mux.HandleFunc("GET /api/mcp/v0/servers/{id}", s.api(s.apiMCPServer))
	mux.HandleFunc("GET /api/mcp/{serverId}/tools", s.api(func(r *http.Request) (any, error) {
		tools, err := s.mcpTools(r, asks)
		if err != nil {
			return nil, err
		}
		return map[string]any{"tools": tools}, nil
	}))
	mux.HandleFunc("GET /api/mcp/{serverId}/tools/{toolId}", s.api(func(r *http.Request) (any, error) {
		tools, err := s.mcpTools(r, asks)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			if t.Name == r.PathValue("toolId") {
				return t, nil
			}
		}
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Tool with ID '%s' not found on MCP server '%s'", clipText(r.PathValue("toolId"), 128), mcpServerID)}
	}))
	mux.HandleFunc("POST /api/mcp/{serverId}/tools/{toolId}/execute", s.api(func(r *http.Request) (any, error) {
		return s.mcpExecute(r, asks)
	}))
}

// mcpServerInfo is Parley's MCP server as Mastra's registry lists one.
func mcpServerInfo() map[string]any {
	return map[string]any{"id": mcpServerID, "name": "Parley", "version_detail": mcpVersionDetail, "transports": []string{"streamable-http"}}
}

// apiMCPServers answers GET /api/mcp/v0/servers: Parley's one server, with
// Mastra's pagination (page and perPage, or the legacy limit and offset).
func (s *Server) apiMCPServers(r *http.Request) (any, error) {
	q := r.URL.Query()
	num := func(name string) (int, bool, error) {
		v := q.Get(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, badRequest("Invalid query parameters: %s must be a whole number ≥ 0, not %q", name, clipText(v, 40))
		}
		return n, true, nil
	}
	page, hasPage, err := num("page")
	if err != nil {
		return nil, err
	}
	perPage, hasPerPage, err := num("perPage")
	if err != nil {
		return nil, err
	}
	limit, hasLimit, err := num("limit")
	if err != nil {
		return nil, err
	}
	offset, hasOffset, err := num("offset")
	if err != nil {
		return nil, err
	}
	if !hasPerPage && hasLimit {
		perPage, hasPerPage = limit, true
	}
	if !hasPage && hasOffset && hasPerPage && perPage > 0 {
		page = offset / perPage
	}
	servers := []any{mcpServerInfo()}
	total := len(servers)
	if hasPerPage {
		lo := total
		if page <= total { // page*perPage cannot overflow: both are small then
			lo = min(page*min(perPage, total+1), total)
		}
		servers = servers[lo:min(lo+min(perPage, total), total)]
	}
	return map[string]any{"servers": servers, "total_count": total, "next": nil}, nil
}

// apiMCPServer answers GET /api/mcp/v0/servers/:id[?version].
func (s *Server) apiMCPServer(r *http.Request) (any, error) {
	id := r.PathValue("id")
	if id != mcpServerID {
		return nil, mcpNoServer(id)
	}
	if v := r.URL.Query().Get("version"); v != "" && v != mcpVersionDetail["version"] {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("MCP server with ID '%s' found, but not version '%s'. Available version: %s",
			id, clipText(v, 40), mcpVersionDetail["version"])}
	}
	detail := mcpServerInfo()
	detail["description"] = "Parley as an MCP server: list and read chats, notify a chat's inbox, ask the user a question or for an approval."
	detail["remotes"] = []any{map[string]any{"transport_type": "streamable-http", "url": askBase(r) + "/api/mcp"}}
	return detail, nil
}

func mcpNoServer(id string) error {
	return &apiError{http.StatusNotFound, fmt.Sprintf("MCP server with ID '%s' not found", clipText(id, 128))}
}

// mcpToolInfo is an MCP tool as Mastra's registry describes one.
type mcpToolInfo struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema,omitempty"`
}

// mcpSession connects an in-process client to a fresh copy of Parley's
// MCP server; close it when done.
func (s *Server) mcpSession(r *http.Request, asks *chat.Asks) (*mcp.ClientSession, error) {
	if id := r.PathValue("serverId"); id != mcpServerID {
		return nil, mcpNoServer(id)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.mcpServer(asks, askBase(r)).Connect(r.Context(), st, nil); err != nil {
		return nil, fmt.Errorf("mcp: serve in process: %w", err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "parley-api", Version: "1"}, nil)
	cs, err := c.Connect(r.Context(), ct, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect in process: %w", err)
	}
	return cs, nil
}

func (s *Server) mcpTools(r *http.Request, asks *chat.Asks) ([]mcpToolInfo, error) {
	cs, err := s.mcpSession(r, asks)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(r.Context(), nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: list tools: %w", err)
	}
	out := make([]mcpToolInfo, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, mcpToolInfo{ID: t.Name, Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema})
	}
	return out, nil
}

// mcpExecute answers POST /api/mcp/parley/tools/:toolId/execute {data}:
// {result: the tool's structured output}, or {result: {error: true,
// message}} when the tool answered with an error. ask_user and
// request_approval wait for the user, as over MCP, for as long as the
// request lasts; asked again with the same id, they wait for the same
// question. Parley's tools never suspend, so resumeData is refused.
func (s *Server) mcpExecute(r *http.Request, asks *chat.Asks) (any, error) {
	var b struct {
		Data           json.RawMessage `json:"data"`
		ResumeData     json.RawMessage `json:"resumeData"`
		SuspendPayload json.RawMessage `json:"suspendPayload"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if len(b.ResumeData) > 0 || len(b.SuspendPayload) > 0 {
		return nil, badRequest("resumeData: Parley's MCP tools never suspend (ask_user and request_approval wait for the answer instead)")
	}
	var args map[string]any
	if len(b.Data) > 0 && string(b.Data) != "null" {
		if err := json.Unmarshal(b.Data, &args); err != nil {
			return nil, badRequest("Invalid request body: data must be an object of the tool's arguments")
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	cs, err := s.mcpSession(r, asks)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	tools, err := cs.ListTools(r.Context(), nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: list tools: %w", err)
	}
	name := r.PathValue("toolId")
	known := false
	for _, t := range tools.Tools {
		known = known || t.Name == name
	}
	if !known {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Tool with ID '%s' not found on MCP server '%s'", clipText(name, 128), mcpServerID)}
	}
	res, err := cs.CallTool(r.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctxErr := r.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, badRequest("Invalid arguments for %s: %v", name, err)
	}
	if res.IsError {
		var msg strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				msg.WriteString(t.Text)
			}
		}
		return map[string]any{"result": map[string]any{"error": true, "message": msg.String()}}, nil
	}
	if res.StructuredContent != nil {
		return map[string]any{"result": res.StructuredContent}, nil
	}
	return map[string]any{"result": res.Content}, nil
}
