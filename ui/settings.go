package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"parley/app/chat"
	"parley/components"
	"parley/toolkit"
)

// ApprovalSettings reads and changes the approval policies and the
// remembered "always allow" answers (the app owns their rules).
type ApprovalSettings interface {
	Policies(ctx context.Context) ([]chat.CategoryPolicy, []chat.AlwaysRule, error)
	SetPolicy(ctx context.Context, category, policy string) error
	Revoke(ctx context.Context, index int) error
}

// ProviderSettings reads and changes the providers' keys and addresses,
// the default model and the theme (the app owns where they are kept).
// Keys go in and never come out: Providers describes them only.
type ProviderSettings interface {
	Providers(ctx context.Context) ([]components.ProviderView, error)
	KeysNote() string
	SetKey(ctx context.Context, provider, key string) error
	DeleteKey(ctx context.Context, provider string) error
	SetBaseURL(ctx context.Context, provider, url string) error
	// SetLimits saves a provider's time limits ("": the global one); a
	// value that does not read is a *LimitError.
	SetLimits(ctx context.Context, provider, firstToken, idle string) error
	// TestProvider makes a real request with the settings as they stand.
	TestProvider(ctx context.Context, provider string) (string, error)
	DefaultModel(ctx context.Context) string
	SetDefaultModel(ctx context.Context, model string) error
	Theme() string
	SetTheme(ctx context.Context, theme string) error
}

// LimitError says what is wrong with each of a provider's time limits
// ("": nothing), for the page to show by its field.
type LimitError struct {
	FirstToken, Idle string
}

func (e *LimitError) Error() string {
	return strings.Join(slices.DeleteFunc([]string{e.FirstToken, e.Idle}, func(s string) bool { return s == "" }), "; ")
}

// MCPSettings reads and changes the MCP servers and reports their state.
type MCPSettings interface {
	MCP(ctx context.Context) (components.MCPView, error)
	MCPServers() []components.MCPServer
	// MCPChanged is closed at the next change of a server's state.
	MCPChanged() <-chan struct{}
	MCPForm(ctx context.Context, name string) (components.MCPForm, error)
	SaveMCP(ctx context.Context, f components.MCPForm) error
	RemoveMCP(ctx context.Context, name string) error
	RestartMCP(ctx context.Context, name string) error
}

// settingsRoutes are the Settings page and its commands.
func (s *Server) settingsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /settings", s.settingsPage)
	mux.HandleFunc("POST /settings/approvals/policy", s.setPolicy)
	mux.HandleFunc("POST /settings/approvals/revoke", s.revokeRule)
	mux.HandleFunc("POST /settings/theme", s.setTheme)
	mux.HandleFunc("POST /settings/model", s.setDefaultModel)
	mux.HandleFunc("POST /settings/model-settings", s.setModelSampling)
	mux.HandleFunc("POST /settings/providers/{provider}/key", s.setKey)
	mux.HandleFunc("POST /settings/providers/{provider}/key/delete", s.deleteKey)
	mux.HandleFunc("POST /settings/providers/{provider}/base", s.setBaseURL)
	mux.HandleFunc("POST /settings/providers/{provider}/limits", s.setLimits)
	mux.HandleFunc("POST /settings/providers/{provider}/test", s.testProvider)
	mux.HandleFunc("POST /settings/mcp", s.saveMCP)
	mux.HandleFunc("POST /settings/mcp/{name}/delete", s.removeMCP)
	mux.HandleFunc("POST /settings/mcp/{name}/restart", s.restartMCP)
	mux.HandleFunc("GET /settings/mcp/stream", s.mcpStream)
	mux.HandleFunc("POST /settings/memory", s.saveMemory)
	mux.HandleFunc("POST /settings/memory/clear", s.clearMemory)
	mux.HandleFunc("POST /settings/memory/enabled", s.setMemoryEnabled)
}

