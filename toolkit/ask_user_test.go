package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"parley/agentcore"
)

func runAsk(t *testing.T, input string, tc *agentcore.ToolContext) (any, error) {
	t.Helper()
	tool := AskUserTool()
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		return nil, err
	}
	return tool.Execute(context.Background(), json.RawMessage(input), tc)
}

func TestAskUser(t *testing.T) {
	cases := []struct {
		name  string
		input string
		tc    agentcore.ToolContext
		want  Result
		// suspend: the payload the run suspends with
		suspend *AskPayload
	}{
		{name: "free text suspends without a mode", input: `{"question":"Which port?"}`, tc: agentcore.ToolContext{Suspendable: true},
			suspend: &AskPayload{Question: "Which port?"}},
		{name: "options default to single select", input: `{"question":"Pick","options":[{"label":"a"},{"label":"b","description":"B"}]}`, tc: agentcore.ToolContext{Suspendable: true},
			suspend: &AskPayload{Question: "Pick", Options: []AskOption{{Label: "a"}, {Label: "b", Description: "B"}}, SelectionMode: SingleSelect}},
		{name: "multi select kept", input: `{"question":"Pick","options":[{"label":"a"}],"selectionMode":"multi_select"}`, tc: agentcore.ToolContext{Suspendable: true},
			suspend: &AskPayload{Question: "Pick", Options: []AskOption{{Label: "a"}}, SelectionMode: MultiSelect}},
		{name: "mode without options", input: `{"question":"Pick","selectionMode":"multi_select"}`, tc: agentcore.ToolContext{Suspendable: true},
			want: Result{Content: "Failed to ask user: selectionMode requires options.", IsError: true}},
		{name: "mode without options, even on resume", input: `{"question":"Pick","options":[],"selectionMode":"single_select"}`, tc: agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(`"a"`)},
			want: Result{Content: "Failed to ask user: selectionMode requires options.", IsError: true}},
		{name: "string answer", input: `{"question":"Which port?"}`, tc: agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(`"8080"`)},
			want: Result{Content: "User answered: 8080"}},
		{name: "list answer joined", input: `{"question":"Pick","options":[{"label":"a"},{"label":"b"}],"selectionMode":"multi_select"}`, tc: agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(`["a","b"]`)},
			want: Result{Content: "User answered: a, b"}},
		{name: "skipped", input: `{"question":"Which port?"}`, tc: agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(`"(skipped)"`)},
			want: Result{Content: "User answered: (skipped)"}},
		{name: "no agent context, free text", input: `{"question":"Which port?"}`,
			want: Result{Content: "[Question for user]: Which port?"}},
		{name: "no agent context, options", input: `{"question":"Pick","options":[{"label":"a"},{"label":"b"}]}`,
			want: Result{Content: "[Question for user]: Pick\nOptions: a, b\nSelection mode: single_select"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := c.tc
			out, err := runAsk(t, c.input, &tc)
			var s *agentcore.SuspendError
			if c.suspend != nil {
				if !errors.As(err, &s) {
					t.Fatalf("did not suspend: %v %v", out, err)
				}
				got, _ := json.Marshal(s.Payload)
				want, _ := json.Marshal(*c.suspend)
				if string(got) != string(want) {
					t.Fatalf("payload %s, want %s", got, want)
				}
				return
			}
			if err != nil || out != c.want {
				t.Fatalf("got %#v, %v; want %#v", out, err, c.want)
			}
		})
	}
}

func TestAskUserSchemas(t *testing.T) {
	tool := AskUserTool()
	if err := tool.ValidateInput(json.RawMessage(`{"question":""}`)); err == nil {
		t.Error("empty question accepted")
	}
	for _, ok := range []string{`"x"`, `["a","b"]`} {
		if err := tool.ValidateResume(json.RawMessage(ok)); err != nil {
			t.Errorf("resume %s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{`{"action":"approved"}`, `[1]`, `true`} {
		if err := tool.ValidateResume(json.RawMessage(bad)); err == nil {
			t.Errorf("resume %s accepted", bad)
		}
	}
	// The model reads the whole result, as from Mastra: {content, isError}.
	if mo := resultToModel(Result{Content: "x", IsError: true}); mo.Type != "error-json" || mo.Value != (Result{Content: "x", IsError: true}) {
		t.Errorf("error result shown to the model as %s %v", mo.Type, mo.Value)
	}
	if mo := resultToModel(Result{Content: "User answered: Red"}); mo.Type != "json" || mo.Value != (Result{Content: "User answered: Red"}) {
		t.Errorf("result shown to the model as %s %v", mo.Type, mo.Value)
	}
}
