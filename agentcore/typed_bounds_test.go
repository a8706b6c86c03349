package agentcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore"
)

type boundedIn struct {
	Name  string `json:"name" minLength:"1"`
	Count int    `json:"count,omitempty" minimum:"0" maximum:"600"`
}

func TestSchemaOfBounds(t *testing.T) {
	got := string(agentcore.SchemaOf[boundedIn]())
	want := `{"additionalProperties":false,"properties":{"count":{"maximum":600,"minimum":0,"type":"integer"},"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object"}`
	if got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	tool := agentcore.NewTool("b", "", func(_ context.Context, in boundedIn, _ *agentcore.ToolContext) (int, error) { return in.Count, nil })
	for input, field := range map[string]string{
		`{"name":"a","count":-1}`:    "/count",
		`{"name":"a","count":601}`:   "/count",
		`{"name":"a","count":1e308}`: "/count",
		`{"name":"a","count":1.5}`:   "/count",
		`{"name":"","count":1}`:      "/name",
	} {
		err := tool.ValidateInput(json.RawMessage(input))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", input, err, field)
		}
	}
	// Whole numbers that JSON Schema takes for integers decode too.
	for input, want := range map[string]int{`{"name":"a","count":1.0}`: 1, `{"name":"a","count":1e2}`: 100, `{"name":"a","count":5}`: 5} {
		if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		out, err := tool.Execute(t.Context(), json.RawMessage(input), &agentcore.ToolContext{})
		if err != nil || out != want {
			t.Errorf("%s: decoded %v (%v), want %d", input, out, err, want)
		}
	}
	if _, err := tool.Execute(t.Context(), json.RawMessage(`{"name":"a","count":1e999999999}`), &agentcore.ToolContext{}); err == nil || !strings.Contains(err.Error(), "decode input") {
		t.Errorf("a number past int: %v", err)
	}
}
