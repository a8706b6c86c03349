package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

type weatherIn struct {
	City string `json:"city" desc:"City name"`
	Unit string `json:"unit,omitempty" enum:"c,f"`
}

type weatherOut struct {
	City string         `json:"city"`
	Temp int            `json:"temp"`
	Call map[string]any `json:"call"` // what the tool knew of its call
}

type lookupIn struct {
	Q string `json:"q"`
}

// withTools gives the test agent a tool of every kind the API must handle.
func withTools(a *agentcore.Agent) {
	a.Tools = map[string]*agentcore.Tool{
		"weather": agentcore.NewTool("weather", "Current weather for a city.",
			func(ctx context.Context, in weatherIn, tc *agentcore.ToolContext) (weatherOut, error) {
				return weatherOut{City: in.City, Temp: 21, Call: map[string]any{
					"toolName": tc.ToolName, "agentId": tc.AgentID, "runId": tc.RunID, "threadId": tc.ThreadID,
					"resourceId": tc.ResourceID, "requestContext": tc.RequestContext, "hasCallId": tc.ToolCallID != "",
				}}, nil
			}),
		// Called "lookup" by the model, but its id is lookup-v2.
		"lookup": agentcore.NewTool("lookup-v2", "Look something up.",
			func(ctx context.Context, in lookupIn, tc *agentcore.ToolContext) (string, error) {
				return "found " + in.Q, nil
			}),
		"fail": {ID: "fail", Description: "Always fails.", Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
			// Wraps ErrNotFound: still the tool's failure (500), not a missing route.
			return nil, fmt.Errorf("the weather service is down: %w", agentcore.ErrNotFound)
		}},
		"boom": {ID: "boom", Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
			panic("kaboom")
		}},
		"liar": {ID: "liar", OutputSchema: json.RawMessage(`{"type":"object","required":["n"]}`),
			Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
				return map[string]any{}, nil
			}},
		"unjson": {ID: "unjson", Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
			return make(chan int), nil
		}},
		"stub": {ID: "stub", Description: "Declared, not runnable."},
		// Ignores Suspendable and suspends anyway.
		"ask": {ID: "ask", SuspendSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(_ context.Context, _ json.RawMessage, tc *agentcore.ToolContext) (any, error) {
				return nil, tc.Suspend(map[string]string{"question": "Sure?"})
			}},
	}
	a.Agents = map[string]*agentcore.Agent{"helper": {
		ID: "helper", Name: "Helper", Description: "Answers sub-questions.",
		Instructions: agentcore.Text("Help."), Model: a.Model, Models: a.Models,
	}}
	a.Workflows = map[string]*agentcore.Workflow{"double": {
		ID: "double", Description: "Doubles n.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Steps: []agentcore.WorkflowStep{{ID: "times-two", Execute: func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
			var v struct{ N int }
			if err := json.Unmarshal(in, &v); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]int{"n": v.N * 2})
		}}},
	}}
}

// schemaOf reads a schema string as Mastra sends it: SuperJSON, {"json": schema}.
func schemaOf(t *testing.T, v any) any {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("schema %#v is not a string", v)
	}
	var sj struct {
		JSON any `json:"json"`
	}
	if err := json.Unmarshal([]byte(s), &sj); err != nil || sj.JSON == nil {
		t.Fatalf("schema %q is not SuperJSON: %v", s, err)
	}
	return sj.JSON
}

