package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
)

// Settings → Agents: plain forms (they work without script) that post,
// then send the browser back to Settings (post/redirect/get); a refused
// save shows the form again as typed, with the reason. The rules are
// app/chat's (chat.Agents): these handlers decode, call and render.

func (s *Server) agentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /settings/agents/new", s.agentNewPage)
	mux.HandleFunc("POST /settings/agents", s.agentCreate)
	mux.HandleFunc("POST /settings/agents/import", s.agentImport)
	mux.HandleFunc("GET /settings/agents/{id}", s.agentPage)
	mux.HandleFunc("POST /settings/agents/{id}", s.agentUpdate)
	mux.HandleFunc("POST /settings/agents/{id}/duplicate", s.agentDuplicate)
	mux.HandleFunc("POST /settings/agents/{id}/delete", s.agentDelete)
	mux.HandleFunc("GET /settings/agents/{id}/export", s.agentExport)
}

// agents is the user's agents, or a 404 when this server has none.
func (s *Server) agents(w http.ResponseWriter, r *http.Request) (*chat.Agents, bool) {
	if s.cfg.Agents == nil {
		s.httpError(w, r, fmt.Errorf("agents: %w", agentcore.ErrNotFound))
		return nil, false
	}
	return s.cfg.Agents, true
}

// agentsView is the Agents section of Settings.
func (s *Server) agentsView(ctx context.Context) (components.AgentsView, error) {
	v := components.AgentsView{Builtin: components.AgentCard{Builtin: true, Mode: string(chat.ModeBuild)}}
	if a, err := s.rt.Agent(""); err == nil {
		v.Builtin.ID, v.Builtin.Name, v.Builtin.Description = a.ID, a.Name, a.Description
		v.Builtin.Model = a.CurrentModel()
	}
	ag := s.cfg.Agents
	if ag == nil {
		return v, nil
	}
	v.Available = true
	v.Builtin.Tools = ag.ToolNames()
	list, err := ag.List(ctx)
	if err != nil {
		return v, err
	}
	for _, d := range list {
		v.Agents = append(v.Agents, agentCard(d))
	}
	return v, nil
}

func agentCard(d chat.AgentDef) components.AgentCard {
	var pols []string
	for _, c := range chat.Categories() {
		if p, ok := d.Policies[c]; ok {
			pols = append(pols, c+": "+p)
		}
	}
	return components.AgentCard{ID: d.ID, Name: d.Name, Description: d.Description, Model: d.Model, Mode: string(d.Mode),
		Tools: d.Tools, Policies: strings.Join(pols, ", ")}
}

