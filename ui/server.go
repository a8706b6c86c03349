// Package ui is Parley's HTTP face: the pages and their Datastar streams, the
// JSON API in Mastra's server shape, auth, and the embedded static assets.
//
// One long-lived stream per open chat pushes HTML patches; short POSTs change
// state and return. A POST never renders what the stream will render.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"parley/agentcore"
	"parley/app/chat"
)

//go:embed static
var staticFS embed.FS

// Config wires the server to the runtime.
type Config struct {
	Runtime *agentcore.Runtime
	// Models lists the provider/model strings the model picker offers.
	Models func() []string
	// Journal is what the file tools wrote (nil: Edit and Regenerate
	// offer no restoring of files).
	Journal agentcore.FileJournal
	// CheckModel reports why a model string cannot be used (nil: it can).
	CheckModel func(spec string) error
	// Demo says replies are scripted: the UI says so plainly.
	Demo bool
	// DemoNow, when set, says it as things stand, instead of Demo: a key
	// saved in Settings ends the demo without a restart.
	DemoNow func() bool
	// Workspace is the folder the agent works in, shown in Settings.
	Workspace string
	// PickFolder opens a native folder picker (desktop); nil: the page asks
	// for a path.
	PickFolder func(ctx context.Context) (string, error)
	// Approvals edits approval policies (nil: Settings shows none).
	Approvals ApprovalSettings
	// Agents are the user's own agents (nil: only the built-in one).
	Agents *chat.Agents
	// Providers edits provider keys and addresses, the default model and
	// the theme; MCP the MCP servers (nil: Settings shows none).
	Providers ProviderSettings
	MCP       MCPSettings
	// Auth guards every request; the zero value lets loopback clients in.
	Auth *Auth
	Log  *slog.Logger
	// StreamWriteTimeout bounds one write of a long-lived stream; 0 means
	// DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// Inbox is the inbox every page shows; nil: the server follows the
	// runtime with one of its own, closed by Shutdown.
	Inbox *chat.Inbox
	// LowDisk says what to warn of while the data folder's disk is nearly
	// full ("" when it is not); nil: never.
	LowDisk func() string
}

// Server serves the UI and the API.
type Server struct {
	cfg    Config
	rt     *agentcore.Runtime
	log    *slog.Logger
	static fs.FS
	hosts  *hostList
	ctx    context.Context // ends streams on shutdown
	stop   context.CancelFunc
	// focused: page id → true for the pages that have the focus.
	focused  sync.Map
	gates    sync.Map // stream token → *gate of the open chat streams (flow.go)
	inboxes  *chat.Inbox
	ownInbox bool // made by New: Shutdown closes it
	// lowDiskSeen: the user dismissed the low-disk warning; it is not
	// shown again until Parley restarts.
	lowDiskSeen atomic.Bool
}

