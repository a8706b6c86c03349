package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"parley/agentcore"
)

// Following a thread over the API, as npm @mastra/server
// dist/server/handlers/agents.js does: POST threads/subscribe (every run of
// a thread, for as long as the client stays), stream-until-idle and
// resume-stream-until-idle (a run, then the runs that what waited for it
// starts: a queued message, a signal or a notification delivered too late
// for its model, until the thread is idle), observe (a run in progress),
// and suspended-runs (the runs waiting for an answer or an approval).

func (s *Server) idleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/agents/{agentId}/threads/subscribe", s.apiSubscribeThread)
	mux.HandleFunc("POST /api/agents/{agentId}/stream-until-idle", s.apiStreamUntilIdle)
	mux.HandleFunc("POST /api/agents/{agentId}/resume-stream-until-idle", s.apiResumeStreamUntilIdle)
	mux.HandleFunc("POST /api/agents/{agentId}/observe", s.apiObserve)
	mux.HandleFunc("GET /api/agents/{agentId}/suspended-runs", s.api(s.apiSuspendedRuns))
}

// heartbeat is how often a quiet thread subscription says it is still
// there (Mastra's 25 s).
const heartbeat = 25 * time.Second

// readBody reads the request body (bounded) and puts it back, so that it
// can be checked here and decoded again by the handler it is passed on to.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAPIBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body too large (limit %d bytes)", tooBig.Limit)}
	}
	if err != nil {
		return nil, badRequest("Invalid request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return raw, nil
}

// decodeAgain decodes the body readBody kept into v, and puts it back.
func decodeAgain(r *http.Request, raw []byte, v any) error {
	r.Body = io.NopCloser(bytes.NewReader(raw))
	err := decodeBody(r, v)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return err
}

// subscribeBody is Mastra's subscribeAgentThreadBodySchema.
type subscribeBody struct {
	ResourceID string  `json:"resourceId"`
	ThreadID   *string `json:"threadId"`
}

// apiSubscribeThread answers POST /api/agents/:id/threads/subscribe: the
// chunks of every run of the thread, run after run, until the client
// leaves. As in Mastra, a thread that does not exist yet may be followed
// (the first stream on it creates it); one of another resource is a 403.
func (s *Server) apiSubscribeThread(w http.ResponseWriter, r *http.Request) {
	threadID, err := s.subscribeTarget(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	s.followThread(w, r, threadID)
}

func (s *Server) subscribeTarget(r *http.Request) (string, error) {
	var b subscribeBody
	if err := decodeBody(r, &b); err != nil {
		return "", err
	}
	if b.ThreadID == nil {
		return "", &issuesError{"Invalid request body", []apiIssue{zodRequired("threadId")}}
	}
	if _, err := s.apiAgentIn(r.Context(), r.PathValue("agentId")); err != nil {
		return "", err
	}
	if *b.ThreadID == "" {
		return "", badRequest("threadId is required")
	}
	if err := checkThreadID(*b.ThreadID); err != nil {
		return "", err
	}
	t, err := s.rt.GetThread(r.Context(), *b.ThreadID)
	switch {
	case errors.Is(err, agentcore.ErrNotFound):
	case err != nil:
		return "", err
	case b.ResourceID != "" && t.ResourceID != "" && t.ResourceID != b.ResourceID:
		return "", errOtherResource
	}
	return *b.ThreadID, nil
}

// sseHeaders starts an SSE answer and flushes it, so the client knows it
// is connected before the first chunk (Mastra's sseFlushOnConnect).
func sseHeaders(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return rc
}

// followThread streams every run of threadID as Mastra chunks until the
// client or the server goes.
func (s *Server) followThread(rw http.ResponseWriter, r *http.Request, threadID string) {
	w := s.streamWriter(rw)
	sub := s.rt.Subscribe(threadID)
	defer sub.Close()
	rc := sseHeaders(w)
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	f := s.newFollower(threadID)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
			_ = rc.Flush()
			continue
		case <-sub.Ready():
		}
		for _, e := range sub.Drain() {
			if _, err := f.write(w, e); err != nil {
				return
			}
		}
		tick.Reset(heartbeat)
		_ = rc.Flush()
	}
}

