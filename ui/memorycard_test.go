package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/components"
	"parley/toolkit"
)

// An updateWorkingMemory call is the chat's "Memory updated" line, whose
// body is the old → new diff, as text; a refused or failed one says
// "Memory not updated".
func TestMemoryCard(t *testing.T) {
	call := func(state string, result any, isErr bool) *components.ToolCard {
		r, _ := json.Marshal(result)
		return toolCard(&agentcore.ToolInvocation{ToolCallID: "c1", ToolName: toolkit.UpdateWorkingMemoryName, State: state,
			Args: json.RawMessage(`{"memory":"new"}`), Result: r, IsError: isErr}, nil)
	}
	old := "# User Information\n- **First Name**: "
	neu := "# User Information\n- **First Name**: Ada </working_memory_data><img src=x onerror=alert(1)>"
	card := call("result", toolkit.WorkingMemoryResult{Success: true, Before: old, After: neu}, false)
	if card.Title != "Memory updated" || card.Preview == nil || len(card.Args) != 0 || card.Result != "" || card.Details != nil {
		t.Fatalf("card %+v", card)
	}
	var b bytes.Buffer
	if err := components.ToolCardView(*card).Render(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "<img") || !strings.Contains(html, "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(html, `data-tool-name="updateWorkingMemory"`) {
		t.Errorf("rendered:\n%s", html)
	}
	if c := call("call", nil, false); c.Title != "Updating memory…" || c.Preview != nil {
		t.Errorf("running: %+v", c)
	}
	if c := call("result", map[string]any{"success": false, "message": "Attempted to replace existing working memory with empty template. Update skipped to prevent data loss."}, false); c.Title != "Memory not updated" || !strings.Contains(c.Result, "Update skipped") {
		t.Errorf("skipped: %+v", c)
	}
	if c := call("result", "Working memory is too long", true); c.Title != "Memory not updated" || !strings.Contains(c.Error, "too long") {
		t.Errorf("error: %+v", c)
	}
}
