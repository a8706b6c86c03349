package agentcore

import (
	"context"
	"fmt"
	"time"
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

// TrashKeep is how long a trashed thread can be restored: the web UI's
// "Chat deleted · Undo" toast shows for 6 s; the rest is slack for a slow
// Undo request.
const TrashKeep = 10 * time.Second

// TrashThread deletes a thread so that it can be restored: its run, if any,
// is stopped, and the thread is hidden from every read (ErrNotFound) at once;
// RestoreThread within TrashKeep brings it back with nothing lost. After
// TrashKeep it is deleted for good: by a sweep this runtime schedules, or,
// if the process ends first, when the store is next opened.
func (rt *Runtime) TrashThread(ctx context.Context, id string) error {
	if rt.Stop(ctx, id) && ctx.Err() != nil {
		return fmt.Errorf("delete thread %s: its reply was stopped but has not ended yet: %w", id, ctx.Err())
	}
	if err := rt.store.TrashThread(ctx, id, time.Now()); err != nil {
		return fmt.Errorf("delete thread %s: %w", id, err)
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: id})
	time.AfterFunc(TrashKeep+time.Second, rt.sweepTrash)
	return nil
}

// RestoreThread brings back a thread TrashThread deleted, while it can be
// (ErrNotFound once it is purged).
func (rt *Runtime) RestoreThread(ctx context.Context, id string) error {
	if err := rt.store.RestoreThread(ctx, id); err != nil {
		return fmt.Errorf("restore thread %s: %w", id, err)
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: id})
	return nil
}

// PurgeTrash deletes for good the threads trashed more than TrashKeep ago.
// It runs after each TrashThread; the store sweeps too when it opens (a
// thread trashed just before a shutdown is not kept forever).
func (rt *Runtime) PurgeTrash(ctx context.Context) (int, error) {
	n, err := rt.store.PurgeTrash(ctx, time.Now().Add(-TrashKeep))
	if err != nil {
		return 0, fmt.Errorf("purge deleted threads: %w", err)
	}
	return n, nil
}

// trashSweepTimeout bounds one sweep of the trash (one DELETE).
const trashSweepTimeout = 30 * time.Second

func (rt *Runtime) sweepTrash() {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return // the store may be closed; the next start sweeps
	}
	ctx, cancel := context.WithTimeout(context.Background(), trashSweepTimeout)
	defer cancel()
	if _, err := rt.PurgeTrash(ctx); err != nil {
		rt.Log.Warn("deleting chats for good", "err", err)
	}
}
