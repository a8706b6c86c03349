package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"parley/agentcore"
)

// Mastra's observability API over what Parley records: each agent run is a
// trace (its root span the run: agent, model, status, error, usage, start
// and end), with a model_generation span (model, provider, usage) and a
// tool_call span per tool call of the run (arguments, result, error). Parley
// records times per run, not per call, so a call's span carries its
// message's time and no end of its own. Logs are the runs too, one record
// each. Metrics, scores, feedback, datasets and experiments Parley does not
// keep: lists are empty, ids unknown, and what would store one says so.
// Everything here is read-only and bounded.

const (
	// maxTraceRuns bounds the runs a trace list, query or log list looks
	// through: the newest ones; older runs stay in the chats.
	maxTraceRuns = 5000
	// traceMaxPerPage is the schema's limit on a page of traces or logs.
	traceMaxPerPage = 100
	// traceDefaultPerPage: Mastra's default page size for observability lists.
	traceDefaultPerPage = 10
	// maxTraceSpans bounds one trace's spans (a run with very many calls).
	maxTraceSpans = 1000
	// spanPreviewBytes bounds an input preview; spanTextBytes a span's
	// input or output text.
	spanPreviewBytes = 200
	spanTextBytes    = 8 << 10
	// traceMsgPage messages are read at a time for a trace, at most
	// traceMsgPages times.
	traceMsgPage  = 200
	traceMsgPages = 50
)

var allRunStatuses = []agentcore.RunStatus{agentcore.RunRunning, agentcore.RunDone, agentcore.RunStopped, agentcore.RunFailed, agentcore.RunSuspended}

func (s *Server) observeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/observability/traces/light", s.api(s.apiTraceList(false)))
	mux.HandleFunc("GET /api/observability/traces", s.api(s.apiTraceList(true)))
	mux.HandleFunc("GET /api/observability/traces/{traceId}/light", s.api(s.apiTrace(false)))
	mux.HandleFunc("GET /api/observability/traces/{traceId}", s.api(s.apiTrace(true)))
	mux.HandleFunc("GET /api/observability/traces/{traceId}/spans/{spanId}", s.api(s.apiSpan))
	mux.HandleFunc("POST /api/observability/traces/query", s.api(s.apiTraceQuery))
	mux.HandleFunc("GET /api/observability/logs", s.api(s.apiLogs))

	for _, p := range []string{"aggregate", "breakdown", "timeseries", "percentiles"} {
		mux.HandleFunc("POST /api/observability/metrics/"+p, s.api(metricAnswer(p)))
	}
	mux.HandleFunc("GET /api/observability/discovery/metric-names", s.api(func(*http.Request) (any, error) {
		return map[string]any{"names": []string{}}, nil
	}))
	mux.HandleFunc("GET /api/observability/discovery/metric-label-keys", s.api(func(r *http.Request) (any, error) {
		if err := required(r, "metricName"); err != nil {
			return nil, err
		}
		return map[string]any{"keys": []string{}}, nil
	}))
	mux.HandleFunc("GET /api/observability/discovery/metric-label-values", s.api(func(r *http.Request) (any, error) {
		if err := required(r, "metricName", "labelKey"); err != nil {
			return nil, err
		}
		return map[string]any{"values": []string{}}, nil
	}))

	mux.HandleFunc("GET /api/observability/scores", s.api(func(r *http.Request) (any, error) {
		p, err := emptyPage(r)
		return map[string]any{"pagination": p, "scores": []any{}}, err
	}))
	mux.HandleFunc("GET /api/observability/scores/{scoreId}", s.api(func(*http.Request) (any, error) {
		return map[string]any{"score": nil}, nil // Mastra's answer for an id it does not have
	}))
	mux.HandleFunc("POST /api/observability/scores", s.api(func(r *http.Request) (any, error) {
		var b struct {
			Score *struct {
				ScorerID *string  `json:"scorerId"`
				Score    *float64 `json:"score"`
			} `json:"score"`
		}
		if err := decodeBody(r, &b); err != nil {
			return nil, err
		}
		switch {
		case b.Score == nil:
			return nil, badRequest(`Argument "score" is required`)
		case b.Score.ScorerID == nil:
			return nil, badRequest(`Argument "score.scorerId" is required`)
		case b.Score.Score == nil:
			return nil, badRequest(`Argument "score.score" is required`)
		}
		return nil, &apiError{http.StatusNotImplemented, "Parley keeps no scores: a score cannot be stored"}
	}))
	mux.HandleFunc("DELETE /api/observability/scores", s.api(deleteNothing("scoreIds")))
	mux.HandleFunc("DELETE /api/observability/feedback", s.api(deleteNothing("feedbackIds")))

	mux.HandleFunc("GET /api/datasets", s.api(func(r *http.Request) (any, error) {
		p, err := emptyPage(r)
		return map[string]any{"datasets": []any{}, "pagination": p}, err
	}))
	mux.HandleFunc("POST /api/datasets", s.api(func(r *http.Request) (any, error) {
		var b struct {
			Name *string `json:"name"`
		}
		if err := decodeBody(r, &b); err != nil {
			return nil, err
		}
		if b.Name == nil || *b.Name == "" {
			return nil, badRequest(`Argument "name" is required`)
		}
		return nil, &apiError{http.StatusNotImplemented, "Parley keeps no datasets: a dataset cannot be created"}
	}))
	noDataset := s.api(func(r *http.Request) (any, error) {
		return nil, &apiError{http.StatusNotFound, "Dataset not found: " + clipText(r.PathValue("datasetId"), 128)}
	})
	for _, p := range []string{
		"GET /api/datasets/{datasetId}",
		"GET /api/datasets/{datasetId}/items",
		"GET /api/datasets/{datasetId}/experiments",
		"POST /api/datasets/{datasetId}/experiments",
		"GET /api/datasets/{datasetId}/experiments/{experimentId}",
		"GET /api/datasets/{datasetId}/experiments/{experimentId}/results",
	} {
		mux.HandleFunc(p, noDataset)
	}
}

