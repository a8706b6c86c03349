package agentcore

import (
	"context"
	"errors"
	"fmt"
)

// A chat is a tree (MessageStore): editing a sent message or regenerating a
// reply adds a sibling and keeps the old branch; the chat shows, and the
// model reads, the active branch only. These are the runtime's ways to
// grow and walk the tree; each refuses while a reply is being written or a
// run waits for the user, so that a run never finds its branch moved under
// it (a screen stops the run first, asking when it waits for the user).

// ErrNotAReply is returned by Regenerate for a message that is not the
// model's.
var ErrNotAReply = errors.New("only a reply of the model can be regenerated")

// ErrNotEditable is returned by Edit for a message that is not one the
// user wrote and sent.
var ErrNotEditable = errors.New("only a message you sent can be edited")

// RegenerateRequest asks for a new version of a reply.
type RegenerateRequest struct {
	ThreadID  string
	MessageID string // the reply to answer again
	Model     string // "": the thread's model
}

// Regenerate answers again in place of a reply: a new run writes a sibling
// of it (a reply to the same message), which becomes the active branch; the
// old reply, and everything after it, stay in the tree. The run's agent is
// the one that wrote the old reply, while it exists.
func (rt *Runtime) Regenerate(ctx context.Context, req RegenerateRequest) (Run, error) {
	thread, err := rt.store.GetThread(ctx, req.ThreadID)
	if err != nil {
		return Run{}, fmt.Errorf("regenerate in thread %s: %w", req.ThreadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	old, err := rt.branchPoint(ctx, thread.ID, req.MessageID)
	if err != nil {
		return Run{}, fmt.Errorf("regenerate message %s: %w", req.MessageID, err)
	}
	if old.Role != RoleAssistant || old.Type != "" {
		return Run{}, fmt.Errorf("regenerate message %s: %w", old.ID, ErrNotAReply)
	}
	agent, err := rt.replyAgent(ctx, old)
	if err != nil {
		return Run{}, err
	}
	// The views show the branch cut back before the new reply appears.
	if err := rt.store.RewindTo(ctx, thread.ID, old.ParentID); err != nil {
		return Run{}, fmt.Errorf("regenerate message %s: %w", old.ID, err)
	}
	rt.branchChanged(ctx, thread.ID)
	run, err := rt.wake(ctx, thread, agent, req.Model, RunOptions{}, nil)
	if err != nil {
		rt.putBack(ctx, thread.ID, old.ID) // nothing replaces it
		return Run{}, err
	}
	return run, nil
}

// putBack shows message id's branch again after what was to replace it
// failed to start.
func (rt *Runtime) putBack(ctx context.Context, threadID, id string) {
	if err := rt.store.SwitchBranch(context.WithoutCancel(ctx), threadID, id); err != nil {
		rt.Log.Error("put the branch back", "thread", threadID, "message", id, "err", err)
	}
	rt.branchChanged(context.WithoutCancel(ctx), threadID)
}

// EditRequest sends a new version of a message the user sent.
type EditRequest struct {
	ThreadID  string
	MessageID string // the user's message to replace
	Text      string
	Model     string // "": the thread's model
}

// Edit sends text in place of a message the user sent: the new message is a
// sibling of it (it follows the same message), the active branch, and a run
// answers it. The old message and everything after it stay in the tree.
func (rt *Runtime) Edit(ctx context.Context, req EditRequest) (Sent, error) {
	in, agent, thread, model, err := rt.sendTarget(ctx, SendRequest{ThreadID: req.ThreadID, Text: req.Text, Model: req.Model})
	if err != nil {
		return Sent{}, err
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	old, err := rt.branchPoint(ctx, thread.ID, req.MessageID)
	if err != nil {
		return Sent{}, fmt.Errorf("edit message %s: %w", req.MessageID, err)
	}
	if old.Role != RoleUser || old.Type != "" || old.Status != StatusComplete {
		return Sent{}, fmt.Errorf("edit message %s: %w", old.ID, ErrNotEditable)
	}
	if err := rt.store.RewindTo(ctx, thread.ID, old.ParentID); err != nil {
		return Sent{}, fmt.Errorf("edit message %s: %w", old.ID, err)
	}
	rt.branchChanged(ctx, thread.ID)
	sent, err := rt.sendLocked(ctx, thread, agent, model, in, RunOptions{})
	if err != nil {
		rt.putBack(ctx, thread.ID, old.ID)
		return Sent{}, err
	}
	return sent, nil
}

// SwitchBranch shows the version messageID of its turn (‹ n/m ›): the
// chat follows its branch from then on, down to the leaf that branch
// showed last.
func (rt *Runtime) SwitchBranch(ctx context.Context, threadID, messageID string) error {
	thread, err := rt.store.GetThread(ctx, threadID)
	if err != nil {
		return fmt.Errorf("switch branch in thread %s: %w", threadID, err)
	}
	lane := rt.lane(thread.ID)
	lane.Lock()
	defer lane.Unlock()
	if _, err := rt.branchPoint(ctx, thread.ID, messageID); err != nil {
		return fmt.Errorf("switch to message %s: %w", messageID, err)
	}
	if err := rt.store.SwitchBranch(ctx, thread.ID, messageID); err != nil {
		return fmt.Errorf("switch to message %s: %w", messageID, err)
	}
	rt.branchChanged(ctx, thread.ID)
	return nil
}

// Fork copies the branch through messageID, from the chat's first message
// down to it, into a new chat that records where it came from. It may run
// while the chat is busy: the copy is of what is stored.
func (rt *Runtime) Fork(ctx context.Context, threadID, messageID string) (Thread, error) {
	from, err := rt.store.GetThread(ctx, threadID)
	if err != nil {
		return Thread{}, fmt.Errorf("fork thread %s: %w", threadID, err)
	}
	t := Thread{ResourceID: from.ResourceID, Title: from.Title}
	if model, ok := from.Metadata[ThreadModelKey].(string); ok && model != "" {
		t.Metadata = map[string]any{ThreadModelKey: model}
	}
	fork, err := rt.store.ForkThread(ctx, from.ID, messageID, t)
	if err != nil {
		return Thread{}, fmt.Errorf("fork thread %s at message %s: %w", from.ID, messageID, err)
	}
	rt.branchChanged(ctx, fork.ID)
	rt.bus.Publish(Event{Type: EventThread, ThreadID: fork.ID})
	return fork, nil
}

// branchPoint is message id of thread, once no run is in progress or
// waits for the user there. The caller holds the thread's lane.
func (rt *Runtime) branchPoint(ctx context.Context, threadID, id string) (Message, error) {
	if rt.liveRun(threadID) != nil || len(rt.queued[threadID]) > 0 {
		return Message{}, ErrBusy
	}
	if calls, err := rt.waitingCalls(ctx, threadID); err != nil {
		return Message{}, err
	} else if len(calls) > 0 {
		return Message{}, fmt.Errorf("%w (%s %s)", ErrWaiting, calls[0].ToolName, calls[0].ToolCallID)
	}
	m, err := rt.store.GetMessage(ctx, id)
	if err != nil {
		return Message{}, err
	}
	if m.ThreadID != threadID {
		return Message{}, fmt.Errorf("%w: no message %s in this chat", ErrNotFound, id)
	}
	return m, nil
}

// replyAgent is the agent that wrote reply m, or the default one when it
// is gone.
func (rt *Runtime) replyAgent(ctx context.Context, m Message) (*Agent, error) {
	agentID := ""
	if m.RunID != "" {
		if run, err := rt.store.GetRun(ctx, m.RunID); err == nil {
			agentID = run.AgentID
		}
	}
	if agent, err := rt.Agent(agentID); err == nil {
		return agent, nil
	}
	return rt.Agent("")
}

// branchChanged brings the chat's other state to its active branch
// (OnBranch) and tells the views, which show the branch's messages again.
func (rt *Runtime) branchChanged(ctx context.Context, threadID string) {
	if rt.OnBranch != nil {
		branch, err := rt.store.ListMessages(ctx, threadID, MessageQuery{})
		if err == nil {
			err = rt.OnBranch(ctx, threadID, branch)
		}
		if err != nil {
			rt.Log.Error("bring the chat's state to its branch", "thread", threadID, "err", err)
		}
	}
	rt.bus.Publish(Event{Type: EventBranch, ThreadID: threadID})
}
