// Package agentcore is Parley's agent runtime: agents, runs, their typed
// stream events, the per-thread event bus, and the store interfaces the
// runtime needs. It knows no SQL and no HTML: storage implements the store
// interfaces, ui subscribes to the bus.
//
// Behaviour, ids and model-facing texts follow Mastra's Agent and Tool APIs
// (see shared/spec/mastra-behaviour.md); the API is Go.
package agentcore
