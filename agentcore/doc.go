// Package agentcore is Parley's agent runtime: agents, runs, their typed
// stream events, the per-thread event bus, and the store interfaces the
// runtime needs. It knows no SQL and no HTML: storage implements the store
// interfaces, ui subscribes to the bus.
//
// A thread has one run at a time: in progress, or suspended while a call
// waits for the user (a question, a plan, an approval). Every way in —
// Send, Say, Resume, signals, queued turns, notifications, Retry — decides
// under the thread's lane, so none starts a second run beside it; Stop
// ends either kind (see waiting.go).
//
// Behaviour, ids and model-facing texts follow Mastra's Agent and Tool APIs
// (see shared/spec/mastra-behaviour.md); the API is Go.
package agentcore