func decoded(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAPIToolsList(t *testing.T) {
	e := newAPIEnv(t, withTools)
	list := e.call("GET", "/api/tools", "", http.StatusOK)
	names := slices.Sorted(maps.Keys(list))
	want := []string{"agent-helper", "ask", "boom", "fail", "liar", "lookup", "stub", "unjson", "weather", "workflow-double"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	w := list["weather"].(map[string]any)
	if w["id"] != "weather" || w["description"] != "Current weather for a city." || w["requireApproval"] != false {
		t.Errorf("weather: %v", w)
	}
	if got, want := schemaOf(t, w["inputSchema"]), decoded(t, agentcore.SchemaOf[weatherIn]()); !reflect.DeepEqual(got, want) {
		t.Errorf("weather inputSchema %v, want %v", got, want)
	}
	if got, want := schemaOf(t, w["outputSchema"]), decoded(t, agentcore.SchemaOf[weatherOut]()); !reflect.DeepEqual(got, want) {
		t.Errorf("weather outputSchema %v, want %v", got, want)
	}
	if get(list, "lookup", "id") != "lookup-v2" {
		t.Errorf("lookup: id %v, want its own id", get(list, "lookup", "id"))
	}
	if get(list, "agent-helper", "description") != "Answers sub-questions." ||
		get(schemaOf(t, get(list, "agent-helper", "inputSchema")), "required", 0) != "prompt" {
		t.Errorf("agent-helper: %v", list["agent-helper"])
	}
	if get(schemaOf(t, get(list, "workflow-double", "inputSchema")), "required", 0) != "n" {
		t.Errorf("workflow-double: %v", list["workflow-double"])
	}
	// No schema: none sent, as Mastra leaves undefined schemas out.
	if _, ok := list["boom"].(map[string]any)["inputSchema"]; ok {
		t.Errorf("boom has an inputSchema: %v", list["boom"])
	}
}

func TestAPIToolGet(t *testing.T) {
	e := newAPIEnv(t, withTools)
	list := e.call("GET", "/api/tools", "", http.StatusOK)
	for path, name := range map[string]string{
		"/api/tools/weather": "weather", "/api/tools/lookup": "lookup", "/api/tools/lookup-v2": "lookup",
		"/api/tools/agent-helper": "agent-helper", "/api/tools/workflow-double": "workflow-double",
	} {
		if got := e.call("GET", path, "", http.StatusOK); !reflect.DeepEqual(got, list[name]) {
			t.Errorf("GET %s = %v, want the listed %s %v", path, got, name, list[name])
		}
	}
	if got := e.call("GET", "/api/tools/nope", "", http.StatusNotFound); got["error"] != "Tool not found" {
		t.Errorf("unknown tool: %v", got)
	}
	// The default agent has no tools: the list is empty, not an error.
	bare := newAPIEnv(t)
	if got := bare.call("GET", "/api/tools", "", http.StatusOK); len(got) != 0 {
		t.Errorf("tools of a bare agent: %v", got)
	}
}

func TestAPIToolExecute(t *testing.T) {
	e := newAPIEnv(t, withTools)
	got := e.call("POST", "/api/tools/weather/execute?runId=r-1",
		`{"data":{"city":"Oslo","unit":"c"},"threadId":"th","resourceId":"u1","requestContext":{"locale":"nb"}}`, http.StatusOK)
	want := map[string]any{"city": "Oslo", "temp": 21.0, "call": map[string]any{
		"toolName": "weather", "agentId": "parley", "runId": "r-1", "threadId": "th", "resourceId": "u1",
		"requestContext": map[string]any{"locale": "nb"}, "hasCallId": true,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weather: %v, want %v", got, want)
	}

	// A string output comes back as a JSON string: the raw output, as Mastra returns it.
	resp := e.send("POST", "/api/tools/lookup-v2/execute", `{"data":{"q":"x"}}`)
	var s string
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 || s != "found x" {
		t.Errorf("lookup-v2: %d %q %v", resp.StatusCode, s, err)
	}
	resp.Body.Close()

	if got := e.call("POST", "/api/tools/workflow-double/execute", `{"data":{"n":21}}`, http.StatusOK); get(got, "result", "n") != 42.0 || got["status"] != "success" {
		t.Errorf("workflow-double: %v", got)
	}
	e.model.Push(scripted.Reply{Text: "Sub-answer."})
	if got := e.call("POST", "/api/tools/agent-helper/execute", `{"data":{"prompt":"Help me"}}`, http.StatusOK); got["text"] != "Sub-answer." {
		t.Errorf("agent-helper: %v", got)
	}
	if roles := promptRoles(e.model.Requests()[0]); roles != "system:Help.|user:Help me" {
		t.Errorf("agent-helper prompt %s", roles)
	}
}

func TestAPIToolExecuteErrors(t *testing.T) {
	e := newAPIEnv(t, withTools)
	for _, c := range []struct {
		name, path, body string
		status           int
		msg              string // the error names this
		issues           []any  // and lists these, when set
	}{
		{"unknown tool", "/api/tools/nope/execute", `{"data":{}}`, 404, "Tool not found", nil},
		{"no data", "/api/tools/weather/execute", `{}`, 400, "Invalid request body",
			[]any{map[string]any{"field": "data", "message": "data is required"}}},
		{"no data, unknown tool", "/api/tools/nope/execute", `{"threadId":"x"}`, 400, "Invalid request body", nil},
		{"null data", "/api/tools/weather/execute", `{"data":null}`, 400, `Argument "data" is required`, nil},
		{"zero data", "/api/tools/weather/execute", `{"data":0}`, 400, `Argument "data" is required`, nil},
		{"bad JSON", "/api/tools/weather/execute", `{"data":`, 400, "Invalid request body", nil},
		{"bad requestContext", "/api/tools/weather/execute", `{"data":{"city":"x"},"requestContext":"nb"}`, 400, "requestContext must be an object", nil},
		{"not executable", "/api/tools/stub/execute", `{"data":{}}`, 400, "Tool is not executable", nil},
		{"tool error", "/api/tools/fail/execute", `{"data":{}}`, 500, "the weather service is down", nil},
		{"panic", "/api/tools/boom/execute", `{"data":{}}`, 500, "tool boom crashed: kaboom", nil},
		{"bad output", "/api/tools/liar/execute", `{"data":{}}`, 500, "tool liar returned output that does not match its output schema:\n- (root): missing properties: 'n'", nil},
		{"output not JSON", "/api/tools/unjson/execute", `{"data":{}}`, 500, "tool unjson returned output that is not JSON", nil},
		{"suspends", "/api/tools/ask/execute", `{"data":{}}`, 409, "Tool ask suspended to ask the user", nil},
		{"GET execute", "/api/tools/weather/execute", ``, 404, "no API route", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			method := "POST"
			if strings.HasPrefix(c.name, "GET") {
				method = "GET"
			}
			got := e.call(method, c.path, c.body, c.status)
			if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("error %q, want it to name %q", msg, c.msg)
			}
			if c.issues != nil && !reflect.DeepEqual(got["issues"], c.issues) {
				t.Errorf("issues %v, want %v", got["issues"], c.issues)
			}
		})
	}
	// The server outlived the panic.
	if got := e.call("POST", "/api/tools/weather/execute", `{"data":{"city":"Rome"}}`, http.StatusOK); got["city"] != "Rome" {
		t.Errorf("after the panic: %v", got)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("%d model requests, want 0", n)
	}
}

// Input that fails the schema answers 200 with Mastra's error result (an
// unknown key is not among the failures: it is dropped):
// its message, dotted paths in zod's words, 2-space arguments cut at 200
// characters, and validationErrors by field.
func TestAPIToolValidationLikeMastra(t *testing.T) {
	e := newAPIEnv(t, withTools)
	for _, path := range []string{"/api/tools/weather/execute", "/api/agents/parley/tools/weather/execute"} {
		got := e.call("POST", path, `{"data":{"unit":"k","extra":1}}`, http.StatusOK)
		want := map[string]any{
			"error": true,
			"message": "Tool input validation failed for weather. Please fix the following errors and try again:\n" +
				"- city: Invalid input: expected string, received undefined\n" +
				"- unit: Invalid option: expected one of \"c\"|\"f\"\n\nProvided arguments: {\n  \"unit\": \"k\",\n  \"extra\": 1\n}",
			"validationErrors": map[string]any{
				"errors": []any{}, // "extra" is dropped, as zod strips unknown keys
				"fields": map[string]any{
					"city": map[string]any{"errors": []any{"Invalid input: expected string, received undefined"}, "fields": map[string]any{}},
					"unit": map[string]any{"errors": []any{`Invalid option: expected one of "c"|"f"`}, "fields": map[string]any{}},
				},
			},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", path, got, want)
		}
	}
	got := e.call("POST", "/api/tools/workflow-double/execute", `{"data":{"n":"two"}}`, http.StatusOK)
	if got["message"] != "Tool input validation failed for workflow-double. Please fix the following errors and try again:\n- n: Invalid input: expected number, received string\n\nProvided arguments: {\n  \"n\": \"two\"\n}" {
		t.Errorf("wrong type: %q", got["message"])
	}

	long := strings.Repeat("é", 300)
	got = e.call("POST", "/api/tools/weather/execute", `{"data":{"city":1,"pad":"`+long+`"}}`, http.StatusOK)
	msg, _ := got["message"].(string)
	_, shown, _ := strings.Cut(msg, "Provided arguments: ")
	if !strings.HasSuffix(shown, "... (truncated)") || len([]rune(shown)) != 200+len("... (truncated)") {
		t.Errorf("shown arguments %q", shown)
	}
}

// The agent tool routes read and run the named agent's own tools, with
// Mastra's errors for a bad agent, tool or body.
func TestAPIAgentToolRoutes(t *testing.T) {
	e := newAPIEnv(t, withTools)
	if got, want := e.call("GET", "/api/agents/parley/tools/weather", "", http.StatusOK), e.call("GET", "/api/tools/weather", "", http.StatusOK); !reflect.DeepEqual(got, want) {
		t.Errorf("agent tool %v, want %v", got, want)
	}
	if got := e.call("POST", "/api/agents/parley/tools/weather/execute", `{"data":{"city":"Rome"}}`, http.StatusOK); got["city"] != "Rome" {
		t.Errorf("agent tool execute: %v", got)
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"GET", "/api/agents/nope/tools/weather", "", 404, "Agent with id nope not found"},
		{"GET", "/api/agents/parley/tools/nope", "", 404, "Tool not found"},
		{"GET", "/api/agents/parley/tools/workflow-double", "", 404, "Tool not found"}, // a workflow, not its own tool
		{"POST", "/api/agents/nope/tools/weather/execute", `{"data":{}}`, 404, "Agent with id nope not found"},
		{"POST", "/api/agents/parley/tools/nope/execute", `{"data":{}}`, 404, "Tool not found"},
		{"POST", "/api/agents/parley/tools/weather/execute", `{}`, 400, "Invalid request body"},
		{"POST", "/api/agents/parley/tools/weather/execute", `{"data":{"city":"x"},"requestContext":[]}`, 400, "requestContext must be an object"},
		{"POST", "/api/agents/parley/tools/weather/execute", `"x"`, 400, "want a JSON object"},
		{"POST", "/api/agents/parley/tools/weather/execute", `{"data":"` + strings.Repeat("x", 5<<20) + `"}`, 413, "too large"},
		{"POST", "/api/agents/parley/tools/stub/execute", `{"data":{}}`, 400, "Tool is not executable"},
	} {
		got := e.call(c.method, c.path, c.body, c.status)
		if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s %.40s: error %q, want %q", c.method, c.path, c.body, msg, c.msg)
		}
	}
	// The agent route hands falsy data to the tool's schema, as Mastra's does.
	if got := e.call("POST", "/api/agents/parley/tools/weather/execute", `{"data":null}`, http.StatusOK); got["error"] != true {
		t.Errorf("null data: %v", got)
	}
}

