package agentcore

import (
	"context"
	"encoding/json"
)

// What others read of the runtime's store and bus. Writes go through the
// runtime's operations (Send, Say, Resume, CreateThread, ImportThreads, …),
// which publish what they change.

// GetThread returns the thread id.
func (rt *Runtime) GetThread(ctx context.Context, id string) (Thread, error) {
	return rt.store.GetThread(ctx, id)
}

// ListThreads lists threads.
func (rt *Runtime) ListThreads(ctx context.Context, q ThreadQuery) ([]Thread, error) {
	return rt.store.ListThreads(ctx, q)
}

// GetMessage returns the message id.
func (rt *Runtime) GetMessage(ctx context.Context, id string) (Message, error) {
	m, err := rt.store.GetMessage(ctx, id)
	if err != nil {
		return m, err
	}
	one := []Message{m}
	rt.owedMarks(one)
	return one[0], nil
}

// ListMessages lists a thread's messages.
func (rt *Runtime) ListMessages(ctx context.Context, threadID string, q MessageQuery) ([]Message, error) {
	ms, err := rt.store.ListMessages(ctx, threadID, q)
	rt.owedMarks(ms)
	return ms, err
}

// ListTree lists every message of a thread, of every branch, parents
// before their children.
func (rt *Runtime) ListTree(ctx context.Context, threadID string) ([]Message, error) {
	ms, err := rt.store.ListTree(ctx, threadID)
	rt.owedMarks(ms)
	return ms, err
}

// Siblings answers "version n of m" for the messages ids of a thread that
// have other versions (MessageStore.Siblings).
func (rt *Runtime) Siblings(ctx context.Context, threadID string, ids ...string) (map[string]Siblings, error) {
	return rt.store.Siblings(ctx, threadID, ids...)
}

// owedMarks shows the replies whose failure could not be written yet (owe)
// as the store will have them: failed, with their error, not streaming.
func (rt *Runtime) owedMarks(ms []Message) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.failedReplies) == 0 {
		return
	}
	for i, m := range ms {
		text, ok := rt.failedReplies[m.ID]
		if !ok || m.Status != StatusStreaming {
			continue
		}
		meta := make(map[string]any, len(m.Content.Metadata)+1)
		for k, v := range m.Content.Metadata {
			meta[k] = v
		}
		meta["error"], meta["failure"] = text, FailureStore
		ms[i].Status, ms[i].Content.Metadata = StatusError, meta
	}
}

// GetRun returns the run id.
func (rt *Runtime) GetRun(ctx context.Context, id string) (Run, error) {
	return rt.store.GetRun(ctx, id)
}

// ListRuns lists runs by status, newest first.
func (rt *Runtime) ListRuns(ctx context.Context, q RunQuery) ([]Run, error) {
	return rt.store.ListRuns(ctx, q)
}

// Search finds messages.
func (rt *Runtime) Search(ctx context.Context, q SearchQuery) ([]SearchHit, error) {
	return rt.store.Search(ctx, q)
}

// ThreadUsage sums the token usage of a thread's runs.
func (rt *Runtime) ThreadUsage(ctx context.Context, threadID string) (ThreadUsage, error) {
	return rt.store.ThreadUsage(ctx, threadID)
}

// GetState returns the thread's state stored under typ (the task list under
// "task"); ok is false when there is none.
func (rt *Runtime) GetState(ctx context.Context, threadID, typ string) (json.RawMessage, bool, error) {
	return rt.store.GetState(ctx, threadID, typ)
}

// GetSetting returns the app-wide setting key.
func (rt *Runtime) GetSetting(ctx context.Context, key string) (json.RawMessage, bool, error) {
	return rt.store.GetSetting(ctx, key)
}

// SetSetting replaces the app-wide setting key. Settings are beside the
// conversation: no event is published.
func (rt *Runtime) SetSetting(ctx context.Context, key string, value json.RawMessage) error {
	return rt.store.SetSetting(ctx, key, value)
}

// Subscribe follows the events of thread ("" = every thread), only those of
// types when any are given. Close the subscription when done.
func (rt *Runtime) Subscribe(thread string, types ...EventType) *Subscription {
	return rt.bus.Subscribe(thread, types...)
}

// ImportThreads stores imported threads with their messages, in one
// transaction, and tells every view about each new thread.
func (rt *Runtime) ImportThreads(ctx context.Context, threads []ThreadImport) ([]Thread, error) {
	stored, err := rt.store.ImportThreads(ctx, threads)
	if err != nil {
		return nil, err // the store's reason, shown to the user as it is
	}
	for _, t := range stored {
		rt.bus.Publish(Event{Type: EventThread, ThreadID: t.ID})
	}
	return stored, nil
}

// TasksChanged tells the views of threadID that its task list changed (the
// task tools' callback is bound to it).
func (rt *Runtime) TasksChanged(threadID string) {
	rt.bus.Publish(Event{Type: EventTasks, ThreadID: threadID})
}
