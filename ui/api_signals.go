package ui

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"parley/agentcore"
	"parley/app/attach"
)

// Signals and notifications: Mastra's send-message, queue-message and
// signals routes, a thread subscription, and Parley's notification inbox
// (POST /api/notifications lets a CI job, a cron script or a webhook relay
// notify a thread).

// maxNotificationBody bounds a notification request: its payload may be
// 256 KiB, and the rest is small. A payload over the limit is named as
// such, not as a body that is too large.
const maxNotificationBody = agentcore.MaxNotificationPayload + 64<<10

func (s *Server) signalRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/agents/{agentId}/send-message", s.api(s.apiSendMessage))
	mux.HandleFunc("POST /api/agents/{agentId}/queue-message", s.api(s.apiQueueMessage))
	mux.HandleFunc("POST /api/agents/{agentId}/signals", s.api(s.apiSendSignal))
	mux.HandleFunc("POST /api/agents/{agentId}/state-signals", s.api(s.apiSendStateSignal))
	mux.HandleFunc("GET /api/agents/{agentId}/threads/{threadId}/subscribe", s.apiSubscribe)
	mux.HandleFunc("POST /api/agents/{agentId}/threads/abort", s.api(s.apiAbortThread))
	mux.HandleFunc("POST /api/notifications", s.apiNotify)
	mux.HandleFunc("GET /api/notifications", s.api(s.apiListNotifications))
	mux.HandleFunc("PATCH /api/notifications/{threadId}/{id}", s.api(s.apiUpdateNotification))
}

// signalOpts are the routing options every signal route takes.
type signalOpts struct {
	RunID      string              `json:"runId"`
	ResourceID string              `json:"resourceId"`
	ThreadID   string              `json:"threadId"`
	IfActive   *agentcore.IfActive `json:"ifActive"`
	IfIdle     *ifIdleBody         `json:"ifIdle"`
}

// ifIdleBody is Mastra's ifIdle: what to do on an idle thread, and the
// options of the run a wake starts (streamOptions, as generate takes them).
type ifIdleBody struct {
	agentcore.IfIdle
	StreamOptions *runBody `json:"streamOptions"`
}

// target is where the signal goes, checked as Mastra's signal routes check
// it: without a runId, both resourceId and threadId; a thread of another
// resource is refused.
func (s *Server) target(r *http.Request, o signalOpts, agentID string) (agentcore.SignalTarget, error) {
	if o.RunID == "" && (o.ResourceID == "" || o.ThreadID == "") {
		return agentcore.SignalTarget{}, badRequest("resourceId and threadId are required when runId is not provided")
	}
	if o.ThreadID != "" && o.ResourceID != "" {
		if t, err := s.rt.GetThread(r.Context(), o.ThreadID); err == nil && t.ResourceID != "" && t.ResourceID != o.ResourceID {
			return agentcore.SignalTarget{}, errOtherResource
		}
	}
	if o.IfIdle != nil && o.ThreadID == "" {
		return agentcore.SignalTarget{}, badRequest("ifIdle needs a thread target: give resourceId and threadId")
	}
	to := agentcore.SignalTarget{RunID: o.RunID, ResourceID: o.ResourceID, ThreadID: o.ThreadID, AgentID: agentID}
	if o.IfActive != nil {
		to.IfActive = *o.IfActive
	}
	if o.IfIdle != nil {
		to.IfIdle = o.IfIdle.IfIdle
		if so := o.IfIdle.StreamOptions; so != nil {
			agent, err := s.apiAgent(agentID)
			if err != nil {
				return agentcore.SignalTarget{}, err
			}
			if to.IfIdle.Options, err = so.options(agent); err != nil {
				var ae *apiError
				if errors.As(err, &ae) {
					return agentcore.SignalTarget{}, badRequest("ifIdle.streamOptions: %s", ae.msg)
				}
				return agentcore.SignalTarget{}, err
			}
		}
	}
	return to, nil
}

// messageBody is a message as Mastra takes it: a string, parts (text, and
// a user's images and files, as in generate's messages), or {contents,
// attributes, metadata}.
type messageBody struct {
	text  string
	attrs agentcore.Attrs
	files []attach.File
}