func TestAPIAgentTools(t *testing.T) {
	e := newAPIEnv(t, withTools)
	one := e.call("GET", "/api/agents/parley", "", http.StatusOK)
	list := e.call("GET", "/api/agents", "", http.StatusOK)
	if !reflect.DeepEqual(one["tools"], get(list, "parley", "tools")) {
		t.Errorf("tools differ between list and get:\n%v\n%v", one["tools"], get(list, "parley", "tools"))
	}
	tools, _ := one["tools"].(map[string]any)
	// Its own tools, as Mastra's agent.listTools(); sub-agents and workflows have their own fields.
	if len(tools) != 8 || tools["agent-helper"] != nil || tools["workflow-double"] != nil {
		t.Errorf("agent tools: %v", tools)
	}
	if tools := e.call("GET", "/api/tools", "", http.StatusOK); !reflect.DeepEqual(get(one, "tools", "weather"), tools["weather"]) {
		t.Errorf("agent's weather %v, want as /api/tools has it %v", get(one, "tools", "weather"), tools["weather"])
	}
	if !reflect.DeepEqual(one["agents"], map[string]any{"helper": map[string]any{"id": "helper", "name": "Helper"}}) {
		t.Errorf("agents: %v", one["agents"])
	}
	if !reflect.DeepEqual(one["workflows"], map[string]any{"double": map[string]any{"name": "double"}}) {
		t.Errorf("workflows: %v", one["workflows"])
	}
}