// follower turns a thread's events into chunks, keeping each run's state
// (its open text part, its calls' arguments, its agent's tools).
type follower struct {
	s        *Server
	threadID string
	runs     map[string]*apiRun
}

func (s *Server) newFollower(threadID string) *follower {
	return &follower{s: s, threadID: threadID, runs: map[string]*apiRun{}}
}

// write writes e's chunks; terminal reports whether e ended its run.
func (f *follower) write(w io.Writer, e agentcore.Event) (terminal bool, err error) {
	if e.RunID == "" {
		return false, nil // thread-level: a message stored, a title
	}
	run := f.runs[e.RunID]
	if run == nil {
		run = &apiRun{id: e.RunID, messageID: e.MessageID}
		if stored, err := f.s.rt.GetRun(f.s.ctx, e.RunID); err == nil {
			if a, err := f.s.rt.Agent(stored.AgentID); err == nil {
				run.agentID, run.tools = a.ID, a.ToolSet()
			}
		}
		f.runs[e.RunID] = run
	}
	if run.messageID == "" {
		run.messageID = e.MessageID
	}
	for _, c := range run.chunks(e) {
		data, err := json.Marshal(c)
		if err != nil {
			f.s.log.Error("encode stream chunk", "type", c.Type, "err", err)
			continue
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false, err
		}
	}
	if e.Terminal() {
		delete(f.runs, e.RunID)
		return true, nil
	}
	return false, nil
}

// idleAfter reports whether the thread is idle once a run of it has ended:
// the run's successor, if what waited for it starts one, is started under
// the thread's lane before the lane is let go, and Queued waits for it.
func (s *Server) idleAfter(threadID, ended string) bool {
	_ = s.rt.Queued(threadID) // waits until the ended run has handed the thread on
	l, ok := s.rt.Live(threadID)
	return !ok || l.Run.ID == ended
}

// untilIdleBody is what stream-until-idle and resume-stream-until-idle add
// to stream's and resume-stream's bodies (streamUntilIdleBodySchema).
type untilIdleBody struct {
	MaxIdleMS json.RawMessage `json:"maxIdleMs"`
	UntilIdle json.RawMessage `json:"untilIdle"`
}

// check refuses what Mastra's schema refuses. Parley runs no background
// tasks, so there is nothing to wait for between runs: the value is
// checked and not used.
func (b untilIdleBody) check() error {
	positive := func(field string, raw json.RawMessage) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		var n float64
		if json.Unmarshal(raw, &n) != nil || n <= 0 || n != float64(int64(n)) {
			return &issuesError{"Invalid request body", []apiIssue{{Field: field, Message: "Invalid input: expected a positive integer"}}}
		}
		return nil
	}
	if err := positive("maxIdleMs", b.MaxIdleMS); err != nil {
		return err
	}
	if len(b.UntilIdle) > 0 && string(b.UntilIdle) != "null" {
		var flag bool
		var o struct {
			MaxIdleMS json.RawMessage `json:"maxIdleMs"`
		}
		switch {
		case json.Unmarshal(b.UntilIdle, &flag) == nil:
		case bytes.HasPrefix(bytes.TrimSpace(b.UntilIdle), []byte("{")) && json.Unmarshal(b.UntilIdle, &o) == nil:
			return positive("untilIdle.maxIdleMs", o.MaxIdleMS)
		default:
			return &issuesError{"Invalid request body", []apiIssue{{Field: "untilIdle", Message: "Invalid input: expected a boolean or {maxIdleMs}"}}}
		}
	}
	return nil
}

