package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"parley/agentcore"
)

// Tool approvals over the API, as npm @mastra/server
// dist/server/handlers/agents.js answers them: approve-tool-call and
// decline-tool-call stream the rest of the run (SSE, like resume-stream),
// their -generate variants answer once it is over (like generate), and
// send-tool-approval answers at once with the run that goes on
// ({accepted: true, runId, toolCallId}). An approval answered here is the
// one the web UI answers: "allow" once, or "deny" with the reason the model
// reads. Calls that wait for an answer (ask_user, submit_plan) are answered
// with resume-stream instead.

func (s *Server) approvalRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/agents/{agentId}/approve-tool-call", s.approvalStream(true))
	mux.HandleFunc("POST /api/agents/{agentId}/decline-tool-call", s.approvalStream(false))
	mux.HandleFunc("POST /api/agents/{agentId}/approve-tool-call-generate", s.api(s.approvalGenerate(true)))
	mux.HandleFunc("POST /api/agents/{agentId}/decline-tool-call-generate", s.api(s.approvalGenerate(false)))
	mux.HandleFunc("POST /api/agents/{agentId}/send-tool-approval", s.api(s.apiSendToolApproval))
}

// toolCallBody is Mastra's toolCallActionBodySchema (decline adds reason).
// Pointers tell a missing field (the schema's error) from an empty one (the
// handler's). model and format are accepted and unused: the run goes on
// with the model it started with.
type toolCallBody struct {
	RunID          *string        `json:"runId"`
	ToolCallID     *string        `json:"toolCallId"`
	Model          string         `json:"model"`
	RequestContext map[string]any `json:"requestContext"`
	Format         string         `json:"format"`
	Reason         string         `json:"reason"`
}

// zodRequired is the issue Mastra's body validation names a missing
// required string with.
func zodRequired(field string) apiIssue {
	return apiIssue{Field: field, Message: "Invalid input: expected string, received undefined"}
}

func (s *Server) approvalStream(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.startApproval(r, approve)
		if err != nil {
			s.apiFail(w, r, err)
			return
		}
		defer run.close()
		s.writeChunks(w, run)
	}
}

func (s *Server) approvalGenerate(approve bool) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		run, err := s.startApproval(r, approve)
		if err != nil {
			return nil, err
		}
		defer run.close()
		return s.collect(r, run)
	}
}

// startApproval checks a Mastra approve/decline request in Mastra's order
// (body schema, agent, run id, tool call id) and answers the approval.
func (s *Server) startApproval(r *http.Request, approve bool) (*apiRun, error) {
	var b toolCallBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	var missing []apiIssue
	if b.RunID == nil {
		missing = append(missing, zodRequired("runId"))
	}
	if b.ToolCallID == nil {
		missing = append(missing, zodRequired("toolCallId"))
	}
	if missing != nil {
		return nil, &issuesError{"Invalid request body", missing}
	}
	agent, err := s.apiAgent(r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	switch {
	case *b.RunID == "":
		return nil, badRequest("Run id is required")
	case *b.ToolCallID == "":
		return nil, badRequest("Tool call id is required")
	}
	d := agentcore.ApprovalDecision{Decision: "allow"}
	if !approve {
		d = agentcore.ApprovalDecision{Decision: "deny", Reason: b.Reason}
	}
	ctx := r.Context()
	run, err := s.rt.GetRun(ctx, *b.RunID)
	if err != nil || run.ThreadID == "" || (run.AgentID != "" && run.AgentID != agent.ID) {
		// A run without a thread ended with its request: nothing of it waits.
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Run %s of agent %s has no tool call waiting for approval", *b.RunID, agent.ID)}
	}
	return s.answerApproval(r, run.ThreadID, *b.ToolCallID, d)
}

// answerApproval resumes the approval callID waits on in the thread, and
// follows the run that goes on.
func (s *Server) answerApproval(r *http.Request, threadID, callID string, d agentcore.ApprovalDecision) (*apiRun, error) {
	ctx := r.Context()
	pending, err := s.rt.Pending(ctx, threadID)
	if err != nil {
		return nil, err
	}
	var call *agentcore.ToolInvocation
	for i := range pending {
		if pending[i].ToolCallID == callID {
			call = &pending[i]
		}
	}
	switch {
	case call == nil:
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Tool call %s is not waiting for approval", callID)}
	case !call.Approval:
		return nil, badRequest("Tool call %s (%s) waits for an answer, not an approval: answer it with resume-stream", callID, call.ToolName)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode approval: %w", err)
	}
	sub := s.rt.Subscribe(threadID)
	res, err := s.rt.Resume(ctx, agentcore.ResumeRequest{ThreadID: threadID, ToolCallID: callID, Data: data})
	if err != nil {
		sub.Close()
		if errors.Is(err, agentcore.ErrNotSuspended) {
			return nil, &apiError{http.StatusNotFound, fmt.Sprintf("Tool call %s is not waiting for approval", callID)}
		}
		return nil, err
	}
	return &apiRun{id: res.ID, events: runEvents(ctx, sub, res.ID), close: sub.Close}, nil
}

// sendToolApprovalBody is Mastra's sendToolApprovalBodySchema, the parts
// Parley uses.
type sendToolApprovalBody struct {
	ResourceID *string `json:"resourceId"`
	ThreadID   *string `json:"threadId"`
	ToolCallID *string `json:"toolCallId"`
	Approved   *bool   `json:"approved"`
}

// apiSendToolApproval answers POST /api/agents/:id/send-tool-approval: the
// decision is taken, the run goes on for the thread's subscribers, and the
// answer names it at once.
func (s *Server) apiSendToolApproval(r *http.Request) (any, error) {
	var b sendToolApprovalBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	var missing []apiIssue
	for _, f := range []struct {
		name string
		set  bool
	}{{"resourceId", b.ResourceID != nil}, {"threadId", b.ThreadID != nil}, {"toolCallId", b.ToolCallID != nil}} {
		if !f.set {
			missing = append(missing, zodRequired(f.name))
		}
	}
	if b.Approved == nil {
		missing = append(missing, apiIssue{Field: "approved", Message: "Invalid input: expected boolean, received undefined"})
	}
	if missing != nil {
		return nil, &issuesError{"Invalid request body", missing}
	}
	if _, err := s.apiAgentIn(r.Context(), r.PathValue("agentId")); err != nil {
		return nil, err
	}
	switch {
	case *b.ToolCallID == "":
		return nil, badRequest("Tool call id is required")
	case *b.ThreadID == "":
		return nil, badRequest("threadId is required")
	}
	t, err := s.rt.GetThread(r.Context(), *b.ThreadID)
	switch {
	case errors.Is(err, agentcore.ErrNotFound):
		return nil, &apiError{http.StatusNotFound, "Thread not found"}
	case err != nil:
		return nil, err
	case *b.ResourceID != "" && t.ResourceID != *b.ResourceID:
		return nil, errOtherResource
	}
	d := agentcore.ApprovalDecision{Decision: "allow"}
	if !*b.Approved {
		d.Decision = "deny"
	}
	run, err := s.answerApproval(r, t.ID, *b.ToolCallID, d)
	if err != nil {
		return nil, err
	}
	run.close() // the run goes on without this request
	return map[string]any{"accepted": true, "runId": run.id, "toolCallId": *b.ToolCallID}, nil
}