// metricAnswer is the empty answer of a metrics query: no metric is
// recorded, so the value is null and there are no groups or series. The
// body is still checked for the metric's name, as Mastra's schema does.
func metricAnswer(kind string) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var b struct {
			Name json.RawMessage `json:"name"`
		}
		if err := decodeBody(r, &b); err != nil {
			return nil, err
		}
		var one string
		var many []string
		if json.Unmarshal(b.Name, &one) != nil || one == "" {
			if json.Unmarshal(b.Name, &many) != nil || len(many) == 0 || slices.Contains(many, "") {
				return nil, badRequest(`Invalid request body: "name" must be a metric name or a non-empty list of them`)
			}
		}
		switch kind {
		case "aggregate":
			return map[string]any{"value": nil}, nil
		case "breakdown":
			return map[string]any{"groups": []any{}}, nil
		}
		return map[string]any{"series": []any{}}, nil
	}
}

// deleteNothing answers a delete by ids of what Parley does not keep: the
// ids are checked and none is there, so the delete succeeds.
func deleteNothing(field string) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var b map[string]json.RawMessage
		if err := decodeBody(r, &b); err != nil {
			return nil, err
		}
		var ids []string
		if raw, ok := b[field]; !ok || json.Unmarshal(raw, &ids) != nil || ids == nil {
			return nil, badRequest(`Argument %q is required: a list of ids`, field)
		}
		if len(ids) > 1000 {
			return nil, badRequest("%s: at most 1000 ids, not %d", field, len(ids))
		}
		return map[string]any{"success": true}, nil
	}
}

// obsPage reads ?page and ?perPage (1 to traceMaxPerPage).
func obsPage(r *http.Request, defaultPerPage int) (page, perPage int, err error) {
	q := r.URL.Query()
	page, perPage = 0, defaultPerPage
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 0 || page > maxTraceRuns {
			return 0, 0, badRequest("Invalid query parameters: page must be a whole number from 0 to %d, not %q", maxTraceRuns, clipText(v, 40))
		}
	}
	if v := q.Get("perPage"); v != "" {
		if perPage, err = strconv.Atoi(v); err != nil || perPage < 1 || perPage > traceMaxPerPage {
			return 0, 0, badRequest("Invalid query parameters: perPage must be a whole number from 1 to %d, not %q", traceMaxPerPage, clipText(v, 40))
		}
	}
	return page, perPage, nil
}

func emptyPage(r *http.Request) (page, error) {
	n, per, err := obsPage(r, traceDefaultPerPage)
	return page{Page: n, PerPage: per}, err
}