// apiStreamUntilIdle answers POST /api/agents/:id/stream-until-idle: the
// run stream's chunks, then those of each run that starts on the thread
// as this one ends, until the thread is idle; then [DONE]. Without a
// thread it is stream (Mastra's idle loop needs memory).
func (s *Server) apiStreamUntilIdle(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	var b runBody
	var idle untilIdleBody
	if err := decodeAgain(r, raw, &b); err == nil {
		if err := decodeAgain(r, raw, &idle); err == nil {
			if err := idle.check(); err != nil {
				s.apiFail(w, r, err)
				return
			}
		}
	}
	threadID, _ := b.thread() // a bad body is startRun's to refuse
	if threadID == "" {
		s.apiStream(w, r)
		return
	}
	// Subscribed before the run starts: nothing of it, or of what follows
	// it, is missed.
	sub := s.rt.Subscribe(threadID)
	defer sub.Close()
	run, err := s.startRun(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	run.close() // its own subscription; the run belongs to the thread
	s.untilIdle(w, r, sub, threadID, run)
}

// resumeUntilIdleBody is what resume-stream-until-idle's schema requires.
type resumeUntilIdleBody struct {
	RunID      *string         `json:"runId"`
	ResumeData json.RawMessage `json:"resumeData"`
	ThreadID   string          `json:"threadId"`
	Memory     *struct {
		Thread threadRef `json:"thread"`
	} `json:"memory"`
}

// apiResumeStreamUntilIdle answers POST
// /api/agents/:id/resume-stream-until-idle: resume-stream, then the runs
// that follow it, as stream-until-idle.
func (s *Server) apiResumeStreamUntilIdle(w http.ResponseWriter, r *http.Request) {
	sub, threadID, run, err := s.startResumeUntilIdle(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	defer sub.Close()
	run.close()
	s.untilIdle(w, r, sub, threadID, run)
}

func (s *Server) startResumeUntilIdle(r *http.Request) (*agentcore.Subscription, string, *apiRun, error) {
	raw, err := readBody(r)
	if err != nil {
		return nil, "", nil, err
	}
	var b resumeUntilIdleBody
	var idle untilIdleBody
	if err := decodeAgain(r, raw, &b); err != nil {
		return nil, "", nil, err
	}
	if err := decodeAgain(r, raw, &idle); err != nil {
		return nil, "", nil, err
	}
	var issues []apiIssue
	if b.RunID == nil {
		issues = append(issues, zodRequired("runId"))
	}
	if len(b.ResumeData) == 0 {
		issues = append(issues, apiIssue{Field: "resumeData", Message: "resumeData is required"})
	}
	if issues != nil {
		return nil, "", nil, &issuesError{"Invalid request body", issues}
	}
	if err := idle.check(); err != nil {
		return nil, "", nil, err
	}
	if *b.RunID == "" {
		return nil, "", nil, badRequest("Run id is required")
	}
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, "", nil, err
	}
	threadID := b.ThreadID
	if b.Memory != nil && b.Memory.Thread != "" {
		threadID = string(b.Memory.Thread)
	}
	if threadID == "" {
		run, err := s.rt.GetRun(r.Context(), *b.RunID)
		if err != nil || run.ThreadID == "" || (run.AgentID != "" && run.AgentID != agent.ID) {
			return nil, "", nil, &apiError{http.StatusNotFound, fmt.Sprintf("run %s not found", *b.RunID)}
		}
		threadID = run.ThreadID
	}
	if err := checkThreadID(threadID); err != nil {
		return nil, "", nil, err
	}
	sub := s.rt.Subscribe(threadID)
	run, err := s.startResume(r)
	if err != nil {
		sub.Close()
		return nil, "", nil, err
	}
	return sub, threadID, run, nil
}

// untilIdle streams the thread's runs from first on, until one ends and
// none follows it.
func (s *Server) untilIdle(rw http.ResponseWriter, r *http.Request, sub *agentcore.Subscription, threadID string, first *apiRun) {
	w := s.streamWriter(rw)
	rc := sseHeaders(w)
	f := s.newFollower(threadID)
	f.runs[first.id] = &apiRun{id: first.id, messageID: first.messageID, agentID: first.agentID, tools: first.tools}
	started := false // events of the thread before the first run's are not its
	for {
		select {
		case <-r.Context().Done():
			return // the client is gone; the runs go on
		case <-s.ctx.Done():
			return
		case <-sub.Ready():
		}
		for _, e := range sub.Drain() {
			if !started && e.RunID != first.id {
				continue
			}
			started = true
			ended, err := f.write(w, e)
			if err != nil {
				return
			}
			if ended && s.idleAfter(threadID, e.RunID) {
				fmt.Fprint(w, "data: [DONE]\n\n")
				_ = rc.Flush()
				return
			}
		}
		_ = rc.Flush()
	}
}

// observeBody is Mastra's observeAgentBodySchema.
type observeBody struct {
	RunID  *string         `json:"runId"`
	Offset json.RawMessage `json:"offset"`
}

// apiObserve answers POST /api/agents/:id/observe: the chunks of a run in
// progress, from now to its end. Parley keeps no run's past chunks: a run
// that is over (done, stopped, failed or waiting for the user) ends the
// stream at once, and offset is checked, not used. An unknown run is a
// 404 (Mastra would wait five minutes for it).
func (s *Server) apiObserve(rw http.ResponseWriter, r *http.Request) {
	run, err := s.observeTarget(r)
	if err != nil {
		s.apiFail(rw, r, err)
		return
	}
	w := s.streamWriter(rw)
	if run.ThreadID == "" {
		rc := sseHeaders(w)
		fmt.Fprint(w, "data: [DONE]\n\n")
		_ = rc.Flush()
		return
	}
	sub := s.rt.Subscribe(run.ThreadID)
	defer sub.Close()
	rc := sseHeaders(w)
	done := func() {
		fmt.Fprint(w, "data: [DONE]\n\n")
		_ = rc.Flush()
	}
	if l, ok := s.rt.Live(run.ThreadID); !ok || l.Run.ID != run.ID {
		done()
		return
	}
	f := s.newFollower(run.ThreadID)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-sub.Ready():
		}
		for _, e := range sub.Drain() {
			if e.RunID != run.ID {
				continue
			}
			ended, err := f.write(w, e)
			if err != nil {
				return
			}
			if ended {
				done()
				return
			}
		}
		_ = rc.Flush()
		// A run lets go of its thread just before it publishes its end,
		// under the thread's lane: once the lane is free, what is left of
		// it is queued here.
		if l, ok := s.rt.Live(run.ThreadID); !ok || l.Run.ID != run.ID {
			_ = s.rt.Queued(run.ThreadID)
			for _, e := range sub.Drain() {
				if e.RunID != run.ID {
					continue
				}
				if ended, err := f.write(w, e); err != nil || ended {
					break
				}
			}
			done()
			return
		}
	}
}

