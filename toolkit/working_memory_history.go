package toolkit

import (
	"context"
	"slices"
	"sync"

	"parley/agentcore"
	"parley/agentcore/llm"
)

// WorkingMemoryHistory is an input processor that keeps earlier runs'
// updateWorkingMemory calls out of the model's prompt. Mastra never stores
// them (filterMessagesForPersistence drops updateWorkingMemory tool
// invocations: "hide args from message history"), so its model sees a
// run's own calls and no older ones; the document itself is in the
// system message. Parley keeps them, for the chat's "Memory updated"
// lines, and hides them here instead.
type WorkingMemoryHistory struct {
	mu sync.Mutex
	// older are, per run, the calls that were in its prompt when it was
	// first seen: the earlier runs'. The run's own come later.
	older map[string]map[string]bool
	runs  []string // oldest first, to forget finished runs
}

// workingMemoryRunsKept bounds the runs remembered: far more than run at
// once.
const workingMemoryRunsKept = 256

// ProcessInput drops the earlier runs' updateWorkingMemory calls and their
// results; a message left with nothing goes.
func (h *WorkingMemoryHistory) ProcessInput(_ context.Context, in agentcore.ProcessInput) ([]llm.Message, error) {
	older := h.olderCalls(in.RunID, in.Messages)
	if len(older) == 0 {
		return in.Messages, nil
	}
	out := make([]llm.Message, 0, len(in.Messages))
	for _, m := range in.Messages {
		if len(m.ToolCalls) > 0 {
			m.ToolCalls = slices.DeleteFunc(slices.Clone(m.ToolCalls), func(c llm.ToolCall) bool { return older[c.ID] })
		}
		if len(m.ToolResults) > 0 {
			m.ToolResults = slices.DeleteFunc(slices.Clone(m.ToolResults), func(r llm.ToolResult) bool { return older[r.CallID] })
		}
		if m.Text == "" && len(m.ToolCalls) == 0 && len(m.ToolResults) == 0 && m.Role != llm.RoleUser && m.Role != llm.RoleSystem {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

func (h *WorkingMemoryHistory) olderCalls(runID string, msgs []llm.Message) map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.older == nil {
		h.older = map[string]map[string]bool{}
	}
	if ids, seen := h.older[runID]; seen {
		return ids
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name == UpdateWorkingMemoryName {
				ids[c.ID] = true
			}
		}
	}
	h.older[runID] = ids
	h.runs = append(h.runs, runID)
	if len(h.runs) > workingMemoryRunsKept {
		delete(h.older, h.runs[0])
		h.runs = h.runs[1:]
	}
	return ids
}
