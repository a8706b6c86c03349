package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

func withAsk(a *agentcore.Agent) {
	a.Tools = map[string]*agentcore.Tool{"ask": {
		ID:           "ask",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`),
		ResumeSchema: json.RawMessage(`{"type":"string"}`),
		Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			if tc.ResumeData != nil {
				var s string
				_ = json.Unmarshal(tc.ResumeData, &s)
				return "User answered: " + s, nil
			}
			return nil, tc.Suspend(map[string]string{"question": "Which port?"})
		},
	}}
}

// A stream that suspends, then Mastra's resume-stream with the answer: the
// tool chunks come in order and the run goes on to the end.
func TestAPIToolChunksAndResumeStream(t *testing.T) {
	e := newAPIEnv(t, withAsk)
	e.model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "ask", Args: `{"question":"Which port?"}`}}})
	resp := e.send("POST", "/api/agents/parley/stream", `{"messages":"deploy","memory":{"thread":"t_1","resource":"u1"}}`)
	chunks, _ := readChunks(t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()
	var types []string
	for _, c := range chunks {
		if n := len(types); n == 0 || types[n-1] != c["type"] {
			types = append(types, c["type"].(string))
		}
	}
	want := "start step-start tool-call-input-streaming-start tool-call-delta tool-call-input-streaming-end tool-call tool-call-suspended step-finish finish"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("chunks\n got %s\nwant %s", got, want)
	}
	runID := chunks[0]["runId"].(string)
	susp := chunks[len(chunks)-3]
	if get(susp, "payload", "suspendPayload", "question") != "Which port?" || get(chunks[len(chunks)-1], "payload", "stepResult", "reason") != "suspended" {
		t.Fatalf("suspension chunks %v / %v", susp, chunks[len(chunks)-1])
	}

	// Bad answers change nothing.
	c1 := e.callIDOf("t_1", "c1")
	e.call("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"`+c1+`","resumeData":42}`, 400)
	e.call("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"nope","resumeData":"x"}`, 404)
	e.call("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"`+c1+`"}`, 400)

	e.model.Push(scripted.Reply{Text: "Deploying on 8080."})
	resp = e.send("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"`+c1+`","resumeData":"8080"}`)
	chunks, done := readChunks(t, bufio.NewReader(resp.Body), nil)
	resp.Body.Close()
	if !done {
		t.Fatal("no [DONE]")
	}
	var text strings.Builder
	var result any
	for _, c := range chunks {
		switch c["type"] {
		case "text-delta":
			text.WriteString(get(c, "payload", "text").(string))
		case "tool-result":
			result = get(c, "payload", "result")
		}
	}
	if result != "User answered: 8080" || text.String() != "Deploying on 8080." || chunks[len(chunks)-1]["type"] != "finish" {
		t.Fatalf("resumed stream: result %v, text %q, last %v", result, text.String(), chunks[len(chunks)-1])
	}
	// Answered twice: not found.
	e.call("POST", "/api/agents/parley/resume-stream", `{"runId":"`+runID+`","toolCallId":"`+c1+`","resumeData":"9"}`, 404)
}
