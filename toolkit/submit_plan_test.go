package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"parley/agentcore"
)

func TestSubmitPlan(t *testing.T) {
	root := t.TempDir()
	plans := filepath.Join(root, ".parley", "plans")
	if err := os.MkdirAll(filepath.Join(plans, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(rel, text string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".parley/plans/dark.md", "\n\n# Dark mode\n\n\n1. Add CSS\n2. Test it\n\n")
	write(".parley/plans/untitled.MD", "Just steps\n- one\n")
	write(".parley/plans/nested/deep.md", "# Deep\n")
	write(".parley/plans/notes.txt", "# Not markdown\n")
	write("outside.md", "# Outside\n")
	tool := SubmitPlanTool(root)

	suspend := map[string]PlanPayload{
		".parley/plans/dark.md":           {Path: ".parley/plans/dark.md", Title: "Dark mode", Plan: "1. Add CSS\n2. Test it"},
		filepath.Join(plans, "dark.md"):   {Path: filepath.Join(plans, "dark.md"), Title: "Dark mode", Plan: "1. Add CSS\n2. Test it"},
		".parley/plans/untitled.MD":       {Path: ".parley/plans/untitled.MD", Plan: "Just steps\n- one"},
		".parley/plans/nested/deep.md":    {Path: ".parley/plans/nested/deep.md"},
		".parley/plans/notes.txt":         {Path: ".parley/plans/notes.txt"},
		".parley/plans/../../outside.md":  {Path: ".parley/plans/../../outside.md"},
		".parley/plans":                   {Path: ".parley/plans"},
		".parley/plans/missing.md":        {Path: ".parley/plans/missing.md"},
		filepath.Join(root, "outside.md"): {Path: filepath.Join(root, "outside.md")},
	}
	for path, want := range suspend {
		in, _ := json.Marshal(map[string]string{"path": path})
		_, err := tool.Execute(context.Background(), in, &agentcore.ToolContext{Suspendable: true})
		var s *agentcore.SuspendError
		if !errors.As(err, &s) || s.Payload.(PlanPayload) != want {
			t.Errorf("%s: suspended with %+v (%v), want %+v", path, s, err, want)
		}
	}

	resume := []struct {
		data, want string
	}{
		{`{"action":"approved","path":"p","title":"T","plan":"x"}`, "Plan approved. Proceed with implementation following the approved plan."},
		{`{"action":"rejected","feedback":"Use tokens"}`, "Plan was not approved. The user wants revisions.\n\nUser feedback: Use tokens\n\nPlease revise the plan based on the feedback and submit again with submit_plan."},
		{`{"action":"rejected"}`, "Plan was not approved. The user will send revision instructions in their next message. Stop now and wait for the user to provide feedback before revising the plan."},
	}
	for _, r := range resume {
		out, err := tool.Execute(context.Background(), json.RawMessage(`{"path":".parley/plans/dark.md"}`),
			&agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(r.data)})
		res, ok := out.(PlanResult)
		if err != nil || !ok || res.Content != r.want || res.IsError {
			t.Errorf("resume %s: %+v %v", r.data, out, err)
		}
	}
	out, _ := tool.Execute(context.Background(), json.RawMessage(`{"path":".parley/plans/dark.md"}`),
		&agentcore.ToolContext{Suspendable: true, ResumeData: json.RawMessage(`{"action":"approved","path":"p","title":"T","plan":"x"}`)})
	if sp := out.(PlanResult).SubmittedPlan; sp != (SubmittedPlan{Title: "T", Path: "p", Plan: "x", Action: "approved"}) {
		t.Errorf("submittedPlan %+v", sp)
	}
	out, _ = tool.Execute(context.Background(), json.RawMessage(`{"path":"a.md"}`), &agentcore.ToolContext{})
	if out != (Result{Content: "[Plan submitted for review]\n\nPath: a.md"}) {
		t.Errorf("no agent context: %+v", out)
	}
	if err := tool.ValidateResume(json.RawMessage(`{"action":"maybe"}`)); err == nil {
		t.Error("resume with an unknown action accepted")
	}
}