// span is one of Mastra's spans. The light form has the first group of
// fields only; the full one all.
type span struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	Name         string     `json:"name"`
	SpanType     string     `json:"spanType"`
	IsEvent      bool       `json:"isEvent"`
	StartedAt    time.Time  `json:"startedAt"`
	ParentSpanID *string    `json:"parentSpanId"`
	EndedAt      *time.Time `json:"endedAt"`
	Error        any        `json:"error"`
	Status       string     `json:"status,omitempty"` // not in a single span's answer
	EntityType   *string    `json:"entityType"`
	EntityID     *string    `json:"entityId"`
	EntityName   *string    `json:"entityName"`
	Metadata     any        `json:"metadata"`
	InputPreview *string    `json:"inputPreview,omitempty"` // light spans only
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    *time.Time `json:"updatedAt"`
	*spanDetail
}

// spanDetail is what the full span adds.
type spanDetail struct {
	ThreadID   *string        `json:"threadId"`
	ResourceID *string        `json:"resourceId"`
	RunID      *string        `json:"runId"`
	Attributes map[string]any `json:"attributes"`
	Input      any            `json:"input"`
	Output     any            `json:"output"`
	Tags       []string       `json:"tags"`
}

func ptr[T any](v T) *T { return &v }

// runSpan is a run's root span; full adds its detail (thread, usage).
func (s *Server) runSpan(run agentcore.Run) span {
	sp := span{
		TraceID: run.ID, SpanID: run.ID, Name: fmt.Sprintf("agent run: '%s'", run.AgentID), SpanType: "agent_run",
		StartedAt: run.StartedAt, CreatedAt: run.StartedAt, UpdatedAt: ptr(run.StartedAt),
		EntityType: ptr("agent"), EntityID: ptr(run.AgentID), EntityName: ptr(run.AgentID),
		Status: runSpanStatus(run.Status),
		Metadata: map[string]any{"threadId": run.ThreadID, "model": run.Model, "status": string(run.Status),
			"usage": run.Usage},
	}
	if a, err := s.rt.Agent(run.AgentID); err == nil && a.Name != "" {
		sp.EntityName = ptr(a.Name)
	}
	if !run.FinishedAt.IsZero() {
		sp.EndedAt, sp.UpdatedAt = ptr(run.FinishedAt), ptr(run.FinishedAt)
		sp.Metadata.(map[string]any)["durationMs"] = run.FinishedAt.Sub(run.StartedAt).Milliseconds()
	}
	if run.Error != "" {
		sp.Error = map[string]any{"message": run.Error}
	}
	return sp
}

// runSpanStatus is Mastra's span status of a run: a run waiting for the
// user (suspended) is still going.
func runSpanStatus(st agentcore.RunStatus) string {
	switch st {
	case agentcore.RunFailed:
		return "error"
	case agentcore.RunRunning, agentcore.RunSuspended:
		return "running"
	}
	return "success" // done, or stopped by the user
}

// recentRuns is the newest runs, at most maxTraceRuns, newest first.
func (s *Server) recentRuns(r *http.Request) ([]agentcore.Run, error) {
	runs, err := s.rt.ListRuns(r.Context(), agentcore.RunQuery{Statuses: allRunStatuses, Limit: maxTraceRuns})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// runFilter keeps the runs that ?threadId, ?entityId (or ?rootEntityId)
// and ?status ask for; other filters of Mastra's are not applied.
func runFilter(r *http.Request) (func(agentcore.Run) bool, error) {
	q := r.URL.Query()
	thread, agent, status := q.Get("threadId"), q.Get("entityId"), q.Get("status")
	if agent == "" {
		agent = q.Get("rootEntityId")
	}
	if status != "" && status != "success" && status != "error" && status != "running" {
		return nil, badRequest(`Invalid query parameters: status must be "success", "error" or "running", not %q`, clipText(status, 40))
	}
	return func(run agentcore.Run) bool {
		return (thread == "" || run.ThreadID == thread) && (agent == "" || run.AgentID == agent) &&
			(status == "" || runSpanStatus(run.Status) == status)
	}, nil
}

// apiTraceList answers GET /api/observability/traces[/light]: a page of
// runs' root spans, newest first.
func (s *Server) apiTraceList(full bool) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		pageNo, perPage, err := obsPage(r, traceDefaultPerPage)
		if err != nil {
			return nil, err
		}
		keep, err := runFilter(r)
		if err != nil {
			return nil, err
		}
		runs, err := s.recentRuns(r)
		if err != nil {
			return nil, err
		}
		runs = slices.DeleteFunc(runs, func(run agentcore.Run) bool { return !keep(run) })
		lo := min(pageNo*perPage, len(runs))
		hi := min(lo+perPage, len(runs))
		spans := make([]span, 0, hi-lo)
		for _, run := range runs[lo:hi] {
			sp := s.runSpan(run)
			if full {
				sp.spanDetail = &spanDetail{ThreadID: ptr(run.ThreadID), RunID: ptr(run.ID), Attributes: runAttributes(run), Tags: []string{}}
			}
			spans = append(spans, sp)
		}
		return map[string]any{"spans": spans, "pagination": page{Total: len(runs), Page: pageNo, PerPage: perPage, HasMore: hi < len(runs)}}, nil
	}
}

