package toolkit

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEditTools(t *testing.T) {
	tools := Edit(newWorkspace(t, t.TempDir()))
	wantProps := map[string][]string{
		"write_file":      {"path", "content"},
		"edit_file":       {"path", "old_str", "new_str", "replace_all"},
		"delete_file":     {"path", "recursive"},
		"mkdir":           {"path"},
		"execute_command": {"command", "cwd", "timeout"},
	}
	if len(tools) != len(wantProps) {
		t.Fatalf("Edit has %d tools, want %d", len(tools), len(wantProps))
	}
	for name, props := range wantProps {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("Edit has no %s", name)
		}
		if tool.ID != name || tool.ToModelOutput == nil {
			t.Errorf("tool %s: id %q, ToModelOutput set %v", name, tool.ID, tool.ToModelOutput != nil)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s input schema lacks %q", name, p)
			}
		}
		if len(schema.Properties) != len(props) {
			t.Errorf("%s input schema has %d properties, want %d", name, len(schema.Properties), len(props))
		}
	}
	// What each description must tell the model.
	want := map[string][]string{
		"edit_file":       {"exactly", "line numbers", "`replace_all`", "empty `old_str` creates", "CRLF", "nothing is changed", "10 MB", "`.git`", "`view`", "`write_file`"},
		"execute_command": {"`/bin/sh -c`", "`cmd.exe /c`", "end-of-file", "default 30, at most 600", "every process it started are killed", "last 200 lines", "16 KB", "exit code", "server.log 2>&1 &", "`view`", "`edit_file`"},
		"delete_file":     {"`recursive: true`", "symbolic link", "workspace root", "`.git`"},
		"mkdir":           {"missing parent", "already exists"},
	}
	for name, phrases := range want {
		for _, p := range phrases {
			if !strings.Contains(tools[name].Description, p) {
				t.Errorf("%s description lacks %q", name, p)
			}
		}
	}
}

func TestEditToolsCategory(t *testing.T) {
	want := map[string]string{
		"view": "read", "find_files": "read", "search_content": "read",
		"write_file": "edit", "edit_file": "edit", "delete_file": "edit", "mkdir": "edit",
		"execute_command": "execute",
		"web_fetch":       "web", "web_search": "web",
		"ask_user": "other", "submit_plan": "other", "task_write": "other", "task_update": "other",
		"task_complete": "other", "task_check": "other", "some_mcp_tool": "other", "": "other",
	}
	for name, cat := range want {
		if got := Category(name); got != cat {
			t.Errorf("Category(%q) = %q, want %q", name, got, cat)
		}
	}
	for name := range Edit(newWorkspace(t, t.TempDir())) {
		if c := Category(name); c != CategoryEdit && c != CategoryExecute {
			t.Errorf("Edit tool %s has category %q", name, c)
		}
	}
	for name := range ReadOnly(newWorkspace(t, t.TempDir())) {
		if Category(name) != CategoryRead {
			t.Errorf("ReadOnly tool %s is not in the read category", name)
		}
	}
}
