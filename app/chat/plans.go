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

// planTool is the tool whose suspensions are plans under review.
const planTool = "submit_plan"

// Answer resumes a call that waits for the user with their answer: a
// question's answer, an approval's decision, or a plan decision
// ({action: approved|rejected, feedback?}), which is one operation (see
// ApprovePlan).
func (c *Chats) Answer(ctx context.Context, threadID, callID string, answer json.RawMessage) error {
	ti, err := c.waitingCall(ctx, threadID, callID)
	if err != nil {
		return err
	}
	if ti == nil || ti.ToolName != planTool {
		return c.resume(ctx, threadID, callID, answer) // Resume reports an unknown call
	}
	var d map[string]any
	if err := json.Unmarshal(answer, &d); err != nil {
		return fmt.Errorf("a plan decision must be {action, feedback?}: %v", err)
	}
	return c.decidePlan(ctx, threadID, ti, d)
}

// ApprovePlan approves the plan the call waits on, as one operation: the
// chat switches to Build, records the plan, and the run goes on; if the run
// cannot go on, the chat's mode and plans are as they were.
func (c *Chats) ApprovePlan(ctx context.Context, threadID, callID string) error {
	return c.decide(ctx, threadID, callID, map[string]any{"action": toolkit.PlanApproved})
}

// RejectPlan rejects the plan: the chat stays in Plan mode and the agent
// waits for the user's next message.
func (c *Chats) RejectPlan(ctx context.Context, threadID, callID string) error {
	return c.decide(ctx, threadID, callID, map[string]any{"action": toolkit.PlanRejected})
}

// RequestChanges rejects the plan with feedback: the agent revises it and
// submits it again.
func (c *Chats) RequestChanges(ctx context.Context, threadID, callID, feedback string) error {
	return c.decide(ctx, threadID, callID, map[string]any{"action": toolkit.PlanRejected, "feedback": feedback})
}

func (c *Chats) decide(ctx context.Context, threadID, callID string, d map[string]any) error {
	ti, err := c.waitingCall(ctx, threadID, callID)
	if err != nil {
		return err
	}
	if ti == nil || ti.ToolName != planTool {
		return fmt.Errorf("decide plan %s: no plan waits for a decision there: %w", callID, agentcore.ErrNotFound)
	}
	return c.decidePlan(ctx, threadID, ti, d)
}

// decidePlan answers the plan ti waits on with d. The plan under review is
// echoed back (path, title, plan: the tool reports what was decided).
func (c *Chats) decidePlan(ctx context.Context, threadID string, ti *agentcore.ToolInvocation, d map[string]any) error {
	var p map[string]any
	_ = json.Unmarshal(ti.SuspendPayload, &p)
	for _, k := range []string{"path", "title", "plan"} {
		if v, ok := p[k]; ok {
			d[k] = v
		}
	}
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode plan decision: %w", err)
	}
	if d["action"] != toolkit.PlanApproved {
		return c.resume(ctx, threadID, ti.ToolCallID, data)
	}
	if _, busy := c.rt.Live(threadID); busy {
		return agentcore.ErrBusy
	}
	title, _ := p["title"].(string)
	path, _ := p["path"].(string)
	plan := ApprovedPlan{Title: title, Path: path, ApprovedAt: time.Now().UTC().Truncate(time.Second)}
	var was Mode
	// The run reads the chat's mode when it starts: Build is set first.
	if _, err := c.Update(ctx, threadID, func(s *Settings) error {
		was = s.Mode
		s.Mode = ModeBuild
		s.Plans = append(s.Plans, plan)
		return nil
	}); err != nil {
		return fmt.Errorf("approve plan: %w", err)
	}
	if err := c.resume(ctx, threadID, ti.ToolCallID, data); err != nil {
		c.undoApproval(ctx, threadID, was, plan)
		return err
	}
	return nil
}

// undoApproval takes back what an approval changed when its run could not
// go on: the mode (unless someone chose another since) and the plan it
// recorded. Other settings changed meanwhile stay.
func (c *Chats) undoApproval(ctx context.Context, threadID string, was Mode, plan ApprovedPlan) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	_, err := c.Update(ctx, threadID, func(s *Settings) error {
		if s.Mode == ModeBuild {
			s.Mode = was
		}
		if i := slices.IndexFunc(s.Plans, func(p ApprovedPlan) bool {
			return p.Title == plan.Title && p.Path == plan.Path && p.ApprovedAt.Equal(plan.ApprovedAt)
		}); i >= 0 {
			s.Plans = slices.Delete(s.Plans, i, i+1)
		}
		return nil
	})
	if err != nil {
		c.rt.Log.Error("undo plan approval", "thread", threadID, "err", err)
	}
}

// undoTimeout bounds taking back an approval after the request ended: one
// small write on the single writer.
const undoTimeout = 10 * time.Second

func (c *Chats) resume(ctx context.Context, threadID, callID string, data json.RawMessage) error {
	_, err := c.rt.Resume(ctx, agentcore.ResumeRequest{ThreadID: threadID, ToolCallID: callID, Data: data})
	return err
}

// waitingCall is the call callID of the thread that waits for the user,
// nil when there is none.
func (c *Chats) waitingCall(ctx context.Context, threadID, callID string) (*agentcore.ToolInvocation, error) {
	pending, err := c.rt.Pending(ctx, threadID)
	if err != nil {
		return nil, err
	}
	for i := range pending {
		if pending[i].ToolCallID == callID {
			return &pending[i], nil
		}
	}
	return nil, nil
}
