package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/app/chat"
	"parley/storage"
	"parley/toolkit"
	"parley/toolkit/mcp"
	"parley/ui"
)

// DemoModel is the scripted model Parley runs on when no provider has a key.
const DemoModel = "demo/scripted"

// defaultModels is what Parley picks, in order, when --model is not given:
// the first provider with a key wins.
var defaultModels = []struct{ provider, model string }{
	{"anthropic", "anthropic/claude-sonnet-4-5"},
	{"openai", "openai/gpt-4.1"},
	{"google", "google/gemini-2.5-flash"},
	{"openrouter", "openrouter/anthropic/claude-sonnet-4.5"},
}

const instructions = `You are Parley, a helpful assistant working with the user in a local-first chat app.
You can read the user's workspace (a folder on their machine) with the view, find_files and search_content tools: use them when the question is about their files, and cite paths.
Answer clearly and concisely. Use Markdown: fenced code blocks with a language, lists and tables where they help.`

// Instance is one wired Parley: store, runtime and UI server.
type Instance struct {
	Config  Config
	Store   *storage.DB
	Runtime *agentcore.Runtime
	UI      *ui.Server
	Inbox   *chat.Inbox      // what needs the user, computed once per change for every page
	Demo    *scripted.Server // the demo model's server, when running on demo/scripted
	MCP     *mcp.Manager     // the MCP servers and their tools
	Keys    *KeyStore        // provider keys saved in Settings
	Memory  *chat.Memory     // the working memory (Mastra's) and its on/off setting
	Agents  *chat.Agents     // the user's own agents, beside the built-in one
	Log     *slog.Logger

	lock        *dataLock // the data folder's, released by Close
	stopBackups func()    // ends the daily backups, before the store closes
	stopMemory  func()    // ends returning a big reply's memory after its run
}

// Options adjust wiring for tests and benchmarks.
type Options struct {
	// LLM is the provider configuration (keys, base URLs, timeouts); zero
	// value: the environment.
	LLM llm.Config
	// Scripted, when set, serves demo/scripted instead of a server of the
	// instance's own (tests push replies into it).
	Scripted *scripted.Server
	// Auth guards the UI server; nil: ui.NewAuth(c.Token). The desktop
	// shell passes its own to mint the window's launch secret.
	Auth *ui.Auth
	// PickFolder, in the desktop shell, opens the native folder picker.
	PickFolder func(ctx context.Context) (string, error)
	// Tools are added to the agent's tools (tests register their own).
	Tools map[string]*agentcore.Tool
	// Keyring keeps provider keys; nil: the OS keyring (keys fall back
	// to a file in the data folder when it cannot be used).
	Keyring Keyring
	// MCP adjusts the MCP servers' timeouts; Env defaults to Parley's
	// environment without its keys.
	MCP mcp.Options
	Log *slog.Logger
	// LowDisk is the free space on the data folder's disk below which the
	// screens warn; 0: DefaultLowDisk.
	LowDisk uint64
}

// Open wires a Parley instance. Close it when done. It holds the data
// folder's lock from before the database is opened until Close: while
// another Parley runs on the folder, Open is a *RunningError.
func Open(ctx context.Context, c Config, o Options) (*Instance, error) {
	lock, err := lockDataDir(c.DataDir)
	if err != nil {
		return nil, err
	}
	return openLocked(ctx, c, o, lock)
}

