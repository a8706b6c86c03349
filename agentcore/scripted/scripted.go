// Package scripted is a scripted OpenAI-compatible model server: the test
// double for the model, and the model behind Parley's demo mode
// (demo/scripted).
//
// It serves POST /v1/chat/completions and GET /v1/models over real HTTP and
// speaks the chat-completions wire format as OpenAI sends it: SSE chunks with
// text deltas, tool calls whose arguments are split across many chunks, a
// finish chunk, a usage chunk and "data: [DONE]". Each request is answered by
// the next Reply queued with Push or, when the queue is empty, by the default
// responder. A Reply can also inject failures: an HTTP error status, a
// connection cut mid-stream, a stall, a malformed chunk.
package scripted

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Reply scripts the answer to one request.
type Reply struct {
	// Text is streamed as content. It is split into word-ish tokens that keep
	// their whitespace, so the joined tokens give Text exactly.
	Text string
	// Tokens, when set, are streamed instead of Text's tokens.
	Tokens []string
	// ToolCalls follow the text; their Args are streamed in pieces.
	ToolCalls []ToolCall
	// ExactIDs sends the ToolCalls' IDs as they are, empty ones without an
	// id (as some OpenAI-compatible servers do), instead of generating the
	// empty ones.
	ExactIDs bool
	// ChunkSize is the number of text tokens per SSE chunk (default 1) and
	// the number of bytes of tool arguments per chunk, kept on UTF-8
	// boundaries (default: one word-ish token per chunk, as OpenAI does).
	ChunkSize int
	// Delay is the pause between chunks.
	Delay time.Duration
	// Usage reported in the usage chunk; zero fields are counted from the
	// request and the reply.
	Usage Usage

	// Status, when set, answers with this HTTP status and ErrorBody (an
	// OpenAI-style error object if empty) instead of a completion.
	Status    int
	ErrorBody string
	// Header is added to the response, e.g. Retry-After with a 429.
	Header http.Header
	// CutAfter > 0 closes the connection abruptly after that many chunks.
	CutAfter int
	// StallAfter > 0 stops writing after that many chunks and holds the
	// connection open until the client goes away or the server closes.
	StallAfter int
	// Malformed replaces the finish chunk with a data line that is not JSON.
	Malformed bool

	// OnChunk is called right after each content or tool-call chunk has been
	// written and flushed, with its index and the text it carried.
	OnChunk func(i int, token string, at time.Time)
}

// ToolCall is one tool call of a Reply or of an assistant message. An empty
// ID in a Reply gets a generated one unless the Reply has ExactIDs. An ID
// may be anything, and is sent as given: a test plays a provider whose ids
// are hostile, repeat or run long.
type ToolCall struct {
	ID   string
	Name string
	Args string // JSON text
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Server is a scripted model server. It is safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	queue    []Reply
	requests []Request
	respond  func(Request) Reply
	seq      int
	// titles answers the requests that ask for a chat's title (see
	// TitleMarker); titled records them.
	titles func(Request) string
	titled []Request

	done      chan struct{}
	closeOnce sync.Once
	srv       *http.Server
	url       string
}

// New returns a server that is not listening; serve its Handler.
func New() *Server {
	return &Server{done: make(chan struct{})}
}

// NewServer returns a server listening on 127.0.0.1 on a free port. Like
// httptest.NewServer it is meant for tests and demos and panics if it cannot
// listen; use New and Handler to serve it any other way.
func NewServer() *Server {
	s := New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("scripted: listen on loopback: %v", err))
	}
	s.url = "http://" + ln.Addr().String() + "/v1"
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s
}

// URL is the OpenAI base URL, like http://127.0.0.1:PORT/v1 ("" for New).
func (s *Server) URL() string { return s.url }

// Close stops the server and cuts every connection, stalled ones included.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		if s.srv != nil {
			s.srv.Close()
		}
	})
}

// Handler serves POST /v1/chat/completions and GET /v1/models.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	return mux
}

// Push queues replies; each request consumes the oldest one.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetDefault sets the responder used when the queue is empty. Without one,
// such requests get a 500 error.
func (s *Server) SetDefault(respond func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = respond
}

// TitleMarker begins the system prompt of a request for a chat's title
// (agentcore.TitlePrompt). The server answers such a request itself,
// outside the queue and the log of Requests, so that a test's scripted
// turns and its count of model calls stay what the test wrote: by default
// with nothing (the chat keeps the title its first message gave it);
// SetTitles changes that, as the demo does (DemoTitle).
const TitleMarker = "You name chats."

// SetTitles sets how title requests are answered.
func (s *Server) SetTitles(title func(Request) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.titles = title
}

// TitleRequests returns the title requests received so far.
func (s *Server) TitleRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.titled...)
}

// title answers req if it asks for a title.
func (s *Server) title(req Request) (Reply, bool) {
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" || !strings.HasPrefix(req.Messages[0].Content, TitleMarker) {
		return Reply{}, false
	}
	s.mu.Lock()
	s.titled = append(s.titled, req)
	title := s.titles
	s.mu.Unlock()
	if title == nil {
		return Reply{}, true // no title: the chat keeps the one it has
	}
	return Reply{Text: title(req)}, true
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// next records req and picks its reply and sequence number.
func (s *Server) next(req Request) (Reply, int) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.requests = append(s.requests, req)
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, seq
	}
	respond := s.respond
	s.mu.Unlock()
	if respond == nil {
		return Reply{Status: http.StatusInternalServerError,
			ErrorBody: errorJSON("scripted: no reply queued and no default responder")}, seq
	}
	return respond(req), seq
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model","created":1767225600,"owned_by":"parley"}]}`)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req Request
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, errorJSON("scripted: decode request: "+err.Error()))
		return
	}
	req.Body = body

	reply, titled := s.title(req)
	seq := 0
	if !titled {
		reply, seq = s.next(req)
	}
	for k, v := range reply.Header {
		w.Header()[k] = v
	}
	if reply.Status != 0 {
		if reply.ErrorBody == "" {
			reply.ErrorBody = errorJSON(http.StatusText(reply.Status))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.ErrorBody)
		return
	}
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" && !reply.ExactIDs {
			reply.ToolCalls[i].ID = fmt.Sprintf("call_scripted%d_%d", seq, i)
		}
	}
	c := completion{
		w: w, ctx: r.Context().Done(), done: s.done, reply: reply,
		id:      fmt.Sprintf("chatcmpl-scripted%d", seq),
		model:   cmp.Or(req.Model, "scripted"),
		created: time.Now().Unix(),
		usage:   reply.usage(req),
	}
	if req.Stream {
		c.stream()
	} else {
		c.whole()
	}
}

// usage fills the zero fields of r.Usage by counting tokens.
func (r Reply) usage(req Request) *usage {
	u := r.Usage
	if u.PromptTokens == 0 {
		for _, m := range req.Messages {
			u.PromptTokens += len(split(m.Content))
			for _, tc := range m.ToolCalls {
				u.PromptTokens += len(split(tc.Args))
			}
		}
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = len(r.tokens())
		for _, tc := range r.ToolCalls {
			u.CompletionTokens += len(split(tc.Args))
		}
	}
	return &usage{u.PromptTokens, u.CompletionTokens, u.PromptTokens + u.CompletionTokens}
}

func (r Reply) tokens() []string {
	if r.Tokens != nil {
		return r.Tokens
	}
	return split(r.Text)
}

func (r Reply) finishReason() string {
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// errorJSON is an error object as OpenAI sends it.
func errorJSON(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": "scripted_error", "param": nil, "code": nil}})
	return string(b)
}