func runAttributes(run agentcore.Run) map[string]any {
	provider, model := splitModel(run.Model)
	return map[string]any{"model": model, "provider": provider, "usage": run.Usage}
}

// traceRun finds the run a trace id names, with Mastra's 404.
func (s *Server) traceRun(r *http.Request) (agentcore.Run, error) {
	id := r.PathValue("traceId")
	if !agentcore.ValidID(id) {
		return agentcore.Run{}, badRequest("traceId %q: use 1 to 128 letters, digits, '-' or '_'", clipText(id, 140))
	}
	run, err := s.rt.GetRun(r.Context(), id)
	if errors.Is(err, agentcore.ErrNotFound) {
		return run, &apiError{http.StatusNotFound, fmt.Sprintf("Trace with ID %s not found", id)}
	}
	if err != nil {
		return run, fmt.Errorf("trace %s: %w", id, err)
	}
	return run, nil
}

// traceSpans is a run's spans, full: the run, its model generation and
// its tool calls, at most maxTraceSpans.
func (s *Server) traceSpans(r *http.Request, run agentcore.Run) ([]span, error) {
	root := s.runSpan(run)
	msgs, err := s.runMessages(r, run)
	if err != nil {
		return nil, err
	}
	var resource *string
	if t, err := s.rt.GetThread(r.Context(), run.ThreadID); err == nil {
		resource = ptr(t.ResourceID)
	}
	detail := func(attrs map[string]any, in, out any) *spanDetail {
		return &spanDetail{ThreadID: ptr(run.ThreadID), ResourceID: resource, RunID: ptr(run.ID), Attributes: attrs, Input: in, Output: out, Tags: []string{}}
	}
	var input, output string
	var calls []span
	gen := span{
		TraceID: run.ID, SpanID: run.ID + "-model", Name: fmt.Sprintf("llm: '%s'", run.Model), SpanType: "model_generation",
		StartedAt: run.StartedAt, ParentSpanID: ptr(root.SpanID), EndedAt: root.EndedAt, Error: root.Error, Status: root.Status,
		CreatedAt: run.StartedAt, UpdatedAt: root.UpdatedAt, Metadata: map[string]any{"usage": run.Usage},
	}
	for i, m := range msgs {
		if m.RunID != run.ID || m.Role != agentcore.RoleAssistant {
			continue
		}
		if input == "" { // the user's message the run answers
			for j := i - 1; j >= 0; j-- {
				if msgs[j].Role == agentcore.RoleUser {
					input = msgs[j].Content.Text()
					break
				}
			}
		}
		output += m.Content.Text()
		for _, p := range m.Content.Parts {
			if p.ToolInvocation == nil || len(calls) >= maxTraceSpans-2 {
				continue
			}
			calls = append(calls, toolSpan(run, gen.SpanID, m, p.ToolInvocation, detail))
		}
	}
	if input != "" {
		root.InputPreview = ptr(clipText(input, spanPreviewBytes))
	}
	root.spanDetail = detail(runAttributes(run), clipText(input, spanTextBytes), clipText(output, spanTextBytes))
	gen.spanDetail = detail(runAttributes(run), nil, clipText(output, spanTextBytes))
	return append([]span{root, gen}, calls...), nil
}