func open(ctx context.Context, c Config, o Options) (*Instance, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	if o.LLM.Getenv == nil {
		o.LLM.Getenv = c.Getenv
	}
	tok, err := accessToken(c)
	if err != nil {
		return nil, err
	}
	c.Token = tok
	db, err := storage.Open(ctx, c.DBPath())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", c.DBPath(), err)
	}
	in := &Instance{Config: c, Store: db, Log: log}
	ws, err := toolkit.NewWorkspace(c.Workspace)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if r := db.Recovered(); r.Messages > 0 || r.Runs > 0 {
		log.Info("marked what the last shutdown cut off as interrupted", "messages", r.Messages, "runs", r.Runs)
	}
	keys, err := OpenKeys(c.DataDir, o.Keyring)
	if err != nil {
		db.Close()
		return nil, err
	}
	in.Keys = keys
	prefs, err := loadPreferences(ctx, db)
	if err != nil {
		log.Warn("preferences unreadable; using the defaults", "err", err)
	}
	sv := &settings{store: db, keys: keys, base: o.LLM, mcpFile: mcpFilePath(c.DataDir), prefs: prefs}

	m := newModels(sv.llmConfig())
	sv.models = m
	model := c.Model
	sv.fixed = model
	if c.Demo {
		sv.fixed = DemoModel
	}
	if model == "" && !c.Demo && prefs.DefaultModel != "" {
		if _, err := m.open(prefs.DefaultModel); err == nil {
			model = prefs.DefaultModel
		} else {
			log.Warn("the default model of Settings cannot be used; picking another", "model", prefs.DefaultModel, "err", err)
		}
	}
	if c.Demo || model == "" {
		model = pickModel(sv.llmConfig())
	}
	if c.Demo {
		model = DemoModel
	}
	if model == DemoModel || o.Scripted != nil {
		m.demo = o.Scripted
		if m.demo == nil {
			m.demo = scripted.NewServer()
			m.demo.SetDefault(scripted.Demo)
			m.demo.SetTitles(scripted.DemoTitle)
			in.Demo = m.demo
		}
	}
	auth := o.Auth
	if auth == nil {
		auth = ui.NewAuth(c.Token)
	}
	agent := &agentcore.Agent{
		ID:           "parley",
		Name:         "Parley",
		Description:  "The assistant of Parley, a local-first chat app.",
		Instructions: agentcore.Text(instructions),
		Model:        model,
		DefaultModel: sv.CurrentModel,
		Models:       m.open,
		Tools:        map[string]*agentcore.Tool{},
		// A chat message answers an open question (spec §1.1).
		AutoResumeSuspendedTools: true,
		// Questions from MCP clients are the user's to answer, not the agent's.
		DeliveryPolicy: &agentcore.DeliveryPolicy{Sources: map[string]agentcore.Decision{chat.AskSource: chat.AskPolicy}},
		Log:            log,
	}
	// The runtime comes first: the tools below are bound to it. They join
	// the agent before any run starts (StartNotifications, the UI).
	in.Runtime = agentcore.NewRuntime(db, log, agent)
	agent.Tools["ask_user"] = toolkit.AskUserTool()
	// Workspace tools work in the chat's own folder when it has one.
	wss := &toolkit.Workspaces{Default: ws}
	for _, set := range []func(*toolkit.Workspace) map[string]*agentcore.Tool{toolkit.ReadOnly, toolkit.Edit} {
		for name := range set(ws) {
			agent.Tools[name] = toolkit.PerThread(wss, func(w *toolkit.Workspace) *agentcore.Tool { return set(w)[name] })
		}
	}
	agent.Tools["submit_plan"] = toolkit.PerThread(wss, func(w *toolkit.Workspace) *agentcore.Tool { return toolkit.SubmitPlanTool(w.Root()) })
	// In Plan mode write_file may only write the plan.
	// A chat's task list and approved plans follow its active branch.
	in.Runtime.OnBranch = chat.BranchState(chat.New(in.Runtime), db)
	// What the file tools change is journaled, so that leaving a branch
	// of a chat can put the files back (Edit and Regenerate offer it).
	for _, name := range []string{"write_file", "edit_file", "delete_file"} {
		agent.Tools[name] = toolkit.Journaled(wss, db, log, agent.Tools[name])
	}
	agent.Tools["write_file"] = chat.PlanGuarded(wss, agent.Tools["write_file"])
	agent.Tools["web_fetch"] = toolkit.WebFetchTool()
	// Offered only to models that have it (OpenAI, Anthropic, Gemini 3 and later).
	agent.Tools["web_search"] = toolkit.WebSearchTool()
	// MCP servers start in the background; their tools join each run as
	// they are when it starts.
	mcpOpts := o.MCP
	if mcpOpts.Env == nil {
		mcpOpts.Env = toolkit.CommandEnv(os.Environ())
	}
	if mcpOpts.Log == nil {
		mcpOpts.Log = log
	}
	in.MCP = mcp.NewManager(mcpOpts)
	sv.mcp = in.MCP
	agent.ToolSource = in.MCP.Tools
	sv.applyMCP(ctx)
	category := func(name string) string {
		if _, own := agent.Tools[name]; !own && in.MCP.Offers(name) {
			return toolkit.CategoryMCP
		}
		return toolkit.Category(name)
	}
	gate := chat.NewGate(db, ws.Root(), category, func() []string {
		names := make([]string, 0, len(agent.Tools))
		for n := range agent.ToolSet() {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	})
	agent.Hooks.BeforeToolCall = gate.Before
	// The user's own agents: profiles over this one (Settings → Agents).
	in.Agents = chat.NewAgents(db, agent, category)
	gate.UseAgents(in.Agents)
	// The task tools tell the views of a thread about changes through the
	// runtime; the inbox tool reads the runtime's notifications.
	for name, t := range toolkit.TaskTools(db, func(threadID string, _ []toolkit.Task) { in.Runtime.TasksChanged(threadID) }) {
		agent.Tools[name] = t
	}
	agent.Processors = append(agent.Processors, toolkit.NewTaskStateProcessor(db))
	agent.Tools["notification-inbox"] = toolkit.NotificationInboxTool(in.Runtime)
	// Working memory (Mastra's, per resource): the tool, and on every run
	// the document, unless Settings turned it off for this agent.
	agent.Tools[toolkit.UpdateWorkingMemoryName] = toolkit.UpdateWorkingMemoryTool(db)
	agent.Processors = append(agent.Processors, &toolkit.WorkingMemoryHistory{})
	for name, t := range o.Tools {
		agent.Tools[name] = t
	}
	memory := chat.NewMemory(db, log)
	in.Memory = memory
	in.Runtime.Prepare = memory.WithMemory(agent, chat.NewModelDefaults(db).WithDefaults(chat.PrepareWith(agent, wss, in.Agents)))
	in.Runtime.AutoTitle = true
	in.Runtime.StartNotifications()
	in.stopMemory = returnMemory(in.Runtime, heapBeyondLive, releaseMemory)
	in.Inbox = chat.NewInbox(in.Runtime, log)
	in.UI, err = ui.New(ui.Config{
		Runtime: in.Runtime,
		Inbox:   in.Inbox,
		Models:  m.list,
		CheckModel: func(spec string) error {
			_, err := m.open(spec)
			return err
		},
		Demo:       model == DemoModel,
		DemoNow:    func() bool { return sv.CurrentModel() == DemoModel },
		Workspace:  ws.Root(),
		Approvals:  gate,
		Agents:     in.Agents,
		Journal:    db,
		Providers:  withMemory{sv, memory},
		MCP:        sv,
		PickFolder: o.PickFolder,
		Auth:       auth,
		Log:        log,
		LowDisk:    (&diskWatch{dir: c.DataDir, min: cmp.Or(o.LowDisk, DefaultLowDisk), log: log}).Warning,
	})
	if err != nil {
		in.Close()
		return nil, err
	}
	in.stopBackups = dailyBackups(db, c.DBPath(), log)
	return in, nil
}

