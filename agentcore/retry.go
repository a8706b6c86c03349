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
// error) or was stopped or cut off: Regenerate of that reply. The new
// reply is a sibling of the failed one, which stays in the tree as the
// version before it; the model does not see it.
func (rt *Runtime) Retry(ctx context.Context, threadID string) (Run, error) {
	thread, err := rt.store.GetThread(ctx, threadID)
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", threadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	if rt.liveRun(thread.ID) != nil || len(rt.queued[thread.ID]) > 0 {
		lane.Unlock()
		return Run{}, ErrBusy
	}
	// Read as the screens read it: a reply whose failure is not written
	// yet (owe) is failed already.
	last, err := rt.ListMessages(ctx, thread.ID, MessageQuery{Limit: 1, Last: true})
	lane.Unlock()
	if err != nil {
		return Run{}, fmt.Errorf("retry in thread %s: %w", thread.ID, err)
	}
	if len(last) == 0 || last[0].Role != RoleAssistant || (last[0].Status != StatusError && last[0].Status != StatusInterrupted) {
		return Run{}, ErrNothingToRetry
	}
	return rt.Regenerate(ctx, RegenerateRequest{ThreadID: thread.ID, MessageID: last[0].ID})
}

// metaRetried marks a failed or stopped reply that was answered again
// below it, as Retry did before a chat was a tree: such replies are still
// in chats made then.
const metaRetried = "retried"

// modelHistory drops what the model is not to read: replies that were
// answered again below them (metaRetried), unless they ran tools — what
// those did to the workspace is part of the story.
func modelHistory(history []Message) []Message {
	return slices.DeleteFunc(history, func(m Message) bool {
		return m.Content.Metadata[metaRetried] == true &&
			!slices.ContainsFunc(m.Content.Parts, func(p Part) bool { return p.ToolInvocation != nil })
	})
}
