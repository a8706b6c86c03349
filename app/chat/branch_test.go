package chat

import (
	"encoding/json"
	"testing"

	"parley/agentcore"
	"parley/toolkit"
)

// The task list and the approved plans are the active branch's: switching
// versions brings back each branch's own.
func TestBranchStateFollowsTheBranch(t *testing.T) {
	c, db := newChats(t)
	c.rt.OnBranch = BranchState(c, db)
	ctx := t.Context()
	th := newThread(t, db, nil)
	msg := func(role agentcore.Role, parent string, parts ...agentcore.Part) agentcore.Message {
		t.Helper()
		m, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: th, ResourceID: "r", Role: role, ParentID: parent,
			Status: agentcore.StatusComplete, Content: agentcore.Content{Format: 2, Parts: parts}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	result := func(tool, id string, v any) agentcore.Part {
		b, _ := json.Marshal(v)
		return agentcore.Part{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: id, ToolName: tool, Result: b}}
	}
	text := func(s string) agentcore.Part { return agentcore.Part{Type: "text", Text: s} }

	u1 := msg(agentcore.RoleUser, "", text("plan it"))
	a1 := msg(agentcore.RoleAssistant, u1.ID, result("task_write", "t1", toolkit.TaskResult{Tasks: []toolkit.Task{{ID: "a", Content: "A", Status: "pending"}, {ID: "b", Content: "B", Status: "pending"}}}))
	u2 := msg(agentcore.RoleUser, a1.ID, text("go on"))
	a2 := msg(agentcore.RoleAssistant, u2.ID,
		result("task_update", "t2", toolkit.TaskResult{Tasks: []toolkit.Task{{ID: "a", Content: "A", Status: "completed"}, {ID: "b", Content: "B", Status: "pending"}}}),
		result("task_update", "t3", toolkit.TaskResult{IsError: true, Tasks: []toolkit.Task{}}), // a failed call changes nothing
		result("submit_plan", "p1", toolkit.PlanResult{SubmittedPlan: toolkit.SubmittedPlan{Title: "Plan <b>one</b>", Path: ".parley/plans/one.md", Action: toolkit.PlanApproved}}))
	other := msg(agentcore.RoleAssistant, u2.ID, text("a version without tools"))

	check := func(wantTasks string, wantPlans int) {
		t.Helper()
		list, err := Tasks(ctx, db, th)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, tk := range list {
			got += tk.ID + ":" + tk.Status + " "
		}
		if got != wantTasks {
			t.Fatalf("tasks %q, want %q", got, wantTasks)
		}
		s, err := c.Settings(ctx, th)
		if err != nil || len(s.Plans) != wantPlans {
			t.Fatalf("plans %+v, want %d (%v)", s.Plans, wantPlans, err)
		}
	}
	if err := c.rt.SwitchBranch(ctx, th, other.ID); err != nil {
		t.Fatal(err)
	}
	check("a:pending b:pending ", 0)
	if err := c.rt.SwitchBranch(ctx, th, a2.ID); err != nil {
		t.Fatal(err)
	}
	check("a:completed b:pending ", 1)
	if s, _ := c.Settings(ctx, th); s.Plans[0].Title != "Plan <b>one</b>" || s.Plans[0].Path != ".parley/plans/one.md" {
		t.Fatalf("the plan: %+v", s.Plans[0])
	}
	// A fork from the first reply has that reply's list and no plan.
	fork, err := c.rt.Fork(ctx, th, a1.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := Tasks(ctx, db, fork.ID)
	if len(list) != 2 || list[0].Status != "pending" {
		t.Fatalf("the fork's tasks: %+v", list)
	}
}
