package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"parley/components"
)

// ApprovalSettings reads and changes the approval policies and the
// remembered "always allow" answers (the app owns their rules).
type ApprovalSettings interface {
	Policies(ctx context.Context) ([]components.CategoryPolicy, []components.AlwaysRule, error)
	SetPolicy(ctx context.Context, category, policy string) error
	Revoke(ctx context.Context, index int) error
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sb, err := s.sidebar(ctx, "")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	page := components.Settings{Sidebar: sb, Workspace: s.cfg.Workspace, Demo: s.cfg.Demo}
	if a, err := s.rt.Agent(""); err == nil {
		page.Model = a.Model
	}
	if s.cfg.Approvals != nil {
		if page.Categories, page.Rules, err = s.cfg.Approvals.Policies(ctx); err != nil {
			s.httpError(w, r, err)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := components.SettingsPage(page).Render(ctx, w); err != nil {
		s.log.Warn("render settings", "err", err)
	}
}

func (s *Server) setPolicy(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Category string `json:"category"`
		Policy   string `json:"policy"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: want {category, policy}", errBadRequest))
		return
	}
	if s.cfg.Approvals == nil {
		s.httpError(w, r, fmt.Errorf("%w: approvals are not configurable here", errBadRequest))
		return
	}
	if err := s.cfg.Approvals.SetPolicy(r.Context(), body.Category, body.Policy); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) revokeRule(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(r.PostFormValue("index"))
	if err != nil || s.cfg.Approvals == nil {
		s.httpError(w, r, fmt.Errorf("%w: want a rule index", errBadRequest))
		return
	}
	if err := s.cfg.Approvals.Revoke(r.Context(), i); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	http.Redirect(w, r, "/settings", http.StatusSeeOther)
}
