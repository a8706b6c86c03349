package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley/agentcore"
	"parley/app/chat"
)

// Parley as an MCP server: /api/mcp speaks MCP's streamable HTTP transport
// behind the same guard as the rest of the API (the token as a Bearer
// header), so another agent, a CI job or any MCP client can use Parley as
// its human in the loop: list and read chats, notify a chat's inbox, ask
// the user a question or for an approval and wait for the answer.
//
// Every argument comes from outside: each is checked and bounded, and a
// mistake is a tool error (isError) that names it, never a protocol
// failure. What reaches a page (a summary, a question) is only ever
// rendered escaped: the inbox's templ components and the answer page's
// html/template.
//
// An outside question is a notification in the chat's inbox (chat.Asks):
// its link opens a small answer page, /mcp/asks/<thread>/<id>. It is not a
// suspended tool call of the chat's agent, because answering one of those
// resumes the agent's run and writes the agent's history; the asker is not
// the agent.

const (
	// mcpMaxBody bounds one MCP request: a notification's payload (256
	// KiB) and the rest, which is small.
	mcpMaxBody = maxNotificationBody
	// mcpSessionIdle ends a session nobody has used for this long.
	mcpSessionIdle = time.Hour
	// mcpListMax bounds list_chats; mcpListDefault is what it lists unasked.
	mcpListMax     = 200
	mcpListDefault = 50
	// read_chat: messages per page, bytes per message, bytes per page. A
	// page fits an MCP client's context without flooding it.
	readChatMax     = 100
	readChatDefault = 20
	readMsgMax      = 8 << 10
	readPageMax     = 64 << 10
	// mcpProgressEvery: a waiting ask tells a client that asked for
	// progress that it is still waiting, so the client's timeout does not
	// end it.
	mcpProgressEvery = 15 * time.Second
	// mcpNoteSource is the source of notifications an MCP client files.
	mcpNoteSource = "mcp"
)

// mcpRoutes mounts the MCP endpoint and the page that answers outside asks.
func (s *Server) mcpRoutes(mux *http.ServeMux) {
	asks := chat.NewAsks(s.rt, s.ctx.Done())
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return s.mcpServer(asks, askBase(r))
	}, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes:          mcpMaxBody,
		SessionTimeout:               mcpSessionIdle,
		PropagateRequestCancellation: true,
	})
	mux.HandleFunc("/api/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// A client's standalone stream would hold Parley's shutdown
			// for its whole grace period: it ends with the server. (A
			// POST's stream ends when its call does; a waiting ask
			// returns its error at shutdown.)
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(s.ctx, cancel)()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
	s.mcpRegistryRoutes(mux, asks) // Mastra's /api/mcp/v0/servers, /api/mcp/parley/tools…
	mux.HandleFunc("GET /mcp/asks/{thread}/{id}", s.askPage(asks))
	mux.HandleFunc("POST /mcp/asks/{thread}/{id}", s.askAnswer(asks))
}

// askBase is this Parley's address as the client reached it (the guard
// checked its Host): the answer page's link in the inbox is absolute.
func askBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// mcpServer is one MCP session's server; base is the address answer links
// point to.
func (s *Server) mcpServer(asks *chat.Asks, base string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "parley", Title: "Parley", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Parley is a chat app with a person at the other end. list_chats and read_chat show its chats; " +
			"notify files a notification in a chat's inbox; ask_user and request_approval ask the person and wait for the answer.",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "list_chats", Description: "List Parley's chats, most recently active first: id, title, updatedAt."}, s.mcpListChats)
	mcp.AddTool(srv, &mcp.Tool{Name: "read_chat", Description: "Read a chat's messages as text, with each message's role and status, " +
		"the newest page first. Pass the returned `before` to read the page before it."}, s.mcpReadChat)
	mcp.AddTool(srv, &mcp.Tool{Name: "notify", Description: "Post a notification into a chat's inbox. " +
		"A pending notification with the same dedupeKey is updated instead of repeated. " +
		"Depending on priority and whether the chat's agent is busy, the agent may read it too."}, s.mcpNotify)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_user", Description: "Ask the person using Parley a question in a chat and wait for the answer " +
		"(it may take minutes or hours). Give an id to ask again after an error: the same id waits for the same question."},
		func(ctx context.Context, req *mcp.CallToolRequest, in askUserIn) (*mcp.CallToolResult, askUserOut, error) {
			r, id, err := s.mcpAsk(ctx, req, asks, base, chat.Ask{ID: in.ID, ThreadID: in.ThreadID, Kind: chat.AskQuestion, Text: in.Question, Options: in.Options})
			if err != nil {
				return nil, askUserOut{}, err
			}
			return textResult("User answered: " + r.Answer), askUserOut{ID: id, Answer: r.Answer}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "request_approval", Description: "Ask the person using Parley to approve or deny an action, " +
		"and wait for the decision and its reason. Give an id to ask again after an error."},
		func(ctx context.Context, req *mcp.CallToolRequest, in approvalIn) (*mcp.CallToolResult, approvalOut, error) {
			r, id, err := s.mcpAsk(ctx, req, asks, base, chat.Ask{ID: in.ID, ThreadID: in.ThreadID, Kind: chat.AskApproval, Text: in.Action})
			if err != nil {
				return nil, approvalOut{}, err
			}
			word := "denied"
			if r.Approved {
				word = "approved"
			}
			text := "The user " + word + " it."
			if r.Reason != "" {
				text += " Reason: " + r.Reason
			}
			return textResult(text), approvalOut{ID: id, Approved: r.Approved, Reason: r.Reason}, nil
		})
	return srv
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