// agentForm is the form of d, as stored or as typed.
func (s *Server) agentForm(r *http.Request, d chat.AgentDef, ag *chat.Agents) (components.AgentForm, error) {
	ctx := r.Context()
	sb, err := s.sidebar(ctx, "")
	if err != nil {
		return components.AgentForm{}, err
	}
	f := components.AgentForm{Sidebar: sb, Banner: s.banner(), ID: d.ID, Builtin: ag.IsBuiltin(d.ID) && d.ID != "",
		Name: d.Name, Description: d.Description, Instructions: d.Instructions, Model: d.Model, Mode: string(d.Mode),
		Models: s.cfg.Models(), DefaultModel: s.defaultModel()}
	for _, t := range ag.ToolNames() {
		f.Tools = append(f.Tools, components.AgentTool{Name: t, Category: ag.Category(t), On: slices.Contains(d.Tools, t)})
	}
	settings := map[string]string{}
	if s.cfg.Approvals != nil {
		pols, _, err := s.cfg.Approvals.Policies(ctx)
		if err != nil {
			return f, err
		}
		for _, p := range pols {
			settings[p.Category] = p.Policy
		}
	}
	for _, c := range chat.Categories() {
		f.Policies = append(f.Policies, components.AgentPolicy{Category: c, Policy: d.Policies[c], Settings: settings[c]})
	}
	if m, ok := s.memory(); ok {
		f.MemoryAvailable, f.Memory = true, true // a new agent's is on, as a Mastra agent's with memory
		if d.ID != "" {
			if f.Memory, err = m.MemoryEnabled(ctx, d.ID); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

func (s *Server) renderAgentForm(w http.ResponseWriter, r *http.Request, status int, f components.AgentForm) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := components.AgentFormPage(f).Render(r.Context(), w); err != nil {
		s.log.Warn("render agent page", "err", err)
	}
}

// agentNewPage is the form of a new agent: the built-in agent's tools
// ticked, its instructions left for the user to write.
func (s *Server) agentNewPage(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	f, err := s.agentForm(r, chat.AgentDef{Tools: ag.ToolNames(), Mode: chat.ModeBuild}, ag)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	s.renderAgentForm(w, r, http.StatusOK, f)
}

// agentPage shows an agent's form; the built-in agent's, read-only.
func (s *Server) agentPage(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	var d chat.AgentDef
	if ag.IsBuiltin(id) {
		d = ag.BuiltinDef()
	} else {
		var err error
		if d, err = ag.Get(r.Context(), id); err != nil {
			s.httpError(w, r, err)
			return
		}
	}
	f, err := s.agentForm(r, d, ag)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	s.renderAgentForm(w, r, http.StatusOK, f)
}

// agentFromForm reads an agent's form.
func agentFromForm(r *http.Request) (chat.AgentDef, error) {
	if err := r.ParseForm(); err != nil {
		return chat.AgentDef{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	d := chat.AgentDef{Name: r.PostFormValue("name"), Description: r.PostFormValue("description"),
		Instructions: r.PostFormValue("instructions"), Model: r.PostFormValue("model"),
		Tools: r.PostForm["tools"], Mode: chat.Mode(r.PostFormValue("mode"))}
	for _, c := range chat.Categories() {
		if p := r.PostFormValue("policy-" + c); p != "" {
			if d.Policies == nil {
				d.Policies = map[string]string{}
			}
			d.Policies[c] = p
		}
	}
	return d, nil
}

func (s *Server) agentCreate(w http.ResponseWriter, r *http.Request) {
	s.agentSave(w, r, "")
}

func (s *Server) agentUpdate(w http.ResponseWriter, r *http.Request) {
	s.agentSave(w, r, r.PathValue("id"))
}

// agentSave creates (id "") or changes an agent from its form. A model
// that cannot be used, or a field the rules refuse, shows the form again
// as typed with the reason.
func (s *Server) agentSave(w http.ResponseWriter, r *http.Request, id string) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	d, err := agentFromForm(r)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	d.ID = id
	ctx := r.Context()
	if m := strings.TrimSpace(d.Model); m != "" {
		if cerr := s.cfg.CheckModel(m); cerr != nil {
			err = &chat.AgentError{Field: "model", Msg: fmt.Sprintf("%q cannot be used: %s", m, strings.TrimPrefix(cerr.Error(), "llm: "))}
		}
	}
	var saved chat.AgentDef
	if err == nil {
		if id == "" {
			saved, err = ag.Create(ctx, d)
		} else {
			saved, err = ag.Update(ctx, d)
		}
	}
	if errors.Is(err, agentcore.ErrNotFound) {
		s.httpError(w, r, err)
		return
	}
	if err != nil {
		f, ferr := s.agentForm(r, d, ag)
		if ferr != nil {
			s.httpError(w, r, ferr)
			return
		}
		f.Memory = r.PostFormValue("memory") == "on" // as typed
		f.Error = err.Error()
		var ae *chat.AgentError
		if errors.As(err, &ae) {
			f.ErrorField = ae.Field
		}
		s.renderAgentForm(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	if m, ok := s.memory(); ok {
		if err := m.SetMemoryEnabled(ctx, saved.ID, r.PostFormValue("memory") == "on"); err != nil {
			s.agentsFailed(w, r, fmt.Errorf("the agent %s was saved, its working memory setting not: %w", saved.Name, err))
			return
		}
	}
	verb := "Saved"
	if id == "" {
		verb = "Created"
	}
	s.agentsDone(w, r, fmt.Sprintf("%s the agent %s.", verb, saved.Name), saved.ID)
}

// agentsDone sends the browser back to Settings → Agents with a message.
func (s *Server) agentsDone(w http.ResponseWriter, r *http.Request, msg, id string) {
	frag := "agents"
	if id != "" {
		frag = "agent-" + id
	}
	http.Redirect(w, r, "/settings?"+url.Values{"at": {"agents"}, "saved": {msg}}.Encode()+"#"+frag, http.StatusSeeOther)
}

func (s *Server) agentDuplicate(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	d, err := ag.Duplicate(r.Context(), r.PathValue("id"))
	if err != nil {
		s.agentsFailed(w, r, err)
		return
	}
	http.Redirect(w, r, components.AgentURL(d.ID), http.StatusSeeOther)
}

func (s *Server) agentDelete(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	d, err := ag.Get(r.Context(), id)
	if err == nil {
		err = ag.Delete(r.Context(), id)
	}
	if m, ok := s.memory(); ok && err == nil {
		_ = m.SetMemoryEnabled(r.Context(), id, true) // forget its setting: on is the default
	}
	if err != nil {
		s.agentsFailed(w, r, err)
		return
	}
	s.agentsDone(w, r, fmt.Sprintf("Deleted the agent %s.", d.Name), "")
}

// agentsFailed shows Settings with why a command on an agent failed.
func (s *Server) agentsFailed(w http.ResponseWriter, r *http.Request, err error) {
	page, verr := s.settingsView(r.Context())
	if verr != nil {
		s.httpError(w, r, verr)
		return
	}
	page.Agents.Flash = components.Flash{Target: "agents", Message: err.Error(), Error: true}
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		status = http.StatusUnprocessableEntity
	}
	s.renderSettings(w, r, status, page)
}

// agentExport downloads an agent as a JSON file.
func (s *Server) agentExport(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	b, err := ag.Export(r.Context(), id)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	name := id
	if ag.IsBuiltin(id) {
		name = ag.Builtin().ID
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	// id is letters, digits and dashes (chat.Agents issues it): safe in the header.
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.agent.json"`)
	_, _ = w.Write(b)
}

// agentImport stores the agent of an uploaded file; a bad file is refused
// with the reason, naming the field, and nothing is stored.
func (s *Server) agentImport(w http.ResponseWriter, r *http.Request) {
	ag, ok := s.agents(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, chat.MaxAgentImport+64<<10)
	file, _, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = fmt.Errorf("the file is larger than %d MiB, the most an agent file may be", chat.MaxAgentImport>>20)
		} else {
			err = errors.New("choose an agent file (.json) to import")
		}
		s.agentsFailed(w, r, &chat.AgentError{Msg: "Not imported: " + err.Error()})
		return
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, chat.MaxAgentImport+1))
	if err != nil {
		s.agentsFailed(w, r, &chat.AgentError{Msg: "Not imported: " + err.Error()})
		return
	}
	d, err := ag.Import(r.Context(), data)
	if err != nil {
		s.agentsFailed(w, r, &chat.AgentError{Msg: "Not imported: " + err.Error()})
		return
	}
	s.agentsDone(w, r, fmt.Sprintf("Imported the agent %s.", d.Name), d.ID)
}

// agentChoices are the agents the new-chat screen offers, the built-in one
// first: each with the mode and model its chats start with.
func (s *Server) agentChoices(r *http.Request) []components.AgentChoice {
	def := s.defaultModel()
	out := []components.AgentChoice{{ID: "", Name: "Parley", Mode: string(chat.ModeBuild), Model: def}}
	if a, err := s.rt.Agent(""); err == nil {
		out[0].Name = a.Name
	}
	if s.cfg.Agents == nil {
		return out
	}
	list, err := s.cfg.Agents.List(r.Context())
	if err != nil {
		s.log.Warn("list agents", "err", err)
		return out
	}
	for _, d := range list {
		m := d.Model
		if m == "" {
			m = def
		}
		out = append(out, components.AgentChoice{ID: d.ID, Name: d.Name, Mode: string(d.Mode), Model: m})
	}
	return out
}

// chatAgent is the name of a chat's own agent ("" for the built-in one).
func (s *Server) chatAgent(ctx context.Context, t agentcore.Thread) string {
	if d, ok := s.cfg.Agents.Of(ctx, chat.Of(t)); ok {
		return d.Name
	}
	return ""
}

// ownAgent is the id of a when it is one of the user's agents (the API's
// Runnable of it); "" for the runtime's own.
func (s *Server) ownAgent(a *agentcore.Agent) string {
	if s.cfg.Agents == nil || s.runtimeAgent(a) {
		return ""
	}
	return a.ID
}
