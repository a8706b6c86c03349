package toolkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"parley/agentcore"
)

// TestToolSchemaLimits: the limits a tool's code enforces are in its input
// schema, so that a bad value is a validation error naming the field (a
// 400 over HTTP, a correctable error for the model) before the tool runs;
// the tool still refuses it when called without validation.
func TestToolSchemaLimits(t *testing.T) {
	ws := newWorkspace(t, makeTree(t, map[string]string{"a.txt": "a\n"}))
	tools := ReadOnly(ws)
	for name, tool := range Edit(ws) {
		tools[name] = tool
	}
	tools["notification-inbox"] = NotificationInboxTool(nil)

	// The schema's bounds are the code's constants.
	bounds := []struct {
		tool, field string
		min, max    int
	}{
		{"view", "offset", 0, maxFileBytes},
		{"view", "limit", 0, maxFileBytes},
		{"find_files", "maxResults", 0, findMaxResults},
		{"search_content", "contextLines", 0, searchMaxContext},
		{"search_content", "maxCount", 0, searchMaxCount},
		{"execute_command", "timeout", 0, maxCommandTimeout},
		{"notification-inbox", "limit", 0, 1000},
	}
	for _, b := range bounds {
		var s struct {
			Properties map[string]struct {
				Type    string `json:"type"`
				Minimum *int   `json:"minimum"`
				Maximum *int   `json:"maximum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tools[b.tool].InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		p := s.Properties[b.field]
		if p.Type != "integer" || p.Minimum == nil || *p.Minimum != b.min || p.Maximum == nil || *p.Maximum != b.max {
			t.Errorf("%s.%s: schema %+v, want an integer in [%d, %d]", b.tool, b.field, p, b.min, b.max)
		}
		for _, v := range []string{fmt.Sprint(b.min - 1), fmt.Sprint(b.max + 1), "1e308", "1.5"} {
			in := fmt.Sprintf(`{"path":"a.txt","pattern":"a","command":"true","action":"list",%q:%s}`, b.field, v)
			err := tools[b.tool].ValidateInput(json.RawMessage(in))
			var se *agentcore.SchemaError
			if err == nil || !strings.Contains(err.Error(), "/"+b.field) || !errors.As(err, &se) {
				t.Errorf("%s %s=%s: %v, want a schema error naming /%s", b.tool, b.field, v, err, b.field)
			}
		}
	}

	// Strings the code refuses when empty.
	for tool, field := range map[string]string{"search_content": "pattern", "execute_command": "command"} {
		if err := tools[tool].ValidateInput(json.RawMessage(fmt.Sprintf(`{%q:""}`, field))); err == nil || !strings.Contains(err.Error(), "/"+field) {
			t.Errorf("%s with an empty %s: %v, want a schema error naming it", tool, field, err)
		}
	}

	// Called without validation, the tools still refuse, in their own words.
	for _, tt := range []struct{ tool, input, want string }{
		{"view", `{"path":"a.txt","offset":-1}`, "offset must be a 1-based line number (1 or more), got -1"},
		{"view", `{"path":"a.txt","limit":-5}`, "limit must be a number of lines (1 or more), got -5"},
		{"find_files", `{"maxResults":-1}`, "maxResults must be 1 or more, got -1"},
		{"search_content", `{"pattern":""}`, "pattern is empty"},
		{"search_content", `{"pattern":"x","contextLines":-1}`, "contextLines must be 0 or more, got -1"},
		{"search_content", `{"pattern":"x","maxCount":-1}`, "maxCount must be 1 or more, got -1"},
		{"execute_command", `{"command":"true","timeout":601}`, "timeout must be between 1 and 600 seconds, got 601"},
		{"execute_command", `{"command":"true","timeout":-1}`, "timeout must be between 1 and 600 seconds, got -1"},
	} {
		_, err := tools[tt.tool].Execute(t.Context(), json.RawMessage(tt.input), &agentcore.ToolContext{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s unvalidated: %v, want %q", tt.tool, tt.input, err, tt.want)
		}
	}
}