// themed renders every page in the theme chosen in Settings.
func (s *Server) themed(next http.Handler) http.Handler {
	if s.cfg.Providers == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(components.WithTheme(r.Context(), s.cfg.Providers.Theme())))
	})
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request) {
	page, err := s.settingsView(r.Context())
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	q := r.URL.Query()
	if msg := q.Get("saved"); msg != "" {
		page.Flash = components.Flash{Target: q.Get("at"), Message: msg}
		page.Agents.Flash = page.Flash
	}
	if name := q.Get("mcp"); name != "" && s.cfg.MCP != nil {
		if page.MCPForm, err = s.cfg.MCP.MCPForm(r.Context(), name); err != nil {
			page.Flash = components.Flash{Target: "mcp", Message: err.Error(), Error: true}
		}
	}
	s.renderSettings(w, r, http.StatusOK, page)
}

// demo says new chats get scripted replies, as things stand.
func (s *Server) demo() bool {
	if s.cfg.DemoNow != nil {
		return s.cfg.DemoNow()
	}
	return s.cfg.Demo
}

// banner is what every screen says above itself: demo mode, a nearly
// full disk.
func (s *Server) banner() components.Banner {
	b := components.Banner{Demo: s.demo()}
	if s.cfg.LowDisk != nil && !s.lowDiskSeen.Load() {
		b.LowDisk = s.cfg.LowDisk()
	}
	return b
}

// dismissLowDisk hides the low-disk warning until Parley restarts.
func (s *Server) dismissLowDisk(w http.ResponseWriter, r *http.Request) {
	s.lowDiskSeen.Store(true)
	_ = datastar.NewSSE(w, r).RemoveElementByID("low-disk")
}

// settingsView is the page as things stand.
func (s *Server) settingsView(ctx context.Context) (components.Settings, error) {
	sb, err := s.sidebar(ctx, "")
	if err != nil {
		return components.Settings{}, err
	}
	page := components.Settings{Sidebar: sb, Workspace: s.cfg.Workspace, Banner: s.banner(), Theme: "system"}
	if a, err := s.rt.Agent(""); err == nil {
		page.Model = a.CurrentModel()
	}
	page.Models = s.cfg.Models()
	if s.cfg.Approvals != nil {
		pols, rules, err := s.cfg.Approvals.Policies(ctx)
		if err != nil {
			return page, err
		}
		for _, p := range pols {
			page.Categories = append(page.Categories, components.CategoryPolicy{Category: p.Category, Policy: p.Policy, Tools: strings.Join(p.Tools, ", ")})
		}
		page.Rules = make([]components.AlwaysRule, len(rules))
		for i, r := range rules {
			page.Rules[i] = components.AlwaysRule{Index: i, Workspace: r.Workspace, Category: r.Category, Prefix: r.Prefix}
		}
	}
	if p := s.cfg.Providers; p != nil {
		if page.Providers, err = p.Providers(ctx); err != nil {
			return page, err
		}
		page.KeysNote, page.DefaultModel, page.Theme = p.KeysNote(), p.DefaultModel(ctx), p.Theme()
	}
	if m := s.cfg.MCP; m != nil {
		if page.MCP, err = m.MCP(ctx); err != nil {
			return page, err
		}
	}
	if page.Memory, err = s.memoryView(ctx); err != nil {
		return page, err
	}
	if page.ModelSettings, err = s.modelSettingsView(ctx); err != nil {
		return page, err
	}
	if page.Agents, err = s.agentsView(ctx); err != nil {
		return page, err
	}
	return page, nil
}

func (s *Server) renderSettings(w http.ResponseWriter, r *http.Request, status int, page components.Settings) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// no-store: the page describes keys, and a page kept in the back/forward
	// cache would keep its streams open: a few form posts later the
	// browser's six connections to the server would all be taken.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := components.SettingsPage(page).Render(r.Context(), w); err != nil {
		s.log.Warn("render settings", "err", err)
	}
}