// runMessages reads the run's thread backwards a page at a time until it
// reaches messages older than the run (the user's message it answers), at
// most traceMsgPages pages: a trace of an old run in a very long chat lacks
// its calls rather than reading the whole chat.
func (s *Server) runMessages(r *http.Request, run agentcore.Run) ([]agentcore.Message, error) {
	var msgs []agentcore.Message
	var before int64
	for range traceMsgPages {
		page, err := s.rt.ListMessages(r.Context(), run.ThreadID, agentcore.MessageQuery{Limit: traceMsgPage, Last: true, BeforeSeq: before})
		if err != nil && !errors.Is(err, agentcore.ErrNotFound) {
			return nil, fmt.Errorf("trace %s: messages: %w", run.ID, err)
		}
		msgs = append(page, msgs...)
		if len(page) < traceMsgPage || page[0].CreatedAt.Before(run.StartedAt) {
			break
		}
		before = page[0].Seq
	}
	return msgs, nil
}

// toolSpan is one tool call's span: its message's time, its arguments and
// result, an error when the tool failed or was cancelled.
func toolSpan(run agentcore.Run, parent string, m agentcore.Message, ti *agentcore.ToolInvocation, detail func(map[string]any, any, any) *spanDetail) span {
	sp := span{
		TraceID: run.ID, SpanID: "tool-" + ti.ToolCallID, Name: fmt.Sprintf("tool: '%s'", ti.ToolName), SpanType: "tool_call",
		StartedAt: m.CreatedAt, ParentSpanID: ptr(parent), CreatedAt: m.CreatedAt, UpdatedAt: ptr(m.CreatedAt),
		EntityType: ptr("tool"), EntityID: ptr(ti.ToolName), EntityName: ptr(ti.ToolName),
		Metadata: map[string]any{"toolCallId": ti.ToolCallID, "state": ti.State, "step": ti.Step},
	}
	if ti.ProviderExecuted {
		sp.SpanType = "provider_tool_call"
	}
	switch {
	case ti.Cancelled:
		sp.Status, sp.Error = "error", map[string]any{"message": "cancelled"}
	case ti.IsError:
		sp.Status, sp.Error = "error", map[string]any{"message": clipText(string(ti.Result), spanTextBytes)}
	case ti.State == "result":
		sp.Status = "success"
	case run.Status == agentcore.RunRunning || run.Status == agentcore.RunSuspended:
		sp.Status = "running"
	default:
		sp.Status, sp.Error = "error", map[string]any{"message": "the run ended before the call did"}
	}
	var args, result any
	if len(ti.Args) > 0 && len(ti.Args) <= spanTextBytes {
		_ = json.Unmarshal(ti.Args, &args)
	}
	if len(ti.Result) > 0 && len(ti.Result) <= spanTextBytes {
		_ = json.Unmarshal(ti.Result, &result)
	} else if len(ti.Result) > 0 {
		result = clipText(string(ti.Result), spanTextBytes)
	}
	if args != nil {
		sp.InputPreview = ptr(clipText(string(ti.Args), spanPreviewBytes))
	}
	sp.spanDetail = detail(nil, args, result)
	return sp
}

// light drops a span's detail.
func light(spans []span) []span {
	out := make([]span, len(spans))
	for i, sp := range spans {
		sp.spanDetail = nil
		out[i] = sp
	}
	return out
}

// apiTrace answers GET /api/observability/traces/:traceId[/light].
func (s *Server) apiTrace(full bool) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		run, err := s.traceRun(r)
		if err != nil {
			return nil, err
		}
		spans, err := s.traceSpans(r, run)
		if err != nil {
			return nil, err
		}
		if full {
			for i := range spans {
				spans[i].InputPreview = nil
			}
		} else {
			spans = light(spans)
		}
		return map[string]any{"traceId": run.ID, "spans": spans}, nil
	}
}

// apiSpan answers GET /api/observability/traces/:traceId/spans/:spanId.
func (s *Server) apiSpan(r *http.Request) (any, error) {
	run, err := s.traceRun(r)
	if err != nil {
		return nil, err
	}
	spans, err := s.traceSpans(r, run)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("spanId")
	for _, sp := range spans {
		if sp.SpanID == id {
			sp.Status, sp.InputPreview = "", nil // not in Mastra's single span
			return map[string]any{"span": sp}, nil
		}
	}
	return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Span with ID %s not found in trace %s", clipText(id, 128), run.ID)}
}

