package ui

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
)

const (
	// maxQueryBytes bounds what the search box and the API accept: a
	// search, not a document (only the first words count anyway).
	maxQueryBytes = 1000
	// searchBoxHits fills the search box without scrolling much.
	searchBoxHits = 12
)

// searchBox answers the search box as the user types ($q): the matches, in
// place of the last ones. A query that cannot be run says why in the box.
func (s *Server) searchBox(w http.ResponseWriter, r *http.Request) {
	var sig struct {
		Q string `json:"q"`
	}
	if err := datastar.ReadSignals(r, &sig); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: read signals: %v", errBadRequest, err))
		return
	}
	v := components.SearchView{Query: strings.TrimSpace(sig.Q)}
	if len(sig.Q) > maxQueryBytes {
		v.Error = fmt.Sprintf("That is too long to search: at most %d characters.", maxQueryBytes)
	} else if v.Query != "" {
		hits, err := s.rt.Search(r.Context(), agentcore.SearchQuery{Text: sig.Q, Limit: searchBoxHits})
		if err != nil {
			s.log.Error("search", "err", err)
			v.Error = "Search failed: " + err.Error()
		}
		now := time.Now()
		for _, h := range hits {
			hv := searchHitView(h, now)
			hv.OtherVersion = s.inOtherVersion(r.Context(), h)
			v.Hits = append(v.Hits, hv)
		}
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.SearchResults(v))
}

// inOtherVersion reports whether hit h is a message off its chat's active
// branch: search finds every branch, the chat shows one. A message that
// cannot be read now is left unmarked; opening it says what became of it.
func (s *Server) inOtherVersion(ctx context.Context, h agentcore.SearchHit) bool {
	if h.MessageID == "" {
		return false
	}
	m, err := s.rt.GetMessage(ctx, h.MessageID)
	if err != nil {
		if !errors.Is(err, agentcore.ErrNotFound) {
			s.log.Info("search: is the hit shown", "message", h.MessageID, "err", err)
		}
		return false
	}
	return m.ThreadID == h.ThreadID && !m.Active
}

func searchHitView(h agentcore.SearchHit, now time.Time) components.SearchHit {
	v := components.SearchHit{URL: components.ThreadURL(h.ThreadID), Title: h.ThreadTitle, When: when(h.At, now)}
	switch {
	case h.MessageID == "":
		v.Kind = "Title"
	case h.Field == agentcore.HitTool:
		v.Kind = "Tool call"
	case h.Role == agentcore.RoleUser:
		v.Kind = "You"
	default:
		v.Kind = "Parley"
	}
	if h.MessageID != "" {
		v.URL = components.MessageURL(h.ThreadID, h.MessageID)
	}
	for _, p := range h.Snippet {
		v.Snippet = append(v.Snippet, components.SnippetPart{Text: p.Text, Match: p.Match})
	}
	return v
}

// followHit shows the branch of message at when a link opens the chat on
// it (a search hit: search finds every branch) and it is not on the branch
// shown: the chat switches to it, as ‹ n/m › would, so that the page shows
// it. at comes from the address: only a message of thread t is followed,
// and anything else, or a chat busy with a run (which a switch would not
// wait for), leaves the chat as it is; the page then opens on its latest
// messages.
//
// Opening a page changes which branch is shown, so only a navigation of
// Parley's own (or one the user typed) does it: a link from another site
// (Sec-Fetch-Site cross-site or same-site) opens the chat as it is.
func (s *Server) followHit(r *http.Request, t agentcore.Thread, at string) {
	ctx := r.Context()
	if at == "" || !agentcore.ValidID(at) {
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return
	}
	m, err := s.rt.GetMessage(ctx, at)
	if err != nil || m.ThreadID != t.ID || m.Active {
		return
	}
	if err := s.rt.SwitchBranch(ctx, t.ID, m.ID); err != nil {
		s.log.Info("open a message of another branch", "thread", t.ID, "message", m.ID, "err", err)
	}
}

// apiSearchHit is one hit of GET /api/search. Snippet is HTML: the text is
// escaped and the matching words are in <mark>; Parts has the same
// snippet as plain pieces.
type apiSearchHit struct {
	ThreadID    string                  `json:"threadId"`
	ThreadTitle string                  `json:"threadTitle"`
	MessageID   string                  `json:"messageId,omitempty"`
	Role        agentcore.Role          `json:"role,omitempty"`
	Field       string                  `json:"field"`
	Snippet     string                  `json:"snippet"`
	Parts       []agentcore.SnippetPart `json:"parts"`
	CreatedAt   time.Time               `json:"createdAt"`
}

// apiSearch is GET /api/search?q=…&limit=…: the hits of a query, best
// first. No words, no hits; FTS5 syntax in q is plain text.
func (s *Server) apiSearch(r *http.Request) (any, error) {
	q := r.URL.Query().Get("q")
	if len(q) > maxQueryBytes {
		return nil, badRequest("q is too long: at most %d bytes", maxQueryBytes)
	}
	limit := agentcore.DefaultSearchLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badRequest("limit must be a whole number from 1 to 100, not %q", v)
		}
		limit = n
	}
	hits, err := s.rt.Search(r.Context(), agentcore.SearchQuery{Text: q, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]apiSearchHit, 0, len(hits))
	for _, h := range hits {
		parts := h.Snippet
		if parts == nil {
			parts = []agentcore.SnippetPart{}
		}
		out = append(out, apiSearchHit{ThreadID: h.ThreadID, ThreadTitle: h.ThreadTitle, MessageID: h.MessageID,
			Role: h.Role, Field: h.Field, Snippet: snippetHTML(h.Snippet), Parts: parts, CreatedAt: h.At})
	}
	return map[string]any{"query": q, "hits": out}, nil
}

// snippetHTML is a snippet as HTML: escaped text, matches in <mark>.
func snippetHTML(parts []agentcore.SnippetPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Match {
			b.WriteString("<mark>" + html.EscapeString(p.Text) + "</mark>")
		} else {
			b.WriteString(html.EscapeString(p.Text))
		}
	}
	return b.String()
}
