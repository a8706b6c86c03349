package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
)

// askTool suspends with its question and answers with the resume data, like
// ask_user (the real one lives in toolkit, which imports agentcore).
func askTool() *agentcore.Tool {
	return &agentcore.Tool{
		ID:           "ask",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`),
		ResumeSchema: json.RawMessage(`{"type":"string"}`),
		Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			if tc.ResumeData != nil {
				var s string
				_ = json.Unmarshal(tc.ResumeData, &s)
				return "User answered: " + s, nil
			}
			var q struct{ Question string }
			_ = json.Unmarshal(in, &q)
			return nil, tc.Suspend(map[string]string{"question": q.Question})
		},
	}
}

// suspendRuntime opens a runtime with the ask tool over the store at path.
func suspendRuntime(t *testing.T, path string, srv *scripted.Server) (*agentcore.Runtime, func()) {
	t.Helper()
	db, err := storage.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, APIKeys: map[string]string{"openai-compatible": "k"}, Getenv: func(string) string { return "" }, MaxRetries: -1}
	agent := &agentcore.Agent{ID: "a", Model: "openai-compatible/t", Tools: map[string]*agentcore.Tool{"ask": askTool()},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }}
	rt := agentcore.NewRuntime(db, nil, agent)
	return rt, func() { rt.Close(); db.Close() }
}

func TestSuspendSurvivesRestartAndResumes(t *testing.T) {
	srv := scripted.NewServer()
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "p.db")
	rt, closeRT := suspendRuntime(t, path, srv)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "One question first.", ToolCalls: []scripted.ToolCall{
		{ID: "q1", Name: "ask", Args: `{"question":"Which port?"}`},
		{ID: "q2", Name: "ask", Args: `{"question":"Which host?"}`},
	}})
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "deploy it"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	run, _ := rt.GetRun(t.Context(), sent.Run.ID)
	if run.Status != agentcore.RunSuspended {
		t.Fatalf("run status %s, want suspended", run.Status)
	}
	pending, _ := rt.Pending(t.Context(), th.ID)
	if len(pending) != 2 || !strings.Contains(string(pending[0].SuspendPayload), "Which port?") {
		t.Fatalf("pending %+v", pending)
	}
	closeRT() // quit with two questions open

	rt, closeRT = suspendRuntime(t, path, srv)
	defer closeRT()
	stored := messages(t, rt, th.ID)
	q1, q2 := callIDOf(t, stored, "q1"), callIDOf(t, stored, "q2")
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: q1, Data: json.RawMessage(`7`)}); !errors.Is(err, agentcore.ErrBadResume) {
		t.Fatalf("wrong-shaped answer: %v", err)
	}
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: "nope", Data: json.RawMessage(`"x"`)}); !errors.Is(err, agentcore.ErrNotSuspended) {
		t.Fatalf("unknown call: %v", err)
	}
	// The first answer resolves its call; the other question still blocks
	// the model.
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: q1, Data: json.RawMessage(`"8080"`)}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("the model was called with a question still open (%d requests)", n)
	}
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: q1, Data: json.RawMessage(`"9090"`)}); !errors.Is(err, agentcore.ErrNotSuspended) {
		t.Fatalf("second answer to the same question: %v", err)
	}
	srv.Push(scripted.Reply{Text: "Deploying to example.org:8080."})
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: q2, Data: json.RawMessage(`"example.org"`)}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	// Nothing waits any more: no run of the thread is left suspended.
	if waiting, _ := rt.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunSuspended}}); len(waiting) != 0 {
		t.Fatalf("%d runs still suspended after every question was answered", len(waiting))
	}

	msgs, _ := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the user's and one reply", len(msgs))
	}
	reply := msgs[1]
	if reply.Status != agentcore.StatusComplete || !strings.HasSuffix(reply.Content.Text(), "Deploying to example.org:8080.") {
		t.Fatalf("reply %s %q", reply.Status, reply.Content.Text())
	}
	results := map[string]string{}
	for _, p := range reply.Content.Parts {
		if ti := p.ToolInvocation; ti != nil {
			if ti.State != "result" || len(ti.SuspendPayload) == 0 {
				t.Fatalf("invocation %+v", ti)
			}
			results[ti.ToolCallID] = ti.ModelOutput
		}
	}
	if results[q1] != "User answered: 8080" || results[q2] != "User answered: example.org" {
		t.Fatalf("results %v", results)
	}
	// The model got both answers.
	last := srv.Requests()[1]
	var got []string
	for _, m := range last.Messages {
		if m.Role == "tool" {
			got = append(got, m.Content)
		}
	}
	if strings.Join(got, "|") != "User answered: 8080|User answered: example.org" {
		t.Fatalf("the model saw %v", got)
	}
}

// An approval is a suspension the before-hook asks for: the call waits,
// survives in the store, and runs (fresh, without resume data) only once
// allowed; a denial reaches the model as an error result.
func TestApprovalGate(t *testing.T) {
	srv := scripted.NewServer()
	defer srv.Close()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, APIKeys: map[string]string{"openai-compatible": "k"}, Getenv: func(string) string { return "" }, MaxRetries: -1}
	ran := 0
	var sawResume json.RawMessage
	touch := &agentcore.Tool{ID: "touch", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		ran++
		sawResume = tc.ResumeData
		return "touched", nil
	}}
	var decisions []string
	agent := &agentcore.Agent{ID: "a", Model: "openai-compatible/t", Tools: map[string]*agentcore.Tool{"touch": touch},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
		Hooks: agentcore.ToolHooks{BeforeToolCall: func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
			switch {
			case c.Approval == nil:
				return &agentcore.ToolDecision{RequireApproval: true, ApprovalPayload: map[string]string{"category": "edit"}}, nil
			case c.Approval.Decision == "deny":
				decisions = append(decisions, "deny")
				return &agentcore.ToolDecision{Error: "The user denied this tool call: " + c.Approval.Reason}, nil
			}
			decisions = append(decisions, c.Approval.Decision)
			return &agentcore.ToolDecision{Proceed: true}, nil
		}}}
	rt := agentcore.NewRuntime(db, nil, agent)
	defer rt.Close()
	th := thread(t, rt)
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "a1", Name: "touch", Args: `{}`}, {ID: "a2", Name: "touch", Args: `{}`}}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	pending, _ := rt.Pending(t.Context(), th.ID)
	if len(pending) != 2 || !pending[0].Approval || ran != 0 || !strings.Contains(string(pending[0].SuspendPayload), `"category":"edit"`) {
		t.Fatalf("pending %+v, ran %d", pending, ran)
	}
	stored := messages(t, rt, th.ID)
	a1, a2 := callIDOf(t, stored, "a1"), callIDOf(t, stored, "a2")
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a1, Data: json.RawMessage(`"yes"`)}); !errors.Is(err, agentcore.ErrBadResume) {
		t.Fatalf("malformed approval: %v", err)
	}
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a1, Data: json.RawMessage(`{"decision":"allow"}`)}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	if ran != 1 || sawResume != nil {
		t.Fatalf("after allow: ran %d, tool saw resume data %s", ran, sawResume)
	}
	srv.Push(scripted.Reply{Text: "ok"})
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: a2, Data: json.RawMessage(`{"decision":"deny","reason":"not now"}`)}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	if ran != 1 || strings.Join(decisions, ",") != "allow,deny" {
		t.Fatalf("ran %d, decisions %v", ran, decisions)
	}
	var told []string
	for _, m := range srv.Requests()[1].Messages {
		if m.Role == "tool" {
			told = append(told, m.Content)
		}
	}
	if strings.Join(told, "|") != "touched|The user denied this tool call: not now" {
		t.Fatalf("model told %v", told)
	}
}
