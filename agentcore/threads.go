package agentcore

import (
	"context"
	"fmt"
)

// ThreadModelKey is the thread metadata key naming the model the thread's
// runs use (a provider/model string; absent: the agent's). The runtime reads
// it; Parley's chat settings (app/chat) write it.
const ThreadModelKey = "model"

// Thread changes go through the Runtime so that every view of the thread
// hears about them on the Bus.

// CreateThread stores a new thread.
func (rt *Runtime) CreateThread(ctx context.Context, t Thread) (Thread, error) {
	t, err := rt.store.CreateThread(ctx, t)
	if err != nil {
		return Thread{}, fmt.Errorf("create thread: %w", err)
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: t.ID})
	return t, nil
}

// UpdateThread changes a thread's title, metadata or pin.
func (rt *Runtime) UpdateThread(ctx context.Context, id string, p ThreadPatch) (Thread, error) {
	t, err := rt.store.UpdateThread(ctx, id, p)
	if err != nil {
		return Thread{}, fmt.Errorf("update thread %s: %w", id, err)
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: id})
	return t, nil
}

// UpdateThreadMetadata changes a thread's metadata with fn atomically (see
// ThreadStore): writers of different keys never undo each other.
func (rt *Runtime) UpdateThreadMetadata(ctx context.Context, id string, fn func(meta map[string]any) error) (Thread, error) {
	t, err := rt.store.UpdateThreadMetadata(ctx, id, fn)
	if err != nil {
		return Thread{}, err
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: id})
	return t, nil
}

// DeleteThread stops the thread's run, if any, and deletes the thread with
// its messages once the run has ended.
func (rt *Runtime) DeleteThread(ctx context.Context, id string) error {
	if rt.Stop(ctx, id) && ctx.Err() != nil {
		return fmt.Errorf("delete thread %s: its reply was stopped but has not ended yet: %w", id, ctx.Err())
	}
	if err := rt.store.DeleteThread(ctx, id); err != nil {
		return fmt.Errorf("delete thread %s: %w", id, err)
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: id})
	return nil
}
