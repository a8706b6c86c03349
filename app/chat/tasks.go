package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"parley/toolkit"
)

// Task is one entry of a thread's task list: toolkit's own type, which the
// task tools write (an alias, so callers need not import toolkit).
type Task = toolkit.Task

// StateReader reads a thread's state (agentcore.Runtime, or a store).
type StateReader interface {
	GetState(ctx context.Context, threadID, typ string) (json.RawMessage, bool, error)
}

// Tasks is a thread's task list as the task tools stored it: read with
// toolkit's own type and state key, so what the panel shows is what the
// tools wrote, field for field. No list yet is nil, no error. store is the
// runtime, or any reader of thread state.
func Tasks(ctx context.Context, store StateReader, threadID string) ([]Task, error) {
	raw, ok, err := store.GetState(ctx, threadID, toolkit.TaskStateType)
	if err != nil {
		return nil, fmt.Errorf("load task list of thread %s: %w", threadID, err)
	}
	if !ok {
		return nil, nil
	}
	var list []Task
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decode task list of thread %s: %w", threadID, err)
	}
	return list, nil
}

// PartialTasks is the list a task_write call is still writing, from the
// "tasks" value its arguments' partial parse holds so far: the panel fills
// while the model types. Each item is read through toolkit.Task's own JSON
// names; an item without content yet is left out, a missing status is
// pending and a missing activeForm is the content. The task being written
// last may be cut short: that is what the model has typed so far.
func PartialTasks(tasks any) []Task {
	items, _ := tasks.([]any)
	var out []Task
	for _, it := range items {
		raw, err := json.Marshal(it)
		if err != nil {
			continue
		}
		var t Task
		if json.Unmarshal(raw, &t) != nil || t.Content == "" {
			continue
		}
		t.Status = cmp.Or(t.Status, toolkit.TaskPending)
		t.ActiveForm = cmp.Or(t.ActiveForm, t.Content)
		out = append(out, t)
	}
	return out
}
