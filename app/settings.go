package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/components"
	"parley/toolkit/mcp"
	"parley/ui"
)

// preferencesKey is the setting holding the default model, the theme and
// the providers' base URLs (nothing secret: keys are in the KeyStore).
const preferencesKey = "preferences"

// mcpKey is the setting holding the MCP servers added in Settings, in the
// mcp.json shape.
const mcpKey = "mcp"

// mcpFileName is the MCP configuration file in the data folder, in the
// shape Claude Desktop and Cursor use.
const mcpFileName = "mcp.json"

// pingTimeout bounds a provider's connection test.
const pingTimeout = 15 * time.Second

// Themes the page can take.
var themes = []string{"system", "light", "dark"}

// Preferences is what the preferences setting holds.
type Preferences struct {
	DefaultModel string            `json:"defaultModel,omitempty"`
	Theme        string            `json:"theme,omitempty"`
	BaseURLs     map[string]string `json:"baseURLs,omitempty"`
	// Limits are each provider's own time limits, by provider name.
	Limits map[string]Limits `json:"limits,omitempty"`
}

// Limits are a provider's time limits as saved, in llm.FormatTimeout's
// form; "" leaves a limit to the global one (flag, environment, default).
type Limits struct {
	FirstToken string `json:"firstToken,omitempty"`
	Idle       string `json:"idle,omitempty"`
}

// The time limits' fields, as Settings names them.
const (
	firstTokenField = "Wait for the first token"
	idleField       = "Silence limit"
)

// baseURLProviders are the providers whose address Settings edits: the
// local and self-hosted servers.
var baseURLProviders = []string{"ollama", "openai-compatible"}

var providerLabels = map[string]string{
	"openai": "OpenAI", "anthropic": "Anthropic", "google": "Google Gemini", "openrouter": "OpenRouter",
	"ollama": "Ollama", "openai-compatible": "OpenAI-compatible",
}

// settings is the Settings page's backend (ui.ProviderSettings and
// ui.MCPSettings): provider keys and addresses, the default model, the
// theme, and the MCP servers.
//
// Precedence: a key or base URL saved in Settings wins over the
// environment variable (llm.Config's rule), so what the page shows as
// saved is what is used; the environment fills in what Settings leaves
// empty. Options.LLM, given by the caller, wins over both.
type settings struct {
	store   agentcore.SettingsStore
	keys    *KeyStore
	models  *models
	base    llm.Config
	mcp     *mcp.Manager
	mcpFile string
	// fixed is the model of --model, PARLEY_MODEL or --demo, which wins
	// over the default saved here; "": none.
	fixed string

	mu    sync.Mutex
	prefs Preferences
}

func loadPreferences(ctx context.Context, store agentcore.SettingsStore) (Preferences, error) {
	var p Preferences
	raw, ok, err := store.GetSetting(ctx, preferencesKey)
	if err != nil || !ok {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("read preferences: %w", err)
	}
	return p, nil
}

// llmConfig is the provider configuration as it stands: the caller's,
// then Settings', then the environment (inside llm).
func (s *settings) llmConfig() llm.Config {
	cfg := s.base
	cfg.APIKeys = merged(s.keys.Keys(), s.base.APIKeys)
	cfg.BaseURLs = merged(s.prefs.BaseURLs, s.base.BaseURLs)
	cfg.FirstTokenTimeouts, cfg.IdleTimeouts = map[string]time.Duration{}, map[string]time.Duration{}
	for p, l := range s.prefs.Limits {
		// Saved values were checked; one that no longer reads is left out.
		if d, err := llm.ParseTimeout(l.FirstToken); err == nil {
			cfg.FirstTokenTimeouts[p] = d
		}
		if d, err := llm.ParseTimeout(l.Idle); err == nil {
			cfg.IdleTimeouts[p] = d
		}
	}
	maps.Copy(cfg.FirstTokenTimeouts, s.base.FirstTokenTimeouts)
	maps.Copy(cfg.IdleTimeouts, s.base.IdleTimeouts)
	return cfg
}

func merged(under, over map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, under)
	maps.Copy(out, over)
	return out
}

// reconfigure hands the models the configuration as it now stands.
func (s *settings) reconfigure() {
	s.models.setConfig(s.llmConfig())
}

func (s *settings) savePrefs(ctx context.Context, p Preferences) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := s.store.SetSetting(ctx, preferencesKey, b); err != nil {
		return fmt.Errorf("save preferences: %w", err)
	}
	s.prefs = p
	s.reconfigure()
	return nil
}