// Close stops every run (their partial replies are kept, marked
// interrupted), then closes the store and lets the data folder go.
func (in *Instance) Close() {
	if in.UI != nil {
		in.UI.Shutdown()
	}
	if in.Inbox != nil {
		in.Inbox.Close()
	}
	if in.Runtime != nil {
		in.Runtime.Close()
	}
	if in.stopMemory != nil {
		in.stopMemory()
	}
	if in.MCP != nil {
		in.MCP.Close()
	}
	if in.Demo != nil {
		in.Demo.Close()
	}
	if in.stopBackups != nil {
		in.stopBackups()
	}
	if err := in.Store.Close(); err != nil {
		in.Log.Error("close store", "err", err)
	}
	in.lock.release()
}

// pickModel is the first default model whose provider has a key, else the
// demo model.
func pickModel(cfg llm.Config) string {
	have := map[string]bool{}
	for _, p := range llm.Available(cfg) {
		have[p] = true
	}
	for _, d := range defaultModels {
		if have[d.provider] {
			return d.model
		}
	}
	return DemoModel
}

// models opens and caches models by their provider/model string, and
// keeps what each configured provider says it offers, for the picker.
type models struct {
	cfg  llm.Config
	demo *scripted.Server

	mu    sync.Mutex
	cache map[string]llm.Model
	// offered is each provider's own model list as last fetched (absent:
	// not asked since the configuration changed; empty: the ask failed);
	// asking, the fetches under way. gen counts configuration changes: a
	// fetch made with an older configuration is dropped.
	offered map[string][]string
	asking  map[string]bool
	gen     int
}