func (m *messageBody) UnmarshalJSON(data []byte) error {
	var str string
	if json.Unmarshal(data, &str) == nil {
		m.text = str
		return nil
	}
	var parts []inputPart
	if json.Unmarshal(data, &parts) == nil {
		var texts []string
		for i, p := range parts {
			switch p.Type {
			case "text":
				texts = append(texts, p.Text)
			case "image", "file":
				f, err := p.file()
				if err != nil {
					return fmt.Errorf("contents[%d]: %v", i, err)
				}
				m.files = append(m.files, f)
			default:
				return fmt.Errorf("message part of type %q: want text, image or file", p.Type)
			}
		}
		m.text = strings.Join(texts, "\n")
		return attach.CheckMessage(sizes(m.files))
	}
	var obj struct {
		Contents   json.RawMessage `json:"contents"`
		Attributes agentcore.Attrs `json:"attributes"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("message must be a string, text parts or {contents, attributes}: %w", err)
	}
	var inner messageBody
	if err := inner.UnmarshalJSON(obj.Contents); err != nil {
		return err
	}
	m.text, m.attrs, m.files = inner.text, obj.Attributes, inner.files
	return nil
}

func sizes(files []attach.File) []int64 {
	out := make([]int64, len(files))
	for i, f := range files {
		out[i] = int64(len(f.Data))
	}
	return out
}

type sendMessageBody struct {
	signalOpts
	Message *messageBody `json:"message"`
}

// signalAnswer is what the signal routes answer: Mastra's
// sendAgentSignalResponseSchema, {accepted: true, runId, signal}, where
// runId is the run that took the signal, or else (persisted, discarded or
// queued on an idle thread) the signal's id, as Mastra's server answers.
// Action is Parley's addition: what became of the signal (wake, deliver,
// persist, discard, queue).
type signalAnswer struct {
	Accepted bool             `json:"accepted"`
	RunID    string           `json:"runId"`
	Signal   agentcore.Signal `json:"signal"`
	Action   string           `json:"action"`
}

func newSignalAnswer(acc agentcore.Accepted, sig agentcore.Signal, to agentcore.SignalTarget) signalAnswer {
	return signalAnswer{Accepted: true, RunID: cmp.Or(acc.RunID, to.RunID, sig.ID), Signal: sig, Action: acc.Action}
}

func (s *Server) apiSendMessage(r *http.Request) (any, error) {
	return s.sendMessage(r, false)
}

func (s *Server) apiQueueMessage(r *http.Request) (any, error) {
	return s.sendMessage(r, true)
}

func (s *Server) sendMessage(r *http.Request, queue bool) (any, error) {
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	var b sendMessageBody
	if err := decodeBodyUpTo(r, &b, maxRunBody); err != nil {
		return nil, err
	}
	if b.Message == nil || (strings.TrimSpace(b.Message.text) == "" && len(b.Message.files) == 0) {
		return nil, badRequest("message is required and must not be empty")
	}
	to, err := s.target(r, b.signalOpts, agent.ID)
	if err != nil {
		return nil, err
	}
	files, err := s.storeFileParts(r.Context(), b.Message.files)
	if err != nil {
		return nil, err
	}
	var acc agentcore.Accepted
	var sig agentcore.Signal
	if queue {
		if to.ThreadID == "" {
			return nil, badRequest("queue-message needs a thread: give resourceId and threadId")
		}
		acc, sig, err = s.rt.QueueMessage(r.Context(), b.Message.text, to, files...)
	} else {
		acc, sig, err = s.rt.SendMessage(r.Context(), b.Message.text, b.Message.attrs, to, files...)
	}
	if err != nil {
		return nil, signalError(err)
	}
	return newSignalAnswer(acc, sig, to), nil
}

type sendSignalBody struct {
	signalOpts
	Signal *struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		TagName    string          `json:"tagName"`
		Contents   *messageBody    `json:"contents"`
		Attributes agentcore.Attrs `json:"attributes"`
		Metadata   map[string]any  `json:"metadata"`
		Transient  bool            `json:"transient"`
	} `json:"signal"`
}

func (s *Server) apiSendSignal(r *http.Request) (any, error) {
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	var b sendSignalBody
	if err := decodeBodyUpTo(r, &b, maxRunBody); err != nil {
		return nil, err
	}
	if b.Signal == nil {
		return nil, badRequest("signal is required")
	}
	to, err := s.target(r, b.signalOpts, agent.ID)
	if err != nil {
		return nil, err
	}
	in := agentcore.Signal{ID: b.Signal.ID, Type: agentcore.SignalType(b.Signal.Type), TagName: b.Signal.TagName,
		Attributes: b.Signal.Attributes, Metadata: b.Signal.Metadata, Transient: b.Signal.Transient}
	if b.Signal.Contents != nil {
		in.Contents = b.Signal.Contents.text
		if in.Files, err = s.storeFileParts(r.Context(), b.Signal.Contents.files); err != nil {
			return nil, err
		}
	}
	acc, sig, err := s.rt.SendSignal(r.Context(), in, to)
	if err != nil {
		return nil, signalError(err)
	}
	return newSignalAnswer(acc, sig, to), nil
}

// abortBody is Mastra's abortAgentThreadBodySchema.
type abortBody struct {
	ResourceID    string  `json:"resourceId"`
	ThreadID      *string `json:"threadId"`
	ExpectedRunID string  `json:"expectedRunId"`
}

// apiAbortThread answers POST /api/agents/:id/threads/abort as Mastra does:
// {aborted: true} when the thread's run in progress was stopped (and, with
// expectedRunId, was that run); {aborted: false} when none was going.
func (s *Server) apiAbortThread(r *http.Request) (any, error) {
	var b abortBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if b.ThreadID == nil {
		return nil, &issuesError{"Invalid request body", []apiIssue{zodRequired("threadId")}}
	}
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	if *b.ThreadID == "" {
		return nil, badRequest("threadId is required")
	}
	no := map[string]bool{"aborted": false}
	t, err := s.rt.GetThread(r.Context(), *b.ThreadID)
	switch {
	case errors.Is(err, agentcore.ErrNotFound):
		return no, nil // no thread, no run
	case err != nil:
		return nil, err
	case b.ResourceID != "" && t.ResourceID != "" && t.ResourceID != b.ResourceID:
		return nil, errOtherResource
	}
	live, ok := s.rt.Live(t.ID)
	if !ok || (live.Run.AgentID != "" && live.Run.AgentID != agent.ID) || (b.ExpectedRunID != "" && live.Run.ID != b.ExpectedRunID) {
		return no, nil
	}
	return map[string]bool{"aborted": s.rt.Stop(r.Context(), t.ID)}, nil
}

type stateSignalBody struct {
	signalOpts
	State *agentcore.StateInput `json:"state"`
}

func (s *Server) apiSendStateSignal(r *http.Request) (any, error) {
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	var b stateSignalBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if b.State == nil {
		return nil, badRequest("state is required")
	}
	to, err := s.target(r, b.signalOpts, agent.ID)
	if err != nil {
		return nil, err
	}
	res, err := s.rt.SendStateSignal(r.Context(), *b.State, to)
	if err != nil {
		return nil, signalError(err)
	}
	return res, nil
}

// signalError gives routing and validation failures their status: what
// the caller got wrong is a 400, a missing thread or run a 404.
func signalError(err error) error {
	switch {
	case errors.Is(err, agentcore.ErrNoActiveRun), errors.Is(err, agentcore.ErrNotFound):
		return &apiError{http.StatusNotFound, err.Error()}
	case errors.Is(err, agentcore.ErrDuplicateSignal):
		return &apiError{http.StatusConflict, err.Error()}
	case errors.Is(err, agentcore.ErrNoNotifications):
		return err
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return err
	}
	msg := err.Error()
	for _, prefix := range []string{"Invalid signal", "invalid ", "state signal", "state signals", "the message is empty", "notification ", "a defer decision", "Invalid "} {
		if strings.HasPrefix(msg, prefix) {
			return badRequest("%s", msg)
		}
	}
	return err
}

// notifyBody is a notification plus the thread it is for.
type notifyBody struct {
	agentcore.NotificationInput
	ResourceID string `json:"resourceId"`
	ThreadID   string `json:"threadId"`
	AgentID    string `json:"agentId"`
}

// apiNotify files a notification: 201 with what became of it.
func (s *Server) apiNotify(w http.ResponseWriter, r *http.Request) {
	res, err := s.notify(w, r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}

func (s *Server) notify(w http.ResponseWriter, r *http.Request) (agentcore.NotifyResult, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxNotificationBody)
	var b notifyBody
	if err := decodeBody(r, &b); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusRequestEntityTooLarge {
			return agentcore.NotifyResult{}, &apiError{http.StatusRequestEntityTooLarge,
				fmt.Sprintf("Notification too large: the payload may be at most %d bytes (256 KiB)", agentcore.MaxNotificationPayload)}
		}
		return agentcore.NotifyResult{}, err
	}
	if b.ThreadID == "" {
		return agentcore.NotifyResult{}, badRequest("threadId is required")
	}
	if err := b.Check(); err != nil {
		status := http.StatusBadRequest
		if len(b.Payload) > agentcore.MaxNotificationPayload {
			status = http.StatusRequestEntityTooLarge
		}
		return agentcore.NotifyResult{}, &apiError{status, err.Error()}
	}
	if b.AgentID != "" {
		if _, err := s.apiAgent(b.AgentID); err != nil {
			return agentcore.NotifyResult{}, err
		}
	}
	res, err := s.rt.Notify(r.Context(), b.NotificationInput, agentcore.NotifyTarget{ResourceID: b.ResourceID, ThreadID: b.ThreadID, AgentID: b.AgentID})
	if err != nil {
		return agentcore.NotifyResult{}, signalError(err)
	}
	return res, nil
}

// apiListNotifications lists inbox records: ?threadId, status, priority,
// source (each repeatable or comma-separated), q, limit.
func (s *Server) apiListNotifications(r *http.Request) (any, error) {
	q, err := notificationQuery(r)
	if err != nil {
		return nil, err
	}
	list, err := s.rt.Notifications(r.Context(), q)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []agentcore.Notification{}
	}
	return map[string]any{"notifications": list}, nil
}

func notificationQuery(r *http.Request) (agentcore.NotificationQuery, error) {
	v := r.URL.Query()
	q := agentcore.NotificationQuery{ThreadID: v.Get("threadId"), Text: v.Get("q")}
	for _, st := range splitParam(v["status"]) {
		switch agentcore.NotificationStatus(st) {
		case agentcore.NotePending, agentcore.NoteDelivered, agentcore.NoteSeen, agentcore.NoteDismissed,
			agentcore.NoteArchived, agentcore.NoteDiscarded, agentcore.NoteFailed:
			q.Statuses = append(q.Statuses, agentcore.NotificationStatus(st))
		default:
			return q, badRequest("invalid status %q", st)
		}
	}
	for _, p := range splitParam(v["priority"]) {
		pr, err := agentcore.ParsePriority(p)
		if err != nil {
			return q, badRequest("%v", err)
		}
		q.Priorities = append(q.Priorities, pr)
	}
	q.Sources = splitParam(v["source"])
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return q, badRequest("limit must be a non-negative number, not %q", l)
		}
		q.Limit = n
	}
	return q, nil
}

func splitParam(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}

// apiUpdateNotification marks a record seen, dismissed or archived, or
// snoozes it: {status} or {snoozeMinutes}.
func (s *Server) apiUpdateNotification(r *http.Request) (any, error) {
	var b struct {
		Status        string `json:"status"`
		SnoozeMinutes int    `json:"snoozeMinutes"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	threadID, id := r.PathValue("threadId"), r.PathValue("id")
	var n agentcore.Notification
	var err error
	switch {
	case b.SnoozeMinutes > 0:
		n, err = s.rt.SnoozeNotification(r.Context(), threadID, id, time.Now().Add(time.Duration(b.SnoozeMinutes)*time.Minute))
	case b.Status != "":
		n, err = s.rt.SetNotificationStatus(r.Context(), threadID, id, agentcore.NotificationStatus(b.Status))
		if err != nil && !errors.Is(err, agentcore.ErrNotFound) {
			return nil, badRequest("%v", err)
		}
	default:
		return nil, badRequest("give status (seen, dismissed, archived) or snoozeMinutes")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"notification": n}, nil
}

// apiSubscribe streams every run of a thread as Mastra chunks, one run
// after another, until the client leaves (subscribeToThread). Leaving
// stops nothing. Parley's own route, for an existing thread; Mastra's is
// POST threads/subscribe (api_idle.go).
func (s *Server) apiSubscribe(w http.ResponseWriter, r *http.Request) {
	if _, err := s.apiAgentIn(r.Context(), r.PathValue("agentId")); err != nil {
		s.apiFail(w, r, err)
		return
	}
	threadID := r.PathValue("threadId")
	if _, err := s.rt.GetThread(r.Context(), threadID); err != nil {
		s.apiFail(w, r, err)
		return
	}
	s.followThread(w, r, threadID)
}
