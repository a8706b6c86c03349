package agentcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrNothingToRetry is returned by Retry when the thread's last message is
// not a reply that failed or was stopped.
var ErrNothingToRetry = errors.New("nothing to retry: the chat's last reply did not fail and was not stopped")

// Retry answers again when the thread's last reply failed (a provider
// error) or was stopped or cut off (Regenerate, in other chat apps): a new
// run of the same agent writes a new reply after it. The failed reply stays
// in the chat as it was; the model does not see it, unless it ran tools —
// what they did to the workspace is part of the story.
func (rt *Runtime) Retry(ctx context.Context, threadID string) (Run, error) {
	thread, err := rt.Store.GetThread(ctx, threadID)
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", threadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	if rt.liveRun(thread.ID) != nil || len(rt.queued[thread.ID]) > 0 {
		return Run{}, ErrBusy
	}
	last, err := rt.Store.ListMessages(ctx, thread.ID, MessageQuery{Limit: 1, Last: true})
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", thread.ID, err)
	}
	if len(last) == 0 || last[0].Role != RoleAssistant || (last[0].Status != StatusError && last[0].Status != StatusInterrupted) {
		return Run{}, ErrNothingToRetry
	}
	failed := last[0]
	agentID := ""
	if failed.RunID != "" {
		if run, err := rt.Store.GetRun(ctx, failed.RunID); err == nil {
			agentID = run.AgentID
		}
	}
	agent, err := rt.Agent(agentID)
	if err != nil {
		agent, err = rt.Agent("") // that agent is gone: the default answers
		if err != nil {
			return Run{}, err
		}
	}
	skip := failed.ID
	if slices.ContainsFunc(failed.Content.Parts, func(p Part) bool { return p.ToolInvocation != nil }) {
		skip = ""
	}
	return rt.wake(ctx, thread, agent, "", nil, skip)
}