func newModels(cfg llm.Config) *models {
	return &models{cfg: cfg, cache: map[string]llm.Model{}, offered: map[string][]string{}, asking: map[string]bool{}}
}

func (m *models) open(spec string) (llm.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lm, ok := m.cache[spec]; ok {
		return lm, nil
	}
	var lm llm.Model
	var err error
	if spec == DemoModel {
		if m.demo == nil {
			return nil, fmt.Errorf("%s: the demo model runs only in demo mode (start with --demo)", spec)
		}
		cfg := m.cfg
		cfg.BaseURLs = map[string]string{"openai-compatible": m.demo.URL()}
		cfg.APIKeys = map[string]string{"openai-compatible": "demo"}
		lm, err = llm.Open("openai-compatible/scripted", cfg)
	} else {
		lm, err = llm.Open(spec, m.cfg)
	}
	if err != nil {
		return nil, err
	}
	m.cache[spec] = lm
	return lm, nil
}

// setConfig changes the provider configuration (a key or address saved
// in Settings): models are opened afresh from now on.
func (m *models) setConfig(cfg llm.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = cfg
	clear(m.cache)
	m.gen++
	m.offered, m.asking = map[string][]string{}, map[string]bool{}
}

// refresh asks provider for its model list now (Settings' connection
// test) and keeps the answer.
func (m *models) refresh(ctx context.Context, provider string) error {
	m.mu.Lock()
	cfg, gen := m.cfg, m.gen
	m.mu.Unlock()
	ids, err := llm.ListModels(ctx, provider, cfg)
	m.keep(provider, gen, ids, err)
	return err
}

// fetch is refresh in the background, for a list not asked for yet.
func (m *models) fetch(provider string, cfg llm.Config, gen int) {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	ids, err := llm.ListModels(ctx, provider, cfg)
	m.keep(provider, gen, ids, err)
}

func (m *models) keep(provider string, gen int, ids []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen {
		return
	}
	delete(m.asking, provider)
	if err != nil {
		ids = []string{} // not asked again until the test in Settings or a change
	}
	m.offered[provider] = ids
}

// list is what the model picker offers: the demo model in demo mode, the
// defaults of every provider with a key, then the models each of them
// lists. A list not fetched yet is asked for in the background, for the
// next look.
func (m *models) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	if m.demo != nil {
		out = append(out, DemoModel)
	}
	available := llm.Available(m.cfg)
	for _, d := range defaultModels {
		if slices.Contains(available, d.provider) {
			out = append(out, d.model)
		}
	}
	for _, p := range available {
		ids, asked := m.offered[p]
		if !asked && !m.asking[p] {
			m.asking[p] = true
			go m.fetch(p, m.cfg, m.gen)
		}
		for _, id := range ids {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}