// Providers lists the providers with where their key and address come from.
func (s *settings) Providers(ctx context.Context) ([]components.ProviderView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	getenv := s.base.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	saved := s.keys.Keys()
	// The global limits are the fields' placeholders.
	first, idle, _ := llm.Timeouts(s.base, "")
	var out []components.ProviderView
	for _, p := range llm.Providers() {
		v := components.ProviderView{Name: p, Label: cmp.Or(providerLabels[p], p), NeedsKey: !llm.Keyless(p) || p == "openai-compatible",
			KeyOptional: llm.Keyless(p), Problem: s.keys.Problem(p)}
		switch key, where := saved[p], s.keys.Where(p); {
		case s.base.APIKeys[p] != "":
			v.KeyStatus = "Set by the program that started Parley"
		case key != "":
			v.KeySet = true
			v.KeyStatus = "Saved" + lastFour(key) + ", " + map[string]string{KeptInKeyring: "in the OS keyring", KeptInFile: "in keys.json"}[where]
		default:
			for _, env := range llm.KeyEnvs(p) {
				if getenv(env) != "" {
					v.KeyStatus = "From $" + env
					break
				}
			}
			if v.KeyStatus == "" {
				v.KeyStatus = "Not set"
			}
		}
		if slices.Contains(baseURLProviders, p) {
			v.HasBaseURL = true
			v.BaseURL = s.prefs.BaseURLs[p]
			v.BaseEnv = llm.BaseEnv(p)
			v.BaseFromEnv = getenv(v.BaseEnv)
		}
		v.FirstToken, v.Idle = s.prefs.Limits[p].FirstToken, s.prefs.Limits[p].Idle
		v.FirstTokenDefault, v.IdleDefault = llm.FormatTimeout(first), llm.FormatTimeout(idle)
		v.Available = slices.Contains(llm.Available(s.llmConfig()), p)
		out = append(out, v)
	}
	return out, nil
}

// lastFour shows the end of a key long enough for that to give little away.
func lastFour(key string) string {
	if len(key) < 16 {
		return ""
	}
	return " (ends in " + key[len(key)-4:] + ")"
}

// KeysNote says where keys go, for the page.
func (s *settings) KeysNote() string {
	if err := s.keys.KeyringError(); err != nil {
		return fmt.Sprintf("No OS keyring could be used (%v): keys are saved in %s, readable by you only.", err, s.keys.Path())
	}
	return fmt.Sprintf("Keys are saved in the OS keyring when there is one, else in %s, readable by you only. They never go into the database and are never shown again.", s.keys.Path())
}

func (s *settings) SetKey(ctx context.Context, provider, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.keys.Set(provider, key); err != nil {
		return err
	}
	s.reconfigure()
	return nil
}

func (s *settings) DeleteKey(ctx context.Context, provider string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.keys.Delete(provider); err != nil {
		return err
	}
	s.reconfigure()
	return nil
}

func (s *settings) SetBaseURL(ctx context.Context, provider, raw string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(baseURLProviders, provider) {
		return fmt.Errorf("the address of %q is not set here", provider)
	}
	raw = strings.TrimSpace(raw)
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an http(s) address like http://127.0.0.1:11434", raw)
		}
	}
	p := s.prefs
	p.BaseURLs = merged(p.BaseURLs, nil)
	if raw == "" {
		delete(p.BaseURLs, provider)
	} else {
		p.BaseURLs[provider] = raw
	}
	return s.savePrefs(ctx, p)
}

// SetLimits saves a provider's time limits ("" for the global one); they
// apply to the replies started from now on. What does not read as a
// duration is a *ui.LimitError naming its field, and nothing is saved.
func (s *settings) SetLimits(ctx context.Context, provider, firstToken, idle string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(llm.Providers(), provider) {
		return fmt.Errorf("unknown provider %q", provider)
	}
	var l Limits
	var bad ui.LimitError
	read := func(field, raw string, into *string, problem *string) {
		if raw = strings.TrimSpace(raw); raw == "" {
			return
		}
		d, err := llm.ParseTimeout(raw)
		if err != nil {
			*problem = fmt.Sprintf("%s: %q is not a time limit; write a duration such as 10m or 90s", field, raw)
			return
		}
		*into = llm.FormatTimeout(d)
	}
	read(firstTokenField, firstToken, &l.FirstToken, &bad.FirstToken)
	read(idleField, idle, &l.Idle, &bad.Idle)
	if bad != (ui.LimitError{}) {
		return &bad
	}
	p := s.prefs
	p.Limits = maps.Clone(p.Limits)
	if p.Limits == nil {
		p.Limits = map[string]Limits{}
	}
	if l == (Limits{}) {
		delete(p.Limits, provider)
	} else {
		p.Limits[provider] = l
	}
	return s.savePrefs(ctx, p)
}

