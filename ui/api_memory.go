package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"parley/agentcore"
)

// Mastra's page sizes (createPagePaginationSchema in @mastra/server).
const (
	threadsPerPage  = 100
	messagesPerPage = 40
)

// page is Mastra's pagination: page from 0, perPage items (false: all).
type page struct {
	Total   int  `json:"total"`
	Page    int  `json:"page"`
	PerPage any  `json:"perPage"` // a number, or false
	HasMore bool `json:"hasMore"`
}

// paginate reads ?page and ?perPage and returns the slice bounds of n items.
func paginate(r *http.Request, n, defaultPerPage int) (lo, hi int, p page, err error) {
	q := r.URL.Query()
	num := func(name string, def int) (int, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			return 0, badRequest("Invalid query parameters: %s must be a whole number ≥ 0, not %q", name, v)
		}
		return i, nil
	}
	p.Total = n
	if p.Page, err = num("page", 0); err != nil {
		return 0, 0, p, err
	}
	if q.Get("perPage") == "false" {
		p.PerPage = false
		return 0, n, p, nil
	}
	per, err := num("perPage", defaultPerPage)
	if err != nil {
		return 0, 0, p, err
	}
	p.PerPage = per
	lo = min(p.Page*per, n)
	hi = min(lo+per, n)
	p.HasMore = hi < n
	return lo, hi, p, nil
}

// apiThread returns a thread; with resourceID, only if that resource owns
// it (Mastra's validateThreadOwnership).
func (s *Server) apiThread(ctx context.Context, id, resourceID string) (agentcore.Thread, error) {
	t, err := s.rt.GetThread(ctx, id)
	if errors.Is(err, agentcore.ErrNotFound) {
		return t, &apiError{http.StatusNotFound, fmt.Sprintf("Thread %s not found", id)}
	}
	if err != nil {
		return t, err
	}
	if resourceID != "" && t.ResourceID != resourceID {
		return t, errOtherResource
	}
	return t, nil
}

var errOtherResource = &apiError{http.StatusForbidden, "Access denied: thread belongs to a different resource"}

// checkAgentParam rejects an unknown ?agentId where Mastra does (writes). Reads
// accept any agentId, as Mastra falls back to storage for them.
func (s *Server) checkAgentParam(r *http.Request) error {
	if id := r.URL.Query().Get("agentId"); id != "" {
		if _, err := s.apiAgentIn(r.Context(), id); err != nil {
			return err
		}
	}
	return nil
}

// apiListThreads answers GET /api/memory/threads?resourceId&agentId&page&perPage
// with {threads, total, page, perPage, hasMore}: pinned first, then the most
// recently updated.
func (s *Server) apiListThreads(r *http.Request) (any, error) {
	threads, err := s.rt.ListThreads(r.Context(), agentcore.ThreadQuery{ResourceID: r.URL.Query().Get("resourceId")})
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	lo, hi, p, err := paginate(r, len(threads), threadsPerPage)
	if err != nil {
		return nil, err
	}
	return struct {
		Threads []agentcore.Thread `json:"threads"`
		page
	}{threads[lo:hi], p}, nil
}

func (s *Server) apiGetThread(r *http.Request) (any, error) {
	return s.apiThread(r.Context(), r.PathValue("threadId"), r.URL.Query().Get("resourceId"))
}

