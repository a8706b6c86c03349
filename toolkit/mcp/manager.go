// Package mcp connects Parley to Model Context Protocol servers, over stdio
// (a command it runs) or streamable HTTP (a URL), with the official Go SDK.
//
// A Manager keeps one connection per configured server, started in the
// background: nothing waits for a server, so one that fails to start, dies,
// hangs or answers garbage never blocks the app or a chat. Each server has a
// state (starting, ready, failed, stopped) and the error that explains it.
// The tools of ready servers join the agent as "<server>_<tool>" (ToolName)
// with the server's JSON Schemas, through Manager.Tools, and follow the
// server's notifications/tools/list_changed.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
)

// State is where a server is in its life.
type State string

const (
	StateStarting State = "starting"
	StateReady    State = "ready"
	StateFailed   State = "failed"
	StateStopped  State = "stopped" // disabled, or removed while running
)

const (
	// DefaultStartTimeout bounds connecting and the first tool list.
	// Generous because `npx -y some-server` downloads the server on its
	// first start.
	DefaultStartTimeout = 60 * time.Second
	// DefaultCallTimeout bounds one tool call; past it the call is
	// cancelled and the model gets an error it can act on.
	DefaultCallTimeout = 2 * time.Minute
	// terminateAfter is how long a stdio server gets to exit after its
	// stdin closes before it is signalled (the SDK's default is 5s).
	terminateAfter = 2 * time.Second
	// stderrTail is how much of a stdio server's stderr is kept to explain
	// why it failed.
	stderrTail = 2048
)

// Options configure a Manager; zero values take the defaults.
type Options struct {
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// Env is the environment stdio servers start from, before their own
	// env entries; nil: os.Environ().
	Env []string
	// HTTPClient reaches streamable-HTTP servers; nil: a new client.
	HTTPClient *http.Client
	Log        *slog.Logger
}

// Entry is one server to run.
type Entry struct {
	Name   string
	Source string // where it is configured, for people: "settings", "mcp.json"
	Config ServerConfig
}

// Status is what people are shown of a server.
type Status struct {
	Name      string
	Source    string
	Transport string
	Target    string // the command line or URL
	Config    ServerConfig
	State     State
	Error     string // why it failed, or the last call that went wrong
	Tools     []ToolInfo
}

// ToolInfo is one of a server's tools.
type ToolInfo struct {
	Name        string // as the agent calls it
	MCPName     string // as the server calls it
	Description string
}

// Manager runs the configured servers and offers their tools.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]*server
	tools   map[string]*agentcore.Tool // of ready servers, by agent name; replaced, never changed
	known   map[string]bool            // every agent name ever offered
	changed chan struct{}              // closed and replaced on every change
	closed  bool
}

// NewManager returns a Manager with no servers.
func NewManager(opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	return &Manager{opts: opts, log: log, servers: map[string]*server{}, tools: map[string]*agentcore.Tool{},
		known: map[string]bool{}, changed: make(chan struct{})}
}

// Apply makes the running servers those of entries: new ones start,
// changed ones restart, missing ones stop. It returns at once; servers
// start in the background.
func (m *Manager) Apply(entries []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	want := map[string]Entry{}
	for _, e := range entries {
		want[e.Name] = e
	}
	for name, s := range m.servers {
		if e, ok := want[name]; !ok || !sameConfig(e.Config, s.cfg) || e.Source != s.source {
			s.stop()
			delete(m.servers, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if _, ok := m.servers[name]; ok {
			continue
		}
		m.servers[name] = m.start(want[name])
	}
	m.rebuildLocked()
}

// Restart stops the named server and starts it again.
func (m *Manager) Restart(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("restart MCP server %q: Parley is shutting down", name)
	}
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no MCP server named %q", name)
	}
	s.stop()
	m.servers[name] = m.start(Entry{Name: name, Source: s.source, Config: s.cfg})
	m.rebuildLocked()
	return nil
}

// closeGrace bounds how long Close waits for the servers to end: a server
// that does not answer its shutdown must not keep Parley from quitting.
const closeGrace = 5 * time.Second

// Close stops every server and waits, up to closeGrace, for them to end.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := slices.Collect(maps.Values(m.servers))
	for _, s := range servers {
		s.stop()
	}
	m.servers = map[string]*server{}
	m.rebuildLocked()
	m.mu.Unlock()
	deadline := time.After(closeGrace)
	for _, s := range servers {
		select {
		case <-s.done:
		case <-deadline:
			m.log.Warn("MCP server did not stop in time; leaving it", "server", s.name, "grace", closeGrace)
			return
		}
	}
}

// Tools are the tools of the ready servers by the name the agent calls
// them (Agent.ToolSource). The map is not to be modified.
func (m *Manager) Tools() map[string]*agentcore.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tools
}

// Offers reports whether name is, or was, one of the servers' tools: its
// approval category stays "mcp" even after its server went away.
func (m *Manager) Offers(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known[name]
}

// Status lists the servers by name.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.servers))
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		s := m.servers[name]
		st := Status{Name: name, Source: s.source, Transport: s.cfg.Transport(), Target: s.cfg.Target(),
			Config: s.cfg, State: s.state, Error: s.err}
		st.Tools = append(st.Tools, s.toolInfo...)
		out = append(out, st)
	}
	return out
}

