package ui

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"parley/agentcore"
)

// suspendedRunsMaxPerPage bounds a page of suspended runs: Mastra sets no
// limit, and a client's number must not size the answer.
const suspendedRunsMaxPerPage = 100

// suspendedRun is one run of Mastra's listSuspendedRunsResponseSchema.
type suspendedRun struct {
	RunID       string              `json:"runId"`
	Status      string              `json:"status"`
	ThreadID    string              `json:"threadId,omitempty"`
	ResourceID  string              `json:"resourceId,omitempty"`
	SuspendedAt string              `json:"suspendedAt"`
	ToolCalls   []suspendedToolCall `json:"toolCalls"`
}

// suspendedToolCall is a call the run waits on, as Mastra's
// getSuspendedToolCalls lists it: an approval with its arguments, a tool
// that suspended with what it asks (suspendPayload).
type suspendedToolCall struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args,omitempty"`
	RequiresApproval bool            `json:"requiresApproval"`
	SuspendPayload   json.RawMessage `json:"suspendPayload,omitempty"`
}

// suspendedQuery is listSuspendedRunsQuerySchema, checked.
type suspendedQuery struct {
	threadID, resourceID string
	from, to             time.Time
	page, perPage        int // perPage 0: not paginated (Mastra pages only when both are given)
}

func parseSuspendedQuery(r *http.Request) (suspendedQuery, error) {
	v := r.URL.Query()
	q := suspendedQuery{threadID: v.Get("threadId"), resourceID: v.Get("resourceId")}
	var issues []apiIssue
	date := func(name string) time.Time {
		s := v.Get(name)
		if s == "" {
			return time.Time{}
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t
			}
		}
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 && ms < math.MaxInt64/1_000_000 {
			return time.UnixMilli(ms)
		}
		issues = append(issues, apiIssue{Field: name, Message: "Invalid input: expected date, received Date"})
		return time.Time{}
	}
	whole := func(name string, least, most int) int {
		s := v.Get(name)
		if s == "" {
			return -1
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		switch {
		case err != nil || math.IsNaN(f):
			issues = append(issues, apiIssue{Field: name, Message: "Invalid input: expected number, received NaN"})
		case f != math.Trunc(f):
			issues = append(issues, apiIssue{Field: name, Message: "Invalid input: expected int, received number"})
		case f < float64(least):
			issues = append(issues, apiIssue{Field: name, Message: "Too small: expected number to be >=" + strconv.Itoa(least)})
		case f > float64(most):
			issues = append(issues, apiIssue{Field: name, Message: "Too big: expected number to be <=" + strconv.Itoa(most)})
		default:
			return int(f)
		}
		return -1
	}
	q.from, q.to = date("fromDate"), date("toDate")
	page := whole("page", 0, math.MaxInt32)
	perPage := whole("perPage", 1, suspendedRunsMaxPerPage)
	if !q.from.IsZero() && !q.to.IsZero() && q.from.After(q.to) {
		issues = append(issues, apiIssue{Field: "fromDate", Message: "fromDate must be less than or equal to toDate"})
	}
	if issues != nil {
		return q, &issuesError{"Invalid query parameters", issues}
	}
	if page >= 0 && perPage > 0 {
		q.page, q.perPage = page, perPage
	}
	return q, nil
}

// apiSuspendedRuns answers GET /api/agents/:id/suspended-runs as Mastra's
// listSuspendedRuns: the agent's runs that wait on the user (a question, a
// plan, an approval), newest first, with the calls they wait on; {runs,
// total}, total counting every match.
func (s *Server) apiSuspendedRuns(r *http.Request) (any, error) {
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	q, err := parseSuspendedQuery(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if q.threadID != "" {
		t, err := s.rt.GetThread(ctx, q.threadID)
		switch {
		case errors.Is(err, agentcore.ErrNotFound):
			return nil, &apiError{http.StatusForbidden, "Access denied: thread not found"}
		case err != nil:
			return nil, err
		case q.resourceID != "" && t.ResourceID != "" && t.ResourceID != q.resourceID:
			return nil, errOtherResource
		}
	}
	runs, err := s.rt.ListRuns(ctx, agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended}})
	if err != nil {
		return nil, err
	}
	out := []suspendedRun{}
	total := 0
	seen := map[string]bool{} // a thread waits in one run: its newest
	for _, run := range runs {
		if seen[run.ThreadID] || run.ThreadID == "" || !s.runOf(agent, run) {
			continue
		}
		if q.threadID != "" && run.ThreadID != q.threadID {
			continue
		}
		at := run.FinishedAt
		if at.IsZero() {
			at = run.StartedAt
		}
		if (!q.from.IsZero() && at.Before(q.from)) || (!q.to.IsZero() && at.After(q.to)) {
			continue
		}
		t, err := s.rt.GetThread(ctx, run.ThreadID)
		if err != nil || (q.resourceID != "" && t.ResourceID != q.resourceID) {
			continue
		}
		pending, err := s.rt.Pending(ctx, run.ThreadID)
		if err != nil {
			return nil, err
		}
		if len(pending) == 0 {
			continue // stopped or answered since: nothing waits
		}
		seen[run.ThreadID] = true
		i := total
		total++
		if q.perPage > 0 && (i < q.page*q.perPage || i >= (q.page+1)*q.perPage) {
			continue
		}
		sr := suspendedRun{RunID: run.ID, Status: "suspended", ThreadID: run.ThreadID, ResourceID: t.ResourceID,
			SuspendedAt: mastraTime(at), ToolCalls: []suspendedToolCall{}}
		for _, ti := range pending {
			c := suspendedToolCall{ToolCallID: ti.ToolCallID, ToolName: ti.ToolName, RequiresApproval: ti.Approval}
			if ti.Approval {
				c.Args = ti.Args
			} else {
				c.SuspendPayload = ti.SuspendPayload
			}
			sr.ToolCalls = append(sr.ToolCalls, c)
		}
		out = append(out, sr)
	}
	return map[string]any{"runs": out, "total": total}, nil
}
