package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"parley/agentcore"
	"parley/toolkit"
)

// BranchState is the runtime's OnBranch hook: a chat's task list and its
// approved plans are those of its active branch. Both are read back from
// the branch's own tool results — the last task tool's list, every plan
// approved on it — whenever another branch becomes active, so the task
// panel, the header's plans and the next run's task reminders all follow
// the branch. states is where the task list is kept (the task tools').
func BranchState(c *Chats, states agentcore.StateStore) func(ctx context.Context, threadID string, branch []agentcore.Message) error {
	return func(ctx context.Context, threadID string, branch []agentcore.Message) error {
		tasks := []toolkit.Task{}
		var plans []ApprovedPlan
		for _, m := range branch {
			for _, p := range m.Content.Parts {
				ti := p.ToolInvocation
				if ti == nil || ti.State != "result" || ti.IsError {
					continue
				}
				switch ti.ToolName {
				case "task_write", "task_update", "task_complete":
					var r toolkit.TaskResult
					if json.Unmarshal(ti.Result, &r) == nil && !r.IsError && r.Tasks != nil {
						tasks = r.Tasks
					}
				case planTool:
					var r toolkit.PlanResult
					if json.Unmarshal(ti.Result, &r) == nil && !r.IsError && r.SubmittedPlan.Action == toolkit.PlanApproved {
						plans = append(plans, ApprovedPlan{Title: r.SubmittedPlan.Title, Path: r.SubmittedPlan.Path, ApprovedAt: m.CreatedAt.UTC().Truncate(time.Second)})
					}
				}
			}
		}
		b, err := json.Marshal(tasks)
		if err != nil {
			return fmt.Errorf("task list of the branch: %w", err)
		}
		if err := states.SetState(ctx, threadID, toolkit.TaskStateType, b); err != nil {
			return fmt.Errorf("task list of the branch: %w", err)
		}
		c.rt.TasksChanged(threadID)
		_, err = c.Update(ctx, threadID, func(s *Settings) error {
			// A plan approved before keeps the moment it was approved.
			for i, p := range plans {
				if j := slices.IndexFunc(s.Plans, func(q ApprovedPlan) bool { return q.Title == p.Title && q.Path == p.Path }); j >= 0 && !s.Plans[j].ApprovedAt.IsZero() {
					plans[i].ApprovedAt = s.Plans[j].ApprovedAt
				}
			}
			s.Plans = plans
			return nil
		})
		if err != nil {
			return fmt.Errorf("approved plans of the branch: %w", err)
		}
		return nil
	}
}