func (s *Server) observeTarget(r *http.Request) (agentcore.Run, error) {
	var b observeBody
	if err := decodeBody(r, &b); err != nil {
		return agentcore.Run{}, err
	}
	if b.RunID == nil {
		return agentcore.Run{}, &issuesError{"Invalid request body", []apiIssue{zodRequired("runId")}}
	}
	if len(b.Offset) > 0 && string(b.Offset) != "null" {
		var n float64
		if json.Unmarshal(b.Offset, &n) != nil {
			return agentcore.Run{}, &issuesError{"Invalid request body", []apiIssue{{Field: "offset", Message: "Invalid input: expected number, received " + jsonKind(b.Offset)}}}
		}
	}
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return agentcore.Run{}, err
	}
	run, err := s.rt.GetRun(r.Context(), *b.RunID)
	if err != nil || !s.runOf(agent, run) {
		return agentcore.Run{}, &apiError{http.StatusNotFound, fmt.Sprintf("Run %s of agent %s not found", clipText(*b.RunID, 80), agent.ID)}
	}
	return run, nil
}

// runOf reports whether run is agent's (a run without an agent is the
// default agent's).
func (s *Server) runOf(agent *agentcore.Agent, run agentcore.Run) bool {
	a, err := s.rt.Agent(run.AgentID)
	return err == nil && a.ID == agent.ID
}

// jsonKind names the JSON type of raw as zod's messages do.
func jsonKind(raw json.RawMessage) string {
	switch b := bytes.TrimSpace(raw); {
	case len(b) == 0:
		return "undefined"
	case b[0] == '"':
		return "string"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	case b[0] == 'n':
		return "null"
	}
	return "number"
}
