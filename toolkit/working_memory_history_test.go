package toolkit

import (
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
)

// Earlier runs' updateWorkingMemory calls and results leave the prompt (a
// message with text keeps it); the run's own stay, at every step.
func TestWorkingMemoryHistory(t *testing.T) {
	h := &WorkingMemoryHistory{}
	wm := func(id string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: UpdateWorkingMemoryName, Input: `{"memory":"x"}`}
	}
	earlier := []llm.Message{
		{Role: llm.RoleSystem, Text: "sys"},
		{Role: llm.RoleUser, Text: "I'm Ada"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{wm("old")}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "old", Name: UpdateWorkingMemoryName, Output: `{"success":true}`}}},
		{Role: llm.RoleAssistant, Text: "Noted.", ToolCalls: []llm.ToolCall{wm("old2"), {ID: "v", Name: "view", Input: `{}`}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "old2", Output: "{}"}, {CallID: "v", Output: "ok"}}},
		{Role: llm.RoleUser, Text: "again"},
	}
	out, err := h.ProcessInput(t.Context(), agentcore.ProcessInput{RunID: "r2", Messages: earlier})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 || out[2].Text != "Noted." || len(out[2].ToolCalls) != 1 || out[2].ToolCalls[0].ID != "v" ||
		len(out[3].ToolResults) != 1 || out[3].ToolResults[0].CallID != "v" {
		t.Fatalf("step 0: %+v", out)
	}
	if len(earlier[2].ToolCalls) != 1 {
		t.Fatal("the processor changed its input")
	}
	// The run's own call, made at step 0, stays at step 1.
	step1 := append(append([]llm.Message{}, earlier...),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{wm("new")}},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "new", Output: `{"success":true}`}}})
	out, _ = h.ProcessInput(t.Context(), agentcore.ProcessInput{RunID: "r2", Step: 1, Messages: step1})
	if len(out) != 7 || out[5].ToolCalls[0].ID != "new" || out[6].ToolResults[0].CallID != "new" {
		t.Fatalf("step 1: %+v", out)
	}
}