// Changed is closed at the next change of any server's state or tools;
// call it again for the change after.
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// rebuildLocked recomputes the tool set and tells the watchers.
func (m *Manager) rebuildLocked() {
	tools := map[string]*agentcore.Tool{}
	for _, name := range slices.Sorted(maps.Keys(m.servers)) {
		s := m.servers[name]
		if s.state != StateReady {
			continue
		}
		for n, t := range s.tools {
			if _, taken := tools[n]; taken {
				continue // ToolName makes clashes all but impossible; first server wins
			}
			tools[n] = t
			m.known[n] = true
		}
	}
	m.tools = tools
	close(m.changed)
	m.changed = make(chan struct{})
}

func sameConfig(a, b ServerConfig) bool {
	return a.Transport() == b.Transport() && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) && a.URL == b.URL && maps.Equal(a.Headers, b.Headers) && a.Disabled == b.Disabled
}

// server is one configured server and its connection. Its mutable fields
// are guarded by the manager's mutex.
type server struct {
	m      *Manager
	name   string
	source string
	cfg    ServerConfig
	cancel context.CancelFunc
	done   chan struct{}

	state    State
	err      string
	session  *mcp.ClientSession
	tools    map[string]*agentcore.Tool
	toolInfo []ToolInfo
}

// start begins a server's life in the background; m.mu is held.
func (m *Manager) start(e Entry) *server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{m: m, name: e.Name, source: e.Source, cfg: e.Config, cancel: cancel, done: make(chan struct{}), state: StateStarting}
	if err := ValidName(e.Name); err != nil {
		s.state, s.err = StateFailed, err.Error()
		close(s.done)
		return s
	}
	if err := e.Config.Validate(); err != nil {
		s.state, s.err = StateFailed, "configuration: "+err.Error()
		close(s.done)
		return s
	}
	if e.Config.Disabled {
		s.state, s.err = StateStopped, "disabled"
		close(s.done)
		return s
	}
	go s.run(ctx)
	return s
}

// stop ends the server; m.mu is held. The connection closes in the
// background.
func (s *server) stop() {
	s.cancel()
	if s.state == StateStarting || s.state == StateReady {
		s.state, s.err = StateStopped, ""
	}
	s.tools, s.toolInfo = nil, nil
}

// update changes the server's state under the manager's lock, unless the
// server was stopped meanwhile (a stopped server's late news is dropped).
func (s *server) update(ctx context.Context, f func()) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	f()
	s.m.rebuildLocked()
}

func (s *server) fail(ctx context.Context, msg string) {
	s.m.log.Warn("MCP server failed", "server", s.name, "err", msg)
	s.update(ctx, func() {
		s.state, s.err, s.session, s.tools, s.toolInfo = StateFailed, msg, nil, nil, nil
	})
}

func (s *server) run(ctx context.Context) {
	defer close(s.done)
	stderr := &tail{max: stderrTail}
	transport, err := s.transport(stderr)
	if err != nil {
		s.fail(ctx, err.Error())
		return
	}
	refresh := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "parley", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // no roots, sampling or elicitation
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case refresh <- struct{}{}:
			default: // a refresh is already due
			}
		},
	})
	cctx, cancel := context.WithTimeout(ctx, s.m.opts.StartTimeout)
	session, err := client.Connect(cctx, transport, nil)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			s.fail(ctx, explain("start", err, cctx, s.m.opts.StartTimeout, stderr))
		}
		return
	}
	stopped := context.AfterFunc(ctx, func() { _ = session.Close() })
	defer stopped()

	lctx, cancel := context.WithTimeout(ctx, s.m.opts.StartTimeout)
	tools, info, problems, err := s.list(lctx, session)
	cancel()
	if err != nil {
		s.fail(ctx, explain("list tools", err, lctx, s.m.opts.StartTimeout, stderr))
		_ = session.Close()
		return
	}
	s.update(ctx, func() {
		s.state, s.err, s.session, s.tools, s.toolInfo = StateReady, problems, session, tools, info
	})

	waited := make(chan error, 1)
	go func() { waited <- session.Wait() }()
	for {
		select {
		case err := <-waited:
			if ctx.Err() == nil {
				s.fail(ctx, explain("connection", fmt.Errorf("the server stopped: %w", errOrEOF(err)), ctx, 0, stderr))
			}
			return
		case <-refresh:
			lctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
			tools, info, problems, err := s.list(lctx, session)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					s.update(ctx, func() { s.err = explain("refresh tools", err, lctx, s.m.opts.CallTimeout, stderr) })
				}
				continue
			}
			s.update(ctx, func() { s.tools, s.toolInfo, s.err = tools, info, problems })
		}
	}
}

func errOrEOF(err error) error {
	if err == nil {
		return errors.New("it closed the connection")
	}
	return err
}

// transport is how the server is reached.
func (s *server) transport(stderr *tail) (mcp.Transport, error) {
	if s.cfg.Transport() == TransportHTTP {
		client := *s.m.opts.HTTPClient
		if len(s.cfg.Headers) > 0 {
			client.Transport = withHeaders{headers: s.cfg.Headers, next: client.Transport}
		}
		// MaxRetries bounds how long a dead server is retried before the
		// connection counts as lost.
		return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &client, MaxRetries: 2}, nil
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Env = slices.Clone(s.m.opts.Env)
	for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
	}
	cmd.Stderr = stderr
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}, nil
}

// explain turns a failure into a sentence for the Settings page.
func explain(what string, err error, ctx context.Context, limit time.Duration, stderr *tail) string {
	msg := what + ": " + err.Error()
	if limit > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("%s: no answer within %s", what, limit)
	}
	if t := stderr.String(); t != "" {
		msg += "\nstderr: " + t
	}
	return msg
}

type withHeaders struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper must not modify its request
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	next := h.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.b), "�"))
}