// queriedTrace is a trace as POST /observability/traces/query lists one.
type queriedTrace struct {
	TraceID      string    `json:"traceId"`
	RootSpanID   string    `json:"rootSpanId"`
	Name         string    `json:"name"`
	EntityID     *string   `json:"entityId"`
	ParentSpanID *string   `json:"parentSpanId"`
	CreatedAt    string    `json:"createdAt"`
	Metadata     any       `json:"metadata"`
	InputPreview *string   `json:"inputPreview"`
	ThreadID     *string   `json:"threadId"`
	ResourceID   *string   `json:"resourceId"`
	StartedAt    string    `json:"startedAt"`
	EndedAt      string    `json:"endedAt"`
	EntityName   *string   `json:"entityName"`
	EntityType   *string   `json:"entityType"`
	Environment  *string   `json:"environment"`
	Status       string    `json:"status"`
	ended        time.Time // for ordering
}

// mastraTime is a time as the trace query's schema wants it (its pattern
// needs a fractional second or none, and Z).
func mastraTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// apiTraceQuery answers POST /api/observability/traces/query {timeRange:
// {from, to}, orderBy?, page?: {limit, after}}: the finished runs that
// started in the range. Parley does not evaluate `where` or `group`.
func (s *Server) apiTraceQuery(r *http.Request) (any, error) {
	var b struct {
		TimeRange *struct {
			From *string `json:"from"`
			To   *string `json:"to"`
		} `json:"timeRange"`
		Where   json.RawMessage `json:"where"`
		Group   json.RawMessage `json:"group"`
		OrderBy []struct {
			Field     string `json:"field"`
			Direction string `json:"direction"`
		} `json:"orderBy"`
		Page *struct {
			Limit *int    `json:"limit"`
			After *string `json:"after"`
		} `json:"page"`
	}
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	switch {
	case b.TimeRange == nil:
		return nil, badRequest(`Argument "timeRange" is required`)
	case b.TimeRange.From == nil:
		return nil, badRequest(`Argument "timeRange.from" is required`)
	case b.TimeRange.To == nil:
		return nil, badRequest(`Argument "timeRange.to" is required`)
	case len(b.Where) > 0 && string(b.Where) != "null":
		return nil, badRequest("where: Parley's trace query takes timeRange, orderBy and page only")
	case len(b.Group) > 0 && string(b.Group) != "null":
		return nil, badRequest("group: Parley's trace query takes timeRange, orderBy and page only")
	case len(b.OrderBy) > 1:
		return nil, badRequest("orderBy: at most one order")
	}
	from, err := time.Parse(time.RFC3339Nano, *b.TimeRange.From)
	if err != nil {
		return nil, badRequest("timeRange.from must be an ISO 8601 date-time, not %q", clipText(*b.TimeRange.From, 40))
	}
	to, err := time.Parse(time.RFC3339Nano, *b.TimeRange.To)
	if err != nil {
		return nil, badRequest("timeRange.to must be an ISO 8601 date-time, not %q", clipText(*b.TimeRange.To, 40))
	}
	field, desc := "startedAt", true
	if len(b.OrderBy) == 1 {
		o := b.OrderBy[0]
		if o.Field != "startedAt" && o.Field != "endedAt" {
			return nil, badRequest(`orderBy.0.field must be "startedAt" or "endedAt", not %q`, clipText(o.Field, 40))
		}
		if o.Direction != "asc" && o.Direction != "desc" {
			return nil, badRequest(`orderBy.0.direction must be "asc" or "desc", not %q`, clipText(o.Direction, 40))
		}
		field, desc = o.Field, o.Direction == "desc"
	}
	limit, offset := 100, 0
	if b.Page != nil {
		if b.Page.Limit != nil {
			if *b.Page.Limit < 1 || *b.Page.Limit > 1000 {
				return nil, badRequest("page.limit must be from 1 to 1000, not %d", *b.Page.Limit)
			}
			limit = *b.Page.Limit
		}
		if b.Page.After != nil {
			n, err := strconv.Atoi(*b.Page.After)
			if err != nil || n < 0 || n > maxTraceRuns {
				return nil, badRequest("page.after: not a cursor this server gave")
			}
			offset = n
		}
	}
	runs, err := s.recentRuns(r)
	if err != nil {
		return nil, err
	}
	var traces []queriedTrace
	for _, run := range runs {
		if run.FinishedAt.IsZero() || run.StartedAt.Before(from) || run.StartedAt.After(to) {
			continue // the schema has no running trace: a trace here has ended
		}
		sp := s.runSpan(run)
		st := sp.Status
		if st == "running" { // suspended: waiting for the user, not failed
			st = "success"
		}
		traces = append(traces, queriedTrace{
			TraceID: run.ID, RootSpanID: run.ID, Name: sp.Name, EntityID: sp.EntityID, CreatedAt: mastraTime(run.StartedAt),
			Metadata: sp.Metadata, ThreadID: ptr(run.ThreadID), StartedAt: mastraTime(run.StartedAt), EndedAt: mastraTime(run.FinishedAt),
			EntityName: sp.EntityName, EntityType: sp.EntityType, Status: st, ended: run.FinishedAt,
		})
	}
	slices.SortStableFunc(traces, func(a, c queriedTrace) int {
		x, y := a.StartedAt, c.StartedAt
		if field == "endedAt" {
			x, y = mastraTime(a.ended), mastraTime(c.ended)
		}
		if desc {
			x, y = y, x
		}
		return strings.Compare(x, y)
	})
	lo := min(offset, len(traces))
	hi := min(lo+limit, len(traces))
	var next *string
	if hi < len(traces) {
		next = ptr(strconv.Itoa(hi))
	}
	out := traces[lo:hi]
	if out == nil {
		out = []queriedTrace{}
	}
	return map[string]any{"traces": out, "page": map[string]any{"next": next}}, nil
}