// New checks the embedded assets and returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("ui: no runtime")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Models == nil {
		cfg.Models = func() []string { return nil }
	}
	if cfg.CheckModel == nil {
		cfg.CheckModel = func(string) error { return nil }
	}
	if cfg.Auth == nil {
		cfg.Auth = &Auth{}
	}
	if cfg.StreamWriteTimeout <= 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(static, "datastar.js"); err != nil {
		return nil, fmt.Errorf("ui: the Datastar client is not embedded (run `make assets` before building): %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, rt: cfg.Runtime, log: cfg.Log, static: static, hosts: &hostList{}, ctx: ctx, stop: stop, inboxes: cfg.Inbox}
	if s.inboxes == nil {
		s.inboxes, s.ownInbox = chat.NewInbox(cfg.Runtime, cfg.Log), true
	}
	return s, nil
}

// AllowHosts sets the Host header values the server answers to (DNS
// rebinding defence). Call it once the listening address is known.
func (s *Server) AllowHosts(hosts ...string) { s.hosts.set(hosts) }

// Shutdown ends every open stream so http.Server.Shutdown can finish.
func (s *Server) Shutdown() {
	s.stop()
	if s.ownInbox {
		s.inboxes.Close()
	}
}

// Handler returns the server's routes behind its guards.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", s.staticHandler()))
	mux.HandleFunc("GET /static/code.css", s.codeCSS)
	mux.HandleFunc("GET /auth", s.cfg.Auth.exchange)
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("POST /threads", s.createThread)
	mux.HandleFunc("GET /t/{id}", s.threadPage)
	mux.HandleFunc("GET /t/{id}/stream", s.stream)
	mux.HandleFunc("POST /t/{id}/ack", s.ack) // flow control of the stream (flow.go)
	mux.HandleFunc("GET /t/{id}/older", s.olderPage)
	mux.HandleFunc("GET /t/{id}/newer", s.newerPage)
	mux.HandleFunc("GET /search", s.searchBox)
	mux.HandleFunc("POST /t/{id}/send", s.send)
	mux.HandleFunc("POST /t/{id}/unsend/{msg}", s.unsend)
	mux.HandleFunc("GET /inbox/stream", s.inboxStream)
	mux.HandleFunc("POST /inbox/act", s.inboxAct)
	mux.HandleFunc("POST /inbox/seen-all", s.inboxSeenAll)
	mux.HandleFunc("POST /inbox/focus", s.inboxFocus)
	mux.HandleFunc("POST /t/{id}/stop", s.stopRun)
	mux.HandleFunc("POST /t/{id}/retry", s.retry)
	mux.HandleFunc("GET /t/{id}/m/{msg}/editor", s.messageEditor)
	mux.HandleFunc("GET /t/{id}/m/{msg}/view", s.messageAgain)
	mux.HandleFunc("POST /t/{id}/m/{msg}/edit", s.editMessage)
	mux.HandleFunc("POST /t/{id}/m/{msg}/regenerate", s.regenerate)
	mux.HandleFunc("GET /t/{id}/m/{msg}/models", s.regenerateModels)
	mux.HandleFunc("POST /t/{id}/m/{msg}/switch", s.switchBranch)
	mux.HandleFunc("POST /t/{id}/m/{msg}/fork", s.fork)
	mux.HandleFunc("GET /t/{id}/messages/{msg}/text", s.messageText)
	mux.HandleFunc("POST /t/{id}/rename", s.rename)
	mux.HandleFunc("POST /t/{id}/pin", s.pin)
	mux.HandleFunc("POST /t/{id}/model", s.setModel)
	mux.HandleFunc("POST /t/{id}/instructions", s.setInstructions)
	mux.HandleFunc("POST /t/{id}/sampling", s.setSampling)
	mux.HandleFunc("POST /t/{id}/delete", s.deleteThread)
	mux.HandleFunc("POST /t/{id}/restore", s.restoreThread)
	mux.HandleFunc("POST /t/{id}/answer/{call}", s.answer)
	mux.HandleFunc("POST /t/{id}/mode", s.setMode)
	mux.HandleFunc("POST /t/{id}/thinking", s.setThinking)
	mux.HandleFunc("POST /t/{id}/yolo", s.setYOLO)
	mux.HandleFunc("POST /t/{id}/workspace", s.setWorkspace)
	mux.HandleFunc("GET /t/{id}/export.md", s.exportPage("md"))
	mux.HandleFunc("GET /t/{id}/export.json", s.exportPage("json"))
	mux.HandleFunc("POST /import", s.importPage)
	mux.HandleFunc("POST /banner/low-disk/dismiss", s.dismissLowDisk)
	s.settingsRoutes(mux)
	s.filesRoutes(mux) // attachments
	s.agentRoutes(mux)
	s.apiRoutes(mux)
	s.registryRoutes(mux) // memory search and status, working memory, workflows
	s.observeRoutes(mux)  // traces, logs, metrics, scores, feedback, datasets
	s.mcpRoutes(mux)      // MCP's streamable HTTP and the page that answers its asks
	return s.guard(s.themed(mux))
}

func (s *Server) staticHandler() http.Handler {
	files := http.FileServerFS(s.static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Assets are embedded in the binary: they change only with it.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// httpError answers a failed request with a short plain-text reason.
func (s *Server) httpError(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	if code == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	http.Error(w, strings.TrimSpace(err.Error()), code)
}

var errBadRequest = errors.New("bad request")

// statusOf is the HTTP status a failure answers with.
func statusOf(err error) int {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status
	case errors.Is(err, agentcore.ErrNotFound), errors.Is(err, agentcore.ErrNotSuspended):
		return http.StatusNotFound
	case errors.Is(err, agentcore.ErrBusy), errors.Is(err, agentcore.ErrWaiting), errors.Is(err, agentcore.ErrNothingToRetry):
		return http.StatusConflict
	case errors.Is(err, agentcore.ErrClosed), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	case errors.Is(err, errBadRequest), errors.Is(err, agentcore.ErrBadResume):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