type listChatsIn struct {
	Limit int `json:"limit,omitempty" jsonschema:"how many chats to list (1-200, default 50)"`
}

type chatRef struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
}

type listChatsOut struct {
	Chats []chatRef `json:"chats"`
}

func (s *Server) mcpListChats(ctx context.Context, _ *mcp.CallToolRequest, in listChatsIn) (*mcp.CallToolResult, listChatsOut, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = mcpListDefault
	case limit < 0 || limit > mcpListMax:
		return nil, listChatsOut{}, fmt.Errorf("limit must be between 1 and %d, not %d", mcpListMax, in.Limit)
	}
	threads, err := s.rt.ListThreads(ctx, agentcore.ThreadQuery{Limit: limit})
	if err != nil {
		return nil, listChatsOut{}, fmt.Errorf("list chats: %w", err)
	}
	out := listChatsOut{Chats: []chatRef{}}
	for _, t := range threads {
		out.Chats = append(out.Chats, chatRef{ID: t.ID, Title: t.Title, UpdatedAt: t.UpdatedAt})
	}
	return nil, out, nil
}

type readChatIn struct {
	ThreadID string `json:"threadId" jsonschema:"the chat's id (from list_chats)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"messages per page (1-100, default 20)"`
	Before   int64  `json:"before,omitempty" jsonschema:"read the page before this cursor (the before of the previous page)"`
}