// logRecord is one of Mastra's log records.
type logRecord struct {
	LogID      string         `json:"logId"`
	Timestamp  time.Time      `json:"timestamp"`
	Level      string         `json:"level"`
	Message    string         `json:"message"`
	Data       map[string]any `json:"data"`
	TraceID    string         `json:"traceId"`
	SpanID     string         `json:"spanId"`
	EntityType string         `json:"entityType"`
	EntityID   string         `json:"entityId"`
	RunID      string         `json:"runId"`
	ThreadID   string         `json:"threadId"`
}

// apiLogs answers GET /api/observability/logs: a record per run (error for
// a failed one), newest first, filtered by ?level, ?threadId, ?runId or
// ?traceId.
func (s *Server) apiLogs(r *http.Request) (any, error) {
	pageNo, perPage, err := obsPage(r, traceMaxPerPage)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	levels := map[string]bool{}
	if v := q.Get("level"); v != "" {
		var list []string
		if json.Unmarshal([]byte(v), &list) != nil {
			list = []string{v}
		}
		for _, l := range list {
			switch l {
			case "debug", "info", "warn", "error", "fatal":
				levels[l] = true
			default:
				return nil, badRequest(`Invalid query parameters: level must be debug, info, warn, error or fatal, not %q`, clipText(l, 40))
			}
		}
	}
	runID := q.Get("runId")
	if runID == "" {
		runID = q.Get("traceId")
	}
	runs, err := s.recentRuns(r)
	if err != nil {
		return nil, err
	}
	var logs []logRecord
	for _, run := range runs {
		if (runID != "" && run.ID != runID) || (q.Get("threadId") != "" && run.ThreadID != q.Get("threadId")) {
			continue
		}
		rec := logRecord{LogID: run.ID, Timestamp: run.StartedAt, Level: "info", TraceID: run.ID, SpanID: run.ID,
			EntityType: "agent", EntityID: run.AgentID, RunID: run.ID, ThreadID: run.ThreadID,
			Message: fmt.Sprintf("agent run %s: %s", run.ID, run.Status),
			Data:    map[string]any{"status": string(run.Status), "model": run.Model, "usage": run.Usage}}
		if !run.FinishedAt.IsZero() {
			rec.Timestamp = run.FinishedAt
			rec.Data["durationMs"] = run.FinishedAt.Sub(run.StartedAt).Milliseconds()
		}
		if run.Status == agentcore.RunFailed {
			rec.Level, rec.Message = "error", fmt.Sprintf("agent run %s failed: %s", run.ID, run.Error)
			rec.Data["error"] = run.Error
		}
		if len(levels) == 0 || levels[rec.Level] {
			logs = append(logs, rec)
		}
	}
	lo := min(pageNo*perPage, len(logs))
	hi := min(lo+perPage, len(logs))
	out := logs[lo:hi]
	if out == nil {
		out = []logRecord{}
	}
	return map[string]any{"logs": out, "pagination": page{Total: len(logs), Page: pageNo, PerPage: perPage, HasMore: hi < len(logs)}}, nil
}