// settingsDone answers a settings form. Posted from the page (Datastar),
// the settings are patched in place with the outcome by its section;
// posted by a plain form, the browser goes back to the page with the
// outcome (post/redirect/get), or gets the page again with the error. On
// an error what was typed stays, except a key.
func (s *Server) settingsDone(w http.ResponseWriter, r *http.Request, target, ok string, err error, keep func(*components.Settings)) {
	fromPage := r.Header.Get("Datastar-Request") == "true"
	if err == nil && !fromPage {
		http.Redirect(w, r, "/settings?"+url.Values{"at": {target}, "saved": {ok}}.Encode()+"#"+anchor(target), http.StatusSeeOther)
		return
	}
	page, verr := s.settingsView(r.Context())
	if verr != nil {
		s.httpError(w, r, verr)
		return
	}
	page.Flash = components.Flash{Target: target, Message: ok}
	if err != nil {
		page.Flash = components.Flash{Target: target, Message: err.Error(), Error: true}
		if keep != nil {
			keep(&page)
		}
	}
	if fromPage {
		// Everything a form changes, but never the MCP server list: only
		// its stream patches that, so an older state cannot come back.
		sse := datastar.NewSSE(w, r)
		for _, c := range []templ.Component{components.ProvidersView(page), components.ModelView(page),
			components.MCPNotes(page), components.MCPFormView(page.MCPForm)} {
			if err := sse.PatchElementTempl(c); err != nil {
				return
			}
		}
		return
	}
	s.renderSettings(w, r, http.StatusBadRequest, page)
}