// apiCreateThread answers POST /api/memory/threads {resourceId, title?, metadata?, threadId?}.
func (s *Server) apiCreateThread(r *http.Request) (any, error) {
	var b struct {
		ResourceID string         `json:"resourceId"`
		Title      string         `json:"title"`
		Metadata   map[string]any `json:"metadata"`
		ThreadID   string         `json:"threadId"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if b.ResourceID == "" {
		return nil, badRequest(`Argument "resourceId" is required`)
	}
	if err := s.checkAgentParam(r); err != nil {
		return nil, err
	}
	if b.ThreadID != "" {
		if err := checkThreadID(b.ThreadID); err != nil {
			return nil, err
		}
		if _, err := s.rt.GetThread(r.Context(), b.ThreadID); err == nil {
			return nil, &apiError{http.StatusConflict, fmt.Sprintf("Thread %s already exists", b.ThreadID)}
		}
	}
	return s.rt.CreateThread(r.Context(), agentcore.Thread{ID: b.ThreadID, ResourceID: b.ResourceID, Title: b.Title, Metadata: b.Metadata})
}

// apiUpdateThread answers PATCH /api/memory/threads/:id {title?, metadata?, resourceId?}.
// Metadata replaces the thread's metadata, as in Mastra.
func (s *Server) apiUpdateThread(r *http.Request) (any, error) {
	var b struct {
		Title      *string        `json:"title"`
		Metadata   map[string]any `json:"metadata"`
		ResourceID string         `json:"resourceId"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if err := s.checkAgentParam(r); err != nil {
		return nil, err
	}
	t, err := s.apiThread(r.Context(), r.PathValue("threadId"), b.ResourceID)
	if err != nil {
		return nil, err
	}
	return s.rt.UpdateThread(r.Context(), t.ID, agentcore.ThreadPatch{Title: b.Title, Metadata: b.Metadata})
}

// apiDeleteThread answers DELETE /api/memory/threads/:id; a run in progress
// on the thread is stopped first.
func (s *Server) apiDeleteThread(r *http.Request) (any, error) {
	if err := s.checkAgentParam(r); err != nil {
		return nil, err
	}
	t, err := s.apiThread(r.Context(), r.PathValue("threadId"), r.URL.Query().Get("resourceId"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), stopWait)
	defer cancel()
	if err := s.rt.DeleteThread(ctx, t.ID); err != nil {
		return nil, err
	}
	return map[string]string{"result": "Thread deleted"}, nil
}

// apiMessage is a stored message as Mastra's storage returns it
// (MastraDBMessage), with how it ended: Status, also in
// content.metadata.status (Mastra's clients ignore fields they do not know).
type apiMessage struct {
	agentcore.Message
	Type   string `json:"type"`
	Status string `json:"status"`
}

// apiStatus is how m ended, in the API's words: complete, streaming (a run
// writes it now), stopped (by the user), interrupted (cut off: Parley
// stopped, or crashed, while it was written), failed (the provider's
// error is in content.metadata.error), or queued (a message waiting for
// the run in progress).
func apiStatus(m agentcore.Message, writing bool) string {
	switch m.Status {
	case agentcore.StatusStreaming:
		if writing {
			return "streaming"
		}
		return "interrupted" // no run writes it: cut off
	case agentcore.StatusInterrupted:
		if m.Content.Metadata["stopped"] == "user" {
			return "stopped"
		}
		return "interrupted"
	case agentcore.StatusError:
		return "failed"
	case agentcore.StatusQueued:
		return "queued"
	}
	return "complete"
}

// withStatus returns m's content with status in a copy of its metadata.
func withStatus(c agentcore.Content, status string) agentcore.Content {
	meta := make(map[string]any, len(c.Metadata)+1)
	for k, v := range c.Metadata {
		meta[k] = v
	}
	meta["status"] = status
	c.Metadata = meta
	return c
}

// apiTreeMessage is a message of GET …/messages?tree=true: every message
// says which it follows (parentId, null for a root) and whether it is on
// the branch the chat shows (active).
type apiTreeMessage struct {
	apiMessage
	ParentID *string `json:"parentId"`
	Active   bool    `json:"active"`
}

// treeParam reads ?tree: true lists the thread's whole tree.
func treeParam(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("tree"); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, badRequest("Invalid query parameters: tree must be true or false, not %q", v)
	}
}

// apiListMessages answers GET /api/memory/threads/:id/messages with
// {messages, uiMessages, total, page, perPage, hasMore}, oldest first: the
// branch the chat shows, what the model reads. With ?tree=true (Parley's
// own) it lists every message of every branch, parents before their
// children, each with parentId and active. uiMessages is null, as Mastra
// sends it when reading storage directly. The body is written message by
// message (messageList).
func (s *Server) apiListMessages(r *http.Request) (any, error) {
	tree, err := treeParam(r)
	if err != nil {
		return nil, err
	}
	t, err := s.apiThread(r.Context(), r.PathValue("threadId"), r.URL.Query().Get("resourceId"))
	if err != nil {
		return nil, err
	}
	var msgs []agentcore.Message
	if tree {
		msgs, err = s.rt.ListTree(r.Context(), t.ID)
	} else {
		msgs, err = s.rt.ListMessages(r.Context(), t.ID, agentcore.MessageQuery{})
	}
	if err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", t.ID, err)
	}
	lo, hi, p, err := paginate(r, len(msgs), messagesPerPage)
	if err != nil {
		return nil, err
	}
	// The reply being written is newer in memory than in the store.
	live, running := s.rt.Live(t.ID)
	list := messageList{msgs: make([]contentMessage, 0, hi-lo), page: p}
	for _, m := range msgs[lo:hi] {
		writing := running && m.ID == live.MessageID
		if writing {
			m.Content = live.Content
		}
		typ := "v2"
		if m.Role == agentcore.RoleSignal {
			typ = m.Type // a signal's type is its tag, as Mastra stores it
		}
		status := apiStatus(m, writing)
		m.Content = withStatus(m.Content, status)
		am := apiMessage{m, typ, status}
		if !tree {
			list.msgs = append(list.msgs, &am)
			continue
		}
		n := apiTreeMessage{apiMessage: am, Active: m.Active}
		if m.ParentID != "" {
			n.ParentID = &am.ParentID
		}
		list.msgs = append(list.msgs, &n)
	}
	return list, nil
}
