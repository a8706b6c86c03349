package toolkit

import (
	"testing"

	"parley/agentcore/llm"
)

// web_search is only a marker: the provider runs it, nothing here does.
func TestWebSearchTool(t *testing.T) {
	tool := WebSearchTool()
	if tool.ID != llm.WebSearch || !tool.ProviderDefined {
		t.Errorf("got ID %q, ProviderDefined %v; want web_search, true", tool.ID, tool.ProviderDefined)
	}
	if tool.Execute != nil || tool.InputSchema != nil || tool.Description != "" || tool.CanSuspend() {
		t.Error("a provider-defined tool has nothing of its own to run, check or describe")
	}
	if got := Category(tool.ID); got != CategoryWeb {
		t.Errorf("category %q, want %q", got, CategoryWeb)
	}
}