// TestProvider makes a real request to the provider with the settings as
// they stand; when it answers, its model list is fetched afresh for the
// picker.
func (s *settings) TestProvider(ctx context.Context, provider string) (string, error) {
	s.mu.Lock()
	cfg := s.llmConfig()
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	msg, err := llm.Ping(ctx, provider, cfg)
	if err != nil {
		return msg, err
	}
	if err := s.models.refresh(ctx, provider); err != nil {
		msg += "; its model list could not be read: " + err.Error()
	}
	return msg, nil
}

func (s *settings) DefaultModel(ctx context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefs.DefaultModel
}

// CurrentModel is the model new chats use now: the one fixed by the
// command line, else the default saved here when it can be opened, else
// the first provider with a key, else the demo model. It is read at the
// start of every run (agentcore.Agent.DefaultModel), so a default saved
// or a key added in Settings applies at once.
func (s *settings) CurrentModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fixed != "" {
		return s.fixed
	}
	if d := s.prefs.DefaultModel; d != "" {
		if _, err := s.models.open(d); err == nil {
			return d
		}
	}
	return pickModel(s.llmConfig())
}

// SetDefaultModel saves the model new chats use from now on.
func (s *settings) SetDefaultModel(ctx context.Context, model string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	model = strings.TrimSpace(model)
	if model != "" {
		if _, err := s.models.open(model); err != nil {
			return err
		}
	}
	p := s.prefs
	p.DefaultModel = model
	return s.savePrefs(ctx, p)
}

func (s *settings) Theme() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cmp.Or(s.prefs.Theme, "system")
}

func (s *settings) SetTheme(ctx context.Context, theme string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(themes, theme) {
		return fmt.Errorf("unknown theme %q (want system, light or dark)", theme)
	}
	p := s.prefs
	p.Theme = theme
	return s.savePrefs(ctx, p)
}

// mcpSettings reads the servers added in Settings.
func (s *settings) mcpSettings(ctx context.Context) (map[string]mcp.ServerConfig, error) {
	raw, ok, err := s.store.GetSetting(ctx, mcpKey)
	if err != nil || !ok {
		return map[string]mcp.ServerConfig{}, err
	}
	servers, err := mcp.ParseFile(raw)
	if err != nil {
		return nil, fmt.Errorf("read the MCP servers of Settings: %w", err)
	}
	return servers, nil
}

// mcpEntries are the servers to run: Settings' and mcp.json's (Settings
// wins a name both use), and what is wrong with mcp.json, if anything.
func (s *settings) mcpEntries(ctx context.Context) ([]mcp.Entry, string) {
	var problems []string
	fromSettings, err := s.mcpSettings(ctx)
	if err != nil {
		problems = append(problems, err.Error())
	}
	var entries []mcp.Entry
	for _, name := range slices.Sorted(maps.Keys(fromSettings)) {
		entries = append(entries, mcp.Entry{Name: name, Source: "settings", Config: fromSettings[name]})
	}
	b, err := os.ReadFile(s.mcpFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s: %v", s.mcpFile, err))
	default:
		fromFile, err := mcp.ParseFile(b)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", s.mcpFile, err))
		}
		for _, name := range slices.Sorted(maps.Keys(fromFile)) {
			if _, taken := fromSettings[name]; taken {
				problems = append(problems, fmt.Sprintf("%s: the server %q is also in Settings; the one in Settings is used", s.mcpFile, name))
				continue
			}
			entries = append(entries, mcp.Entry{Name: name, Source: mcpFileName, Config: fromFile[name]})
		}
	}
	return entries, strings.Join(problems, "\n")
}

// applyMCP (re)starts the servers as configured now; it never waits for
// one.
func (s *settings) applyMCP(ctx context.Context) {
	entries, _ := s.mcpEntries(ctx)
	s.mcp.Apply(entries)
}

// MCP is the Settings view of the servers.
func (s *settings) MCP(ctx context.Context) (components.MCPView, error) {
	_, problems := s.mcpEntries(ctx)
	v := components.MCPView{FilePath: s.mcpFile, FileError: problems}
	v.Servers = mcpServerViews(s.mcp.Status())
	return v, nil
}

// MCPServers is the live list of servers.
func (s *settings) MCPServers() []components.MCPServer { return mcpServerViews(s.mcp.Status()) }

func (s *settings) MCPChanged() <-chan struct{} { return s.mcp.Changed() }