type readChatOut struct {
	ThreadID string `json:"threadId"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	Messages int    `json:"messages"`
	// Before is the cursor of the page before this one; 0: this is the first.
	Before int64 `json:"before,omitempty"`
}

func (s *Server) mcpReadChat(ctx context.Context, _ *mcp.CallToolRequest, in readChatIn) (*mcp.CallToolResult, readChatOut, error) {
	if err := checkMCPThread(in.ThreadID); err != nil {
		return nil, readChatOut{}, err
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = readChatDefault
	case limit < 0 || limit > readChatMax:
		return nil, readChatOut{}, fmt.Errorf("limit must be between 1 and %d, not %d", readChatMax, in.Limit)
	}
	if in.Before < 0 {
		return nil, readChatOut{}, fmt.Errorf("before must be a cursor from read_chat, not %d", in.Before)
	}
	t, err := s.rt.GetThread(ctx, in.ThreadID)
	if err != nil {
		return nil, readChatOut{}, mcpNotFound(in.ThreadID, err)
	}
	// One more than the page: is there a page before it?
	msgs, err := s.rt.ListMessages(ctx, t.ID, agentcore.MessageQuery{Limit: limit + 1, Last: true, BeforeSeq: in.Before})
	if err != nil {
		return nil, readChatOut{}, fmt.Errorf("read chat %s: %w", t.ID, err)
	}
	more := len(msgs) > limit
	if more {
		msgs = msgs[1:]
	}
	blocks := make([]string, len(msgs))
	total := 0
	for i, m := range msgs {
		blocks[i] = messageText(m)
		total += len(blocks[i]) + 2
	}
	// Over the page's bytes: the oldest go to the page before.
	for len(blocks) > 1 && total > readPageMax {
		total -= len(blocks[0]) + 2
		blocks, msgs, more = blocks[1:], msgs[1:], true
	}
	out := readChatOut{ThreadID: t.ID, Title: t.Title, Text: strings.Join(blocks, "\n\n"), Messages: len(msgs)}
	if more && len(msgs) > 0 {
		out.Before = msgs[0].Seq
	}
	if out.Text == "" {
		out.Text = "(no messages)"
	}
	return textResult(out.Text), out, nil
}

// messageText is one message as a reader of a transcript wants it: a
// header with its role and status, its text, and one line per tool call.
func messageText(m agentcore.Message) string {
	var b strings.Builder
	head := string(m.Role)
	if m.Type != "" {
		head += " " + m.Type
	}
	fmt.Fprintf(&b, "[%s · %s · %s]\n", head, statusWord(m.Status), m.CreatedAt.UTC().Format(time.RFC3339))
	for _, p := range m.Content.Parts {
		switch {
		case p.Type == "text":
			b.WriteString(p.Text)
			b.WriteString("\n")
		case p.Type == "tool-invocation" && p.ToolInvocation != nil:
			ti := p.ToolInvocation
			fmt.Fprintf(&b, "(tool %s, %s) args: %s", ti.ToolName, ti.State, clipText(string(ti.Args), 500))
			if len(ti.Result) > 0 {
				fmt.Fprintf(&b, " result: %s", clipText(string(ti.Result), 1000))
			}
			b.WriteString("\n")
		}
	}
	if len(m.Content.Parts) == 0 && m.Content.Content != "" {
		b.WriteString(m.Content.Content)
	}
	return clipText(strings.TrimRight(b.String(), "\n"), readMsgMax)
}

func statusWord(s agentcore.MessageStatus) string {
	if s == "" {
		return string(agentcore.StatusComplete)
	}
	return string(s)
}

// clipText cuts s to at most n bytes on a rune boundary, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" …[%d bytes more]", len(s)-cut)
}

type notifyIn struct {
	ThreadID  string `json:"threadId" jsonschema:"the chat's id (from list_chats)"`
	Summary   string `json:"summary" jsonschema:"one line the user reads in the inbox"`
	Priority  string `json:"priority,omitempty" jsonschema:"low, normal (the default), high or urgent"`
	Kind      string `json:"kind,omitempty" jsonschema:"what it is about, e.g. build-failed (default: notice)"`
	DedupeKey string `json:"dedupeKey,omitempty" jsonschema:"a pending notification with the same key is updated, not repeated"`
	Payload   any    `json:"payload,omitempty" jsonschema:"any JSON value kept with it (at most 256 KiB); a url field becomes the notification's link"`
}

type notifyOut struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	CoalescedCount int    `json:"coalescedCount"`
	Decision       string `json:"decision"`
}

// mcpNotify files a notification the way POST /api/notifications does:
// the runtime's Notify, with its checks and its dedupe.
func (s *Server) mcpNotify(ctx context.Context, req *mcp.CallToolRequest, in notifyIn) (*mcp.CallToolResult, notifyOut, error) {
	if err := checkMCPThread(in.ThreadID); err != nil {
		return nil, notifyOut{}, err
	}
	p := in.Priority
	if p == "normal" {
		p = string(agentcore.PriorityMedium)
	}
	pr, err := agentcore.ParsePriority(p)
	if err != nil {
		return nil, notifyOut{}, fmt.Errorf("invalid priority %q: use low, normal, high or urgent", in.Priority)
	}
	note := agentcore.NotificationInput{
		Source: mcpNoteSource, Kind: in.Kind, Summary: in.Summary, Priority: pr,
		SourceID: clientName(req), DedupeKey: in.DedupeKey,
	}
	if note.Kind == "" {
		note.Kind = "notice"
	}
	switch {
	case len(in.Summary) > chat.MaxAskText:
		return nil, notifyOut{}, fmt.Errorf("summary is %d bytes, more than the %d allowed", len(in.Summary), chat.MaxAskText)
	case len(in.Kind) > agentcore.MaxIDLen || len(in.DedupeKey) > agentcore.MaxIDLen*4:
		return nil, notifyOut{}, errors.New("kind and dedupeKey must be short (kind at most 128 bytes, dedupeKey 512)")
	}
	if in.Payload != nil {
		raw, err := json.Marshal(in.Payload)
		if err != nil {
			return nil, notifyOut{}, fmt.Errorf("payload: %v", err)
		}
		note.Payload = raw
	}
	if err := note.Check(); err != nil {
		return nil, notifyOut{}, err
	}
	res, err := s.rt.Notify(ctx, note, agentcore.NotifyTarget{ThreadID: in.ThreadID})
	if err != nil {
		return nil, notifyOut{}, mcpNotFound(in.ThreadID, err)
	}
	out := notifyOut{ID: res.Record.ID, Status: string(res.Record.Status), CoalescedCount: res.Record.CoalescedCount, Decision: res.Decision.Action}
	return textResult(fmt.Sprintf("Notification %s filed (%s).", out.ID, out.Decision)), out, nil
}

type askUserIn struct {
	ThreadID string   `json:"threadId" jsonschema:"the chat to ask in (from list_chats)"`
	Question string   `json:"question" jsonschema:"the question, plain text"`
	Options  []string `json:"options,omitempty" jsonschema:"choices to offer; the user may also write their own answer"`
	ID       string   `json:"id,omitempty" jsonschema:"your id for this question (letters, digits, - and _): ask again with it after an error"`
}

type askUserOut struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
}

type approvalIn struct {
	ThreadID string `json:"threadId" jsonschema:"the chat to ask in (from list_chats)"`
	Action   string `json:"action" jsonschema:"what is to be approved, plain text"`
	ID       string `json:"id,omitempty" jsonschema:"your id for this request (letters, digits, - and _): ask again with it after an error"`
}

type approvalOut struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}

// mcpAsk files an outside ask and waits for its answer, telling a client
// that wants progress that it still waits.
func (s *Server) mcpAsk(ctx context.Context, req *mcp.CallToolRequest, asks *chat.Asks, base string, a chat.Ask) (chat.Reply, string, error) {
	if a.ID == "" {
		a.ID = "ask-" + shortID()
	}
	a.Asker = clipText(clientName(req), chat.MaxAskOption-20)
	if err := chat.CheckAsk(a); err != nil {
		return chat.Reply{}, a.ID, err
	}
	a.Link = base + "/mcp/asks/" + url.PathEscape(a.ThreadID) + "/" + url.PathEscape(a.ID)
	if token := req.Params.GetProgressToken(); token != nil {
		tick := time.NewTicker(mcpProgressEvery)
		defer tick.Stop()
		waitCtx, done := context.WithCancel(ctx)
		defer done()
		go func() {
			n := 0.0
			for {
				select {
				case <-waitCtx.Done():
					return
				case <-tick.C:
					n++
					_ = req.Session.NotifyProgress(waitCtx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: "waiting for the user"})
				}
			}
		}()
	}
	r, err := asks.Ask(ctx, a)
	switch {
	case errors.Is(err, chat.ErrAskInterrupted):
		return r, a.ID, fmt.Errorf("Parley stopped before the user answered: call again with the same id (%s) to keep waiting for the same question", a.ID)
	case errors.Is(err, chat.ErrAskSuperseded):
		return r, a.ID, fmt.Errorf("another call with id %s now waits for this answer", a.ID)
	case err != nil:
		return r, a.ID, mcpNotFound(a.ThreadID, err)
	}
	return r, a.ID, nil
}

func shortID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// clientName is the name the MCP client gave itself, if any.
func clientName(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
		return clipText(p.ClientInfo.Name, agentcore.MaxIDLen)
	}
	return ""
}

func checkMCPThread(id string) error {
	if !agentcore.ValidID(id) {
		return fmt.Errorf("threadId must be a chat id from list_chats (1 to %d letters, digits, '-' or '_')", agentcore.MaxIDLen)
	}
	return nil
}

// mcpNotFound names a missing chat plainly.
func mcpNotFound(threadID string, err error) error {
	if errors.Is(err, agentcore.ErrNotFound) {
		return fmt.Errorf("no chat has id %s (list_chats lists them)", threadID)
	}
	return err
}

// askView is what the answer page shows.
type askView struct {
	Ask      chat.Ask
	Waiting  bool
	Done     string // what happened, after a POST
	Error    string
	ChatPath string
}

// askPage shows an outside ask with its answer form.
func (s *Server) askPage(asks *chat.Asks) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		threadID, id := r.PathValue("thread"), r.PathValue("id")
		a, ok := asks.Waiting(threadID, id)
		s.renderAsk(w, askView{Ask: a, Waiting: ok, ChatPath: "/t/" + url.PathEscape(threadID)})
	}
}

// askAnswer takes the answer form: a question's answer (a choice, or the
// user's own words), or an approval's decision and reason.
func (s *Server) askAnswer(asks *chat.Asks) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		threadID, id := r.PathValue("thread"), r.PathValue("id")
		r.Body = http.MaxBytesReader(w, r.Body, 4*chat.MaxAnswer)
		v := askView{ChatPath: "/t/" + url.PathEscape(threadID)}
		a, ok := asks.Waiting(threadID, id)
		if err := r.ParseForm(); err != nil {
			v.Ask, v.Waiting, v.Error = a, ok, "The answer could not be read: it may be too long."
			s.renderAsk(w, v)
			return
		}
		var reply chat.Reply
		if ok && a.Kind == chat.AskApproval {
			switch r.PostForm.Get("decision") {
			case "approve":
				reply.Approved = true
			case "deny":
			default:
				v.Ask, v.Waiting, v.Error = a, ok, "Choose Approve or Deny."
				s.renderAsk(w, v)
				return
			}
			reply.Reason = strings.TrimSpace(r.PostForm.Get("reason"))
		} else {
			reply.Answer = strings.TrimSpace(r.PostForm.Get("custom"))
			if reply.Answer == "" {
				reply.Answer = strings.TrimSpace(r.PostForm.Get("answer"))
			}
		}
		if err := asks.Answer(r.Context(), threadID, id, reply); err != nil {
			a, ok = asks.Waiting(threadID, id)
			v.Ask, v.Waiting, v.Error = a, ok, "Not answered: "+err.Error()
			s.renderAsk(w, v)
			return
		}
		v.Done = "Answered. The asker has your answer."
		s.renderAsk(w, v)
	}
}

func (s *Server) renderAsk(w http.ResponseWriter, v askView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := askTmpl.Execute(w, v); err != nil {
		s.log.Warn("render answer page", "err", err)
	}
}

// askTmpl is the answer page; html/template escapes every value in it.
var askTmpl = template.Must(template.New("ask").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley — a question for you</title><link rel="stylesheet" href="/static/app.css"></head>
<body class="login-page"><main class="login ask-page">
<h1>{{if eq .Ask.Kind "approval"}}Approval requested{{else}}A question for you{{end}}</h1>
{{if .Done}}<p id="ask-done" role="status">{{.Done}}</p>
{{else if .Waiting}}
{{if .Ask.Asker}}<p class="ask-asker">From <strong id="ask-asker">{{.Ask.Asker}}</strong></p>{{end}}
<p id="ask-text" class="ask-text" style="white-space: pre-wrap">{{.Ask.Text}}</p>
{{if .Error}}<p id="ask-error" role="alert">{{.Error}}</p>{{end}}
<form method="post" class="login-form" id="ask-form">
{{if eq .Ask.Kind "approval"}}
<label for="ask-reason">Reason (optional)</label>
<textarea id="ask-reason" name="reason" rows="3"></textarea>
<button class="btn btn-send" type="submit" name="decision" value="approve" id="ask-approve">Approve</button>
<button class="btn" type="submit" name="decision" value="deny" id="ask-deny">Deny</button>
{{else}}
{{range $i, $o := .Ask.Options}}<label class="ask-option"><input type="radio" name="answer" value="{{$o}}" id="ask-option-{{$i}}"> {{$o}}</label>
{{end}}
<label for="ask-custom">{{if .Ask.Options}}Or your own answer{{else}}Your answer{{end}}</label>
<textarea id="ask-custom" name="custom" rows="3"{{if not .Ask.Options}} required{{end}}></textarea>
<button class="btn btn-send" type="submit" id="ask-submit">Answer</button>
{{end}}
</form>
{{else}}
<p id="ask-gone">Nobody waits for this answer now: it was answered, the asker stopped waiting, or Parley restarted and the asker has not asked again yet.</p>
{{if .Error}}<p id="ask-error" role="alert">{{.Error}}</p>{{end}}
{{end}}
<p><a href="{{.ChatPath}}">Back to the chat</a></p>
</main></body></html>
`))