func anchor(target string) string {
	switch target {
	case "model", "mcp":
		return target
	}
	return "provider-" + target
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

// providers is the provider settings, or a 400 when there are none.
func (s *Server) providers(w http.ResponseWriter, r *http.Request) (ProviderSettings, bool) {
	if s.cfg.Providers == nil {
		s.httpError(w, r, fmt.Errorf("%w: providers are not configurable here", errBadRequest))
		return nil, false
	}
	return s.cfg.Providers, true
}

// setTheme is a Datastar post: the page has applied the theme already.
func (s *Server) setTheme(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	var body struct {
		Theme string `json:"theme"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: want {theme}", errBadRequest))
		return
	}
	if err := p.SetTheme(r.Context(), body.Theme); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setDefaultModel(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	model := strings.TrimSpace(r.PostFormValue("model"))
	err := p.SetDefaultModel(r.Context(), model)
	now := s.defaultModel()
	msg := "Saved: new chats use " + model + " from now on."
	switch {
	case model == "":
		msg = "Cleared: new chats use " + now + "."
	case now != model:
		msg = "Saved, but new chats use " + now + ": the --model flag or PARLEY_MODEL wins over it."
	}
	s.settingsDone(w, r, "model", msg, err, func(page *components.Settings) { page.DefaultModel = model })
}

func (s *Server) setKey(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	provider := r.PathValue("provider")
	err := p.SetKey(r.Context(), provider, r.PostFormValue("key"))
	s.settingsDone(w, r, provider, "Key saved.", err, nil)
}

func (s *Server) deleteKey(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	provider := r.PathValue("provider")
	s.settingsDone(w, r, provider, "Key removed.", p.DeleteKey(r.Context(), provider), nil)
}

func (s *Server) setBaseURL(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	provider, u := r.PathValue("provider"), r.PostFormValue("url")
	err := p.SetBaseURL(r.Context(), provider, u)
	s.settingsDone(w, r, provider, "Address saved.", err, func(page *components.Settings) {
		for i := range page.Providers {
			if page.Providers[i].Name == provider {
				page.Providers[i].BaseURL = u
			}
		}
	})
}

func (s *Server) setLimits(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	provider, first, idle := r.PathValue("provider"), r.PostFormValue("firstToken"), r.PostFormValue("idle")
	err := p.SetLimits(r.Context(), provider, first, idle)
	s.settingsDone(w, r, provider, "Time limits saved; new replies use them.", err, func(page *components.Settings) {
		var bad *LimitError
		if !errors.As(err, &bad) {
			return
		}
		page.Flash = components.Flash{} // shown by each field instead
		for i := range page.Providers {
			if v := &page.Providers[i]; v.Name == provider {
				v.FirstToken, v.Idle, v.FirstTokenError, v.IdleError = first, idle, bad.FirstToken, bad.Idle
			}
		}
	})
}

// testProvider is a Datastar post: the outcome replaces the provider's
// test line.
func (s *Server) testProvider(w http.ResponseWriter, r *http.Request) {
	p, ok := s.providers(w, r)
	if !ok {
		return
	}
	provider := r.PathValue("provider")
	msg, err := p.TestProvider(r.Context(), provider)
	if err != nil {
		msg = err.Error()
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.TestResult(provider, msg, err == nil))
}

func (s *Server) mcpSettings(w http.ResponseWriter, r *http.Request) (MCPSettings, bool) {
	if s.cfg.MCP == nil {
		s.httpError(w, r, fmt.Errorf("%w: MCP servers are not configurable here", errBadRequest))
		return nil, false
	}
	return s.cfg.MCP, true
}

func (s *Server) saveMCP(w http.ResponseWriter, r *http.Request) {
	m, ok := s.mcpSettings(w, r)
	if !ok {
		return
	}
	f := components.MCPForm{
		Original: r.PostFormValue("original"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Command: r.PostFormValue("command"), Args: r.PostFormValue("args"), Env: r.PostFormValue("env"),
		URL: r.PostFormValue("url"), Headers: r.PostFormValue("headers"),
	}
	err := m.SaveMCP(r.Context(), f)
	s.settingsDone(w, r, "mcp", "Saved "+f.Name+"; it starts in the background.", err, func(page *components.Settings) {
		page.Flash = components.Flash{}
		f.Error = err.Error()
		page.MCPForm = f
	})
}

func (s *Server) removeMCP(w http.ResponseWriter, r *http.Request) {
	m, ok := s.mcpSettings(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	s.settingsDone(w, r, "mcp", "Removed "+name+".", m.RemoveMCP(r.Context(), name), nil)
}

func (s *Server) restartMCP(w http.ResponseWriter, r *http.Request) {
	m, ok := s.mcpSettings(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	s.settingsDone(w, r, "mcp", "Restarting "+name+".", m.RestartMCP(r.Context(), name), nil)
}

// mcpStream keeps the Settings page's server list live: one patch now and
// one after each change of a server's state or tools.
func (s *Server) mcpStream(w http.ResponseWriter, r *http.Request) {
	m, ok := s.mcpSettings(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // server shutdown ends the stream; unregistered when it ends
	sse := datastar.NewSSE(s.streamWriter(w), r, datastar.WithContext(ctx))
	for {
		changed := m.MCPChanged() // before reading: a change in between is not lost
		if err := sse.PatchElementTempl(components.MCPServers(m.MCPServers(), true)); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// MemorySettings reads and changes the working memory (Mastra's, per
// resource) and whether the agent uses it. The settings the server is
// given (Config.Providers) offer it when the app keeps one.
type MemorySettings interface {
	MemoryDocument(ctx context.Context, resourceID string) (chat.MemoryDoc, error)
	// SaveMemory replaces the document; "" clears it; one over the limit
	// is an error that says so, and nothing is stored.
	SaveMemory(ctx context.Context, resourceID, text string) error
	MemoryEnabled(ctx context.Context, agentID string) (bool, error)
	SetMemoryEnabled(ctx context.Context, agentID string, on bool) error
}

// memoryFormMax bounds a posted document: well past the limit, so that a
// big paste is told the limit rather than cut off.
const memoryFormMax = 4 << 20

// memory is the working memory's settings, when the app keeps one.
func (s *Server) memory() (MemorySettings, bool) {
	m, ok := s.cfg.Providers.(MemorySettings)
	return m, ok
}

// memoryAgent is the agent whose memory Settings turns on and off: the
// built-in one.
func (s *Server) memoryAgent() string {
	if a, err := s.rt.Agent(""); err == nil {
		return a.ID
	}
	return ""
}

func (s *Server) memoryView(ctx context.Context) (components.MemoryView, error) {
	m, ok := s.memory()
	if !ok {
		return components.MemoryView{}, nil
	}
	doc, err := m.MemoryDocument(ctx, defaultResource)
	if err != nil {
		return components.MemoryView{}, err
	}
	on, err := m.MemoryEnabled(ctx, s.memoryAgent())
	if err != nil {
		return components.MemoryView{}, err
	}
	v := components.MemoryView{Available: true, On: on, Text: doc.Text, Set: doc.Set, Template: doc.Template, Limit: toolkit.MaxWorkingMemoryBytes}
	if doc.Set && !doc.Updated.IsZero() {
		v.Updated = doc.Updated.Local().Format("2 Jan 2006 15:04")
	}
	return v, nil
}

// memoryDone answers a change of the working memory: the section patched
// in place with the outcome (Datastar), or back to the page (a plain
// form), where an error keeps what was typed.
func (s *Server) memoryDone(w http.ResponseWriter, r *http.Request, ok string, err error, typed *string) {
	fromPage := r.Header.Get("Datastar-Request") == "true"
	if err == nil && !fromPage {
		http.Redirect(w, r, "/settings?"+url.Values{"at": {"memory"}, "saved": {ok}}.Encode()+"#memory", http.StatusSeeOther)
		return
	}
	page, verr := s.settingsView(r.Context())
	if verr != nil {
		s.httpError(w, r, verr)
		return
	}
	page.Flash = components.Flash{Target: "memory", Message: ok}
	if err != nil {
		page.Flash = components.Flash{Target: "memory", Message: err.Error(), Error: true}
		if typed != nil && len(*typed) <= toolkit.MaxWorkingMemoryBytes*2 {
			page.Memory.Text = *typed
		}
	}
	if fromPage {
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.MemorySection(page))
		return
	}
	s.renderSettings(w, r, http.StatusBadRequest, page)
}

func (s *Server) saveMemory(w http.ResponseWriter, r *http.Request) {
	m, ok := s.memory()
	if !ok {
		s.httpError(w, r, fmt.Errorf("%w: working memory is not available here", errBadRequest))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, memoryFormMax)
	if err := r.ParseForm(); err != nil {
		s.memoryDone(w, r, "", fmt.Errorf("the working memory was not saved: it is over %d MiB (the limit is %d KiB)", memoryFormMax>>20, toolkit.MaxWorkingMemoryBytes>>10), nil)
		return
	}
	text := strings.ReplaceAll(r.PostFormValue("memory"), "\r\n", "\n")
	err := m.SaveMemory(r.Context(), defaultResource, text)
	msg := "Saved: the next run reads it."
	if strings.TrimSpace(text) == "" {
		msg = "Cleared: the agent starts again from the template."
	}
	if err != nil {
		err = fmt.Errorf("not saved: %w", err)
	}
	s.memoryDone(w, r, msg, err, &text)
}

func (s *Server) clearMemory(w http.ResponseWriter, r *http.Request) {
	m, ok := s.memory()
	if !ok {
		s.httpError(w, r, fmt.Errorf("%w: working memory is not available here", errBadRequest))
		return
	}
	s.memoryDone(w, r, "Cleared: the agent starts again from the template.", m.SaveMemory(r.Context(), defaultResource, ""), nil)
}

func (s *Server) setMemoryEnabled(w http.ResponseWriter, r *http.Request) {
	m, ok := s.memory()
	if !ok {
		s.httpError(w, r, fmt.Errorf("%w: working memory is not available here", errBadRequest))
		return
	}
	var body struct {
		On *bool `json:"on"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || body.On == nil {
		s.httpError(w, r, fmt.Errorf("%w: want {on: true|false}", errBadRequest))
		return
	}
	msg := "Memory is on: chats read it and the agent updates it."
	if !*body.On {
		msg = "Memory is off: chats neither read nor update it (it is kept)."
	}
	s.memoryDone(w, r, msg, m.SetMemoryEnabled(r.Context(), s.memoryAgent(), *body.On), nil)
}