func mcpServerViews(statuses []mcp.Status) []components.MCPServer {
	out := make([]components.MCPServer, 0, len(statuses))
	for _, st := range statuses {
		v := components.MCPServer{Name: st.Name, Source: st.Source, Transport: st.Transport, Target: st.Target,
			State: string(st.State), Error: st.Error, Editable: st.Source == "settings"}
		for _, t := range st.Tools {
			v.Tools = append(v.Tools, components.MCPTool{Name: t.Name, Description: t.Description})
		}
		out = append(out, v)
	}
	return out
}

// MCPForm is a Settings server as the form shows it ("" name: empty form).
func (s *settings) MCPForm(ctx context.Context, name string) (components.MCPForm, error) {
	if name == "" {
		return components.MCPForm{}, nil
	}
	servers, err := s.mcpSettings(ctx)
	if err != nil {
		return components.MCPForm{}, err
	}
	c, ok := servers[name]
	if !ok {
		return components.MCPForm{}, fmt.Errorf("no MCP server %q in Settings", name)
	}
	f := components.MCPForm{Original: name, Name: name, Command: c.Command, Args: strings.Join(c.Args, "\n"), URL: c.URL}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		f.Env += k + "=" + c.Env[k] + "\n"
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		f.Headers += k + ": " + c.Headers[k] + "\n"
	}
	return f, nil
}

// SaveMCP adds or changes a server of Settings and starts it.
func (s *settings) SaveMCP(ctx context.Context, f components.MCPForm) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.TrimSpace(f.Name)
	if err := mcp.ValidName(name); err != nil {
		return err
	}
	cfg, err := formConfig(f)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	servers, err := s.mcpSettings(ctx)
	if err != nil {
		return err
	}
	if _, taken := servers[name]; taken && name != f.Original {
		return fmt.Errorf("there is already a server named %q", name)
	}
	if entries, _ := s.mcpEntries(ctx); slices.ContainsFunc(entries, func(e mcp.Entry) bool { return e.Name == name && e.Source == mcpFileName }) {
		return fmt.Errorf("%q is a server of %s: edit it there, or pick another name", name, s.mcpFile)
	}
	if f.Original != "" {
		delete(servers, f.Original)
	}
	servers[name] = cfg
	if err := s.saveMCP(ctx, servers); err != nil {
		return err
	}
	s.applyMCP(ctx)
	return nil
}

// RemoveMCP removes a server of Settings and stops it.
func (s *settings) RemoveMCP(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	servers, err := s.mcpSettings(ctx)
	if err != nil {
		return err
	}
	if _, ok := servers[name]; !ok {
		return fmt.Errorf("no MCP server %q in Settings", name)
	}
	delete(servers, name)
	if err := s.saveMCP(ctx, servers); err != nil {
		return err
	}
	s.applyMCP(ctx)
	return nil
}

// RestartMCP restarts a server; mcp.json is read again first, so that a
// restart also picks up an edit of the file.
func (s *settings) RestartMCP(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyMCP(ctx)
	return s.mcp.Restart(name)
}

func (s *settings) saveMCP(ctx context.Context, servers map[string]mcp.ServerConfig) error {
	b, err := json.Marshal(mcp.File{Servers: servers})
	if err != nil {
		return err
	}
	if err := s.store.SetSetting(ctx, mcpKey, b); err != nil {
		return fmt.Errorf("save the MCP servers: %w", err)
	}
	return nil
}

// formConfig reads the server form: arguments one per line, environment
// as NAME=value lines, headers as "Name: value" lines.
func formConfig(f components.MCPForm) (mcp.ServerConfig, error) {
	c := mcp.ServerConfig{Command: strings.TrimSpace(f.Command), URL: strings.TrimSpace(f.URL)}
	c.Args = append(c.Args, lines(f.Args)...)
	for i, l := range lines(f.Env) {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return c, fmt.Errorf("environment line %d %q: want NAME=value", i+1, l)
		}
		if c.Env == nil {
			c.Env = map[string]string{}
		}
		c.Env[strings.TrimSpace(k)] = v
	}
	for i, l := range lines(f.Headers) {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return c, fmt.Errorf("header line %d: want \"Name: value\"", i+1)
		}
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		c.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if c.Command == "" && c.URL == "" {
		return c, errors.New("give a command to run (stdio) or a URL (streamable HTTP)")
	}
	return c, nil
}

// lines are the non-blank lines of a text box.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\r\n"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// mcpFilePath is the data folder's mcp.json.
func mcpFilePath(dataDir string) string { return filepath.Join(dataDir, mcpFileName) }
