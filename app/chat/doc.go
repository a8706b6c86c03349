// Package chat holds Parley's own rules over the agent runtime: what a chat
// is beyond agentcore's thread — its settings, modes, approvals and plan
// decisions, and the user's own agents a chat may run (Agents: profiles
// over the built-in agent) — and the read models built from it: the inbox (everything
// that needs the user, computed once per change and handed to every open
// page) and the task list (read with the very type the task tools write).
//
// The contract: it returns domain types (its own and agentcore's and
// toolkit's), never view structs; ui decodes a request, calls it and renders
// what it returns. It may import agentcore, toolkit and the store interfaces
// agentcore declares, never ui, components or app.
package chat
