package agentcore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrNothingToRetry is returned by Retry when the thread's last message is
// not a reply that failed or was stopped.
var ErrNothingToRetry = errors.New("nothing to retry: the chat's last reply did not fail and was not stopped")

// Retry answers again when the thread's last reply failed (a provider
// error) or was stopped or cut off (Regenerate, in other chat apps): a new
// run of the same agent writes a new reply after it. The failed reply stays
// in the chat, marked retried; from then on the model does not see it,
// unless it ran tools — what they did to the workspace is part of the story.
func (rt *Runtime) Retry(ctx context.Context, threadID string) (Run, error) {
	thread, err := rt.store.GetThread(ctx, threadID)
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", threadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	if rt.liveRun(thread.ID) != nil || len(rt.queued[thread.ID]) > 0 {
		return Run{}, ErrBusy
	}
	// Read as the screens read it: a reply whose failure is not written
	// yet (owe) is failed already.
	last, err := rt.ListMessages(ctx, thread.ID, MessageQuery{Limit: 1, Last: true})
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", thread.ID, err)
	}
	if len(last) == 0 || last[0].Role != RoleAssistant || (last[0].Status != StatusError && last[0].Status != StatusInterrupted) {
		return Run{}, ErrNothingToRetry
	}
	failed := last[0]
	agentID := ""
	if failed.RunID != "" {
		if run, err := rt.store.GetRun(ctx, failed.RunID); err == nil {
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
	// Marked, so that no later run shows the model the failed attempt
	// either (see modelHistory), and a screen can tell it was retried.
	c := failed.Content
	c.Metadata = maps.Clone(c.Metadata)
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	c.Metadata[metaRetried] = true
	if err := rt.store.UpdateMessage(ctx, failed.ID, c, failed.Status); err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: mark the failed reply: %w", thread.ID, err)
	}
	rt.bus.Publish(Event{Type: EventMessage, ThreadID: thread.ID, MessageID: failed.ID})
	run, err := rt.wake(ctx, thread, agent, "", RunOptions{}, nil)
	if err != nil {
		delete(c.Metadata, metaRetried) // nothing replaces it: the model may read it again
		_ = rt.store.UpdateMessage(context.WithoutCancel(ctx), failed.ID, c, failed.Status)
		return Run{}, err
	}
	return run, nil
}

// metaRetried marks a failed or stopped reply that was answered again.
const metaRetried = "retried"

// modelHistory drops what the model is not to read: replies that were
// answered again (Retry), unless they ran tools — what those did to the
// workspace is part of the story.
func modelHistory(history []Message) []Message {
	return slices.DeleteFunc(history, func(m Message) bool {
		return m.Content.Metadata[metaRetried] == true &&
			!slices.ContainsFunc(m.Content.Parts, func(p Part) bool { return p.ToolInvocation != nil })
	})
}
