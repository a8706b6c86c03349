package agentcore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
)

// newAgent is an agent on the scripted model with the given tools.
func newAgent(t *testing.T, tools map[string]*agentcore.Tool) (*agentcore.Agent, *scripted.Server) {
	t.Helper()
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	cfg := llm.Config{
		BaseURLs: map[string]string{"openai-compatible": srv.URL()},
		APIKeys:  map[string]string{"openai-compatible": "k"},
		Getenv:   func(string) string { return "" }, MaxRetries: -1,
	}
	return &agentcore.Agent{
		ID: "a", Name: "A", Model: "openai-compatible/test", Tools: tools,
		Log:    slog.New(slog.DiscardHandler),
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
	}, srv
}

func collectRun(a *agentcore.Agent, opts agentcore.StreamOptions, prompt string) []agentcore.Event {
	var out []agentcore.Event
	for e := range a.Stream(context.Background(), []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent(prompt)}}, opts) {
		out = append(out, e)
	}
	return out
}

func types(events []agentcore.Event) string {
	var names []string
	for _, e := range events {
		if n := len(names); n > 0 && names[n-1] == string(e.Type) && e.Type != agentcore.EventToolResult && e.Type != agentcore.EventToolCall {
			continue // runs of deltas count once
		}
		names = append(names, string(e.Type))
	}
	return strings.Join(names, " ")
}

func find(events []agentcore.Event, typ agentcore.EventType) []agentcore.Event {
	var out []agentcore.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

type weatherIn struct {
	City string `json:"city" desc:"City name"`
	Unit string `json:"unit,omitempty" enum:"c,f"`
}

type weatherOut struct {
	City string  `json:"city"`
	Temp float64 `json:"temp"`
}

func weatherTool(calls *int) *agentcore.Tool {
	return agentcore.NewTool("get-weather", "Current weather for a city.",
		func(ctx context.Context, in weatherIn, tc *agentcore.ToolContext) (weatherOut, error) {
			if calls != nil {
				*calls++
			}
			fmt.Fprintf(tc, "looking up %s", in.City)
			return weatherOut{City: in.City, Temp: 21.5}, nil
		})
}

func TestMultiStepToolLoop(t *testing.T) {
	calls := 0
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": weatherTool(&calls)})
	srv.Push(
		scripted.Reply{Text: "Let me check.", ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "weather", Args: `{"city":"Paris","unit":"c"}`}}, ChunkSize: 1},
		scripted.Reply{Text: "It is 21.5 degrees in Paris."},
	)
	events := collectRun(a, agentcore.StreamOptions{}, "weather in Paris?")
	want := "start step-start text-delta tool-call-input-streaming-start tool-call-delta tool-call-input-streaming-end tool-call tool-output tool-result step-finish step-start text-delta step-finish finish"
	if got := types(events); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	var args strings.Builder
	for _, e := range find(events, agentcore.EventToolCallDelta) {
		args.WriteString(e.Text)
	}
	if args.String() != `{"city":"Paris","unit":"c"}` || len(find(events, agentcore.EventToolCallDelta)) < 3 {
		t.Fatalf("argument deltas %q in %d pieces", args.String(), len(find(events, agentcore.EventToolCallDelta)))
	}
	res := find(events, agentcore.EventToolResult)[0]
	if res.ToolName != "weather" || res.IsError || string(res.Result) != `{"city":"Paris","temp":21.5}` || calls != 1 {
		t.Fatalf("result %+v (calls %d)", res, calls)
	}
	// The second model call carries the assistant's call and the result.
	req := srv.Requests()[1]
	var sawCall, sawResult bool
	for _, m := range req.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].Name == "weather" {
			sawCall = true
		}
		if m.Role == "tool" && m.ToolCallID == "c1" && strings.Contains(m.Content, "21.5") {
			sawResult = true
		}
	}
	if !sawCall || !sawResult {
		t.Fatalf("second request lacks the call or the result: %+v", req.Messages)
	}
	// The model saw the tool by its key, with the derived schema.
	if tools := srv.Requests()[0].Tools; len(tools) != 1 || tools[0].Function.Name != "weather" || !strings.Contains(string(tools[0].Function.Parameters), `"enum":["c","f"]`) {
		t.Fatalf("tools sent: %+v", tools)
	}
}

func TestSeveralCallsInOneStep(t *testing.T) {
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": weatherTool(nil)})
	srv.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{
			{ID: "c1", Name: "weather", Args: `{"city":"Paris"}`},
			{ID: "c2", Name: "weather", Args: `{"city":"Oslo"}`},
		}},
		scripted.Reply{Text: "done"},
	)
	events := collectRun(a, agentcore.StreamOptions{}, "two cities")
	results := find(events, agentcore.EventToolResult)
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	got := map[string]string{}
	for _, r := range results {
		got[r.ToolCallID] = string(r.Result)
	}
	if !strings.Contains(got[eventCallIDOf(t, events, "c1")], "Paris") || !strings.Contains(got[eventCallIDOf(t, events, "c2")], "Oslo") {
		t.Fatalf("results %v", got)
	}
	if n := len(srv.Requests()[1].Messages); n < 4 {
		t.Fatalf("second request has %d messages", n)
	}
}

func TestHooksOrderOverrideAndSwallowedErrors(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	tool := weatherTool(nil)
	tool.OnInputStart = func(ctx context.Context, h agentcore.InputStart) error {
		note("onInputStart")
		return errors.New("boom")
	}
	tool.OnInputDelta = func(ctx context.Context, h agentcore.InputDelta) error { note("onInputDelta"); panic("hook panic") }
	tool.OnInputAvailable = func(ctx context.Context, h agentcore.InputAvailable) error {
		note("onInputAvailable:" + string(h.Input))
		return nil
	}
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		note("execute")
		return inner(ctx, in, tc)
	}
	tool.OnOutput = func(ctx context.Context, h agentcore.Output) error { note("onOutput"); return nil }
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": tool})
	a.Hooks = agentcore.ToolHooks{
		BeforeToolCall: func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
			note("agent-before")
			return nil, nil
		},
		AfterToolCall: func(ctx context.Context, c agentcore.ToolCallInfo, out any, err error) error {
			note("agent-after")
			return errors.New("after failed") // logged, not fatal
		},
	}
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "weather", Args: `{"city":"Rome"}`}}}, scripted.Reply{Text: "ok"})
	// Per-run hooks override per key: only before is replaced.
	events := collectRun(a, agentcore.StreamOptions{Hooks: agentcore.ToolHooks{
		BeforeToolCall: func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
			note("run-before:" + c.ToolName)
			return nil, nil
		},
	}}, "x")
	if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
		t.Fatalf("run ended with %+v", last)
	}
	got := strings.Join(dedupe(order), ",")
	want := `onInputStart,onInputDelta,onInputAvailable:{"city":"Rome"},run-before:weather,execute,agent-after,onOutput`
	if got != want {
		t.Fatalf("hook order\n got %s\nwant %s", got, want)
	}
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func TestBeforeHookShortCircuitsAndToolErrorsReachAfterHook(t *testing.T) {
	executed := false
	failing := &agentcore.Tool{ID: "fail", Description: "fails", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		return nil, errors.New("disk full")
	}}
	blocked := &agentcore.Tool{ID: "blocked", Description: "never runs", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		executed = true
		return "ran", nil
	}}
	a, srv := newAgent(t, map[string]*agentcore.Tool{"fail": failing, "blocked": blocked})
	var afterSaw []string
	var mu sync.Mutex
	a.Hooks = agentcore.ToolHooks{
		BeforeToolCall: func(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
			if c.ToolName == "blocked" {
				return &agentcore.ToolDecision{Proceed: false, Output: map[string]any{"skipped": true}}, nil
			}
			return nil, nil
		},
		AfterToolCall: func(ctx context.Context, c agentcore.ToolCallInfo, out any, err error) error {
			mu.Lock()
			afterSaw = append(afterSaw, fmt.Sprintf("%s:%v", c.ToolName, err))
			mu.Unlock()
			return nil
		},
	}
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "b", Name: "blocked", Args: `{}`}, {ID: "f", Name: "fail", Args: `{}`}}}, scripted.Reply{Text: "ok"})
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	results := map[string]agentcore.Event{} // by the provider's id
	for _, r := range find(events, agentcore.EventToolResult) {
		for _, pid := range []string{"b", "f"} {
			if r.ToolCallID == eventCallIDOf(t, events, pid) {
				results[pid] = r
			}
		}
	}
	if executed || string(results["b"].Result) != `{"skipped":true}` || results["b"].IsError {
		t.Fatalf("blocked call: executed=%v result=%+v", executed, results["b"])
	}
	if !results["f"].IsError || string(results["f"].Result) != `"disk full"` {
		t.Fatalf("failing call result %+v", results["f"])
	}
	if strings.Join(afterSaw, ";") != "fail:disk full" {
		t.Fatalf("after hook saw %v (blocked calls must skip it)", afterSaw)
	}
	for _, m := range srv.Requests()[1].Messages {
		if m.ToolCallID == "f" && !strings.Contains(m.Content, "disk full") {
			t.Fatalf("the model did not get the error: %q", m.Content)
		}
	}
}

func TestActiveToolsFilterAndEnforce(t *testing.T) {
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": weatherTool(nil), "other": weatherTool(nil)})
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "other", Args: `{"city":"X"}`}}}, scripted.Reply{Text: "ok"})
	events := collectRun(a, agentcore.StreamOptions{ActiveTools: []string{"weather"}, ToolChoice: agentcore.ToolChoiceRequired}, "x")
	if tools := srv.Requests()[0].Tools; len(tools) != 1 || tools[0].Function.Name != "weather" {
		t.Fatalf("model saw %+v", tools)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"tool_choice":"required"`) {
		t.Fatalf("tool_choice not sent: %s", srv.Requests()[0].Body)
	}
	res := find(events, agentcore.EventToolResult)[0]
	want := `"Tool \"other\" not found. Available tools: weather. Call tools by their exact name only — never add prefixes, namespaces, or colons."`
	if !res.IsError || string(res.Result) != want {
		t.Fatalf("inactive tool result %s", res.Result)
	}
}

func TestUnknownToolTextWithoutTools(t *testing.T) {
	a, srv := newAgent(t, nil)
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "ghost", Args: `{}`}}}, scripted.Reply{Text: "ok"})
	res := find(collectRun(a, agentcore.StreamOptions{}, "x"), agentcore.EventToolResult)[0]
	var text string
	_ = json.Unmarshal(res.Result, &text)
	if text != `Tool "ghost" not found.. Call tools by their exact name only — never add prefixes, namespaces, or colons.` {
		t.Fatalf("unknown tool text %q", text)
	}
}

func TestBadInputFromTheModel(t *testing.T) {
	panicky := &agentcore.Tool{ID: "panicky", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		panic("nil map")
	}}
	calls := 0
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": weatherTool(&calls), "panicky": panicky})
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{
		{ID: "schema", Name: "weather", Args: `{"city":7,"unit":"kelvin","extra":1}`},
		{ID: "repair", Name: "weather", Args: `{city:'Lima',}`},
		{ID: "broken", Name: "weather", Args: `{"city": "Li`},
		{ID: "panic", Name: "panicky", Args: `{}`},
	}}, scripted.Reply{Text: "recovered"})
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
		t.Fatalf("run ended with %+v", last)
	}
	res := map[string]string{} // by the provider's id
	isErr := map[string]bool{}
	for _, pid := range []string{"schema", "repair", "broken", "panic"} {
		id := eventCallIDOf(t, events, pid)
		for _, r := range find(events, agentcore.EventToolResult) {
			if r.ToolCallID == id {
				res[pid], isErr[pid] = string(r.Result), r.IsError
			}
		}
	}
	// Mastra's validation result: each failing field in zod's words; the
	// unknown key is dropped, not refused (zod strips it).
	for _, p := range []string{`"error":true`, `\n- city: Invalid input: expected string, received number`, `\n- unit: Invalid option`, `\"extra\": 1`} {
		if !strings.Contains(res["schema"], p) {
			t.Errorf("schema error does not say %s: %s", p, res["schema"])
		}
	}
	if strings.Contains(res["schema"], "Unrecognized") {
		t.Errorf("schema error refuses the unknown key: %s", res["schema"])
	}
	if isErr["repair"] || !strings.Contains(res["repair"], "Lima") || calls != 1 {
		t.Errorf("repaired call: %s (calls %d)", res["repair"], calls)
	}
	if !isErr["broken"] || !strings.Contains(res["broken"], "Could not parse the arguments") {
		t.Errorf("broken call: %s", res["broken"])
	}
	if !isErr["panic"] || !strings.Contains(res["panic"], "crashed: nil map") {
		t.Errorf("panicking tool: %s", res["panic"])
	}
	var repaired agentcore.Event
	for _, e := range find(events, agentcore.EventToolCall) {
		if e.ToolCallID == eventCallIDOf(t, events, "repair") {
			repaired = e
		}
	}
	if string(repaired.Args) != `{"city":"Lima"}` {
		t.Errorf("repaired args %s", repaired.Args)
	}
}

func TestToModelOutputReachesModelOnly(t *testing.T) {
	tool := weatherTool(nil)
	tool.ToModelOutput = func(out any) agentcore.ModelOutput {
		return agentcore.ModelOutput{Type: "text", Value: "SUMMARY: mild"}
	}
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": tool})
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "weather", Args: `{"city":"Bern"}`}}}, scripted.Reply{Text: "ok"})
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	res := find(events, agentcore.EventToolResult)[0]
	if !strings.Contains(string(res.Result), `"temp":21.5`) || res.ModelOutput != "SUMMARY: mild" {
		t.Fatalf("result %s / model output %q", res.Result, res.ModelOutput)
	}
	for _, m := range srv.Requests()[1].Messages {
		if m.ToolCallID == "c1" && m.Content != "SUMMARY: mild" {
			t.Fatalf("model saw %q", m.Content)
		}
	}
}

func TestTransformFailsClosed(t *testing.T) {
	tool := weatherTool(nil)
	tool.Transform = &agentcore.ToolTransform{Display: &agentcore.PhaseTransforms{
		Input: func(c agentcore.TransformContext) (any, bool, error) {
			return map[string]any{"city": "(hidden)"}, true, nil
		},
		Output: func(c agentcore.TransformContext) (any, bool, error) {
			return nil, false, errors.New("transformer broke")
		},
	}}
	var logs bytes.Buffer
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": tool})
	a.Log = slog.New(slog.NewTextHandler(&logs, nil))
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "weather", Args: `{"city":"Oslo"}`}}}, scripted.Reply{Text: "ok"})
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	for _, d := range find(events, agentcore.EventToolCallDelta) {
		if r, ok := d.Transform[agentcore.TargetDisplay]; !ok || !r.Suppress {
			t.Fatalf("input delta not suppressed: %+v", d.Transform)
		}
		if _, ok := d.Transform[agentcore.TargetTranscript]; ok {
			t.Fatal("transcript target is not configured but got a transform")
		}
	}
	call := find(events, agentcore.EventToolCall)[0]
	if got := fmt.Sprint(call.Transform[agentcore.TargetDisplay].Transformed); got != "map[city:(hidden)]" {
		t.Fatalf("input transform %s", got)
	}
	res := find(events, agentcore.EventToolResult)[0]
	r := res.Transform[agentcore.TargetDisplay]
	if !r.Failed || fmt.Sprint(r.Transformed) != "map[message:Tool output-available payload unavailable]" {
		t.Fatalf("output transform %+v", r)
	}
	if !strings.Contains(string(res.Result), "Oslo") || !strings.Contains(logs.String(), "Tool payload transform failed") {
		t.Fatalf("raw result %s, logs %s", res.Result, logs.String())
	}
}

func TestSubAgentAndWorkflowTools(t *testing.T) {
	a, srv := newAgent(t, nil)
	helper := &agentcore.Agent{ID: "helper", Name: "Helper", Description: "Answers sub-questions.", Model: a.Model, Models: a.Models}
	a.Agents = map[string]*agentcore.Agent{"helper": helper}
	a.Workflows = map[string]*agentcore.Workflow{"double": {
		ID:           "double",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`),
		Steps: []agentcore.WorkflowStep{
			{ID: "twice", Execute: func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
				var v struct{ N float64 }
				_ = json.Unmarshal(in, &v)
				return json.Marshal(map[string]float64{"n": v.N * 2})
			}},
			{ID: "plus-one", Execute: func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
				var v struct{ N float64 }
				_ = json.Unmarshal(in, &v)
				return json.Marshal(map[string]float64{"n": v.N + 1})
			}},
		},
	}}
	srv.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w", Name: "workflow-double", Args: `{"n":20}`}}},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "s", Name: "agent-helper", Args: `{"prompt":"what is 41?"}`}}},
		scripted.Reply{Text: "sub answer: forty-one"}, // the helper's own model call
		scripted.Reply{Text: "done"},
	)
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	res := map[string]string{}
	for _, r := range find(events, agentcore.EventToolResult) {
		res[r.ToolName] = string(r.Result)
	}
	if !strings.Contains(res["workflow-double"], `"result":{"n":41}`) {
		t.Fatalf("workflow result %s", res["workflow-double"])
	}
	if res["agent-helper"] != `{"text":"sub answer: forty-one"}` {
		t.Fatalf("sub-agent result %s", res["agent-helper"])
	}
	names := map[string]bool{}
	for _, tl := range srv.Requests()[0].Tools {
		names[tl.Function.Name] = true
	}
	if !names["agent-helper"] || !names["workflow-double"] {
		t.Fatalf("tools offered %v", names)
	}
}

func TestCancelLeavesNoDanglingCall(t *testing.T) {
	started := make(chan struct{})
	slow := &agentcore.Tool{ID: "slow", Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	a, srv := newAgent(t, map[string]*agentcore.Tool{"slow": slow})
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "slow", Args: `{}`}}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var events []agentcore.Event
	for e := range a.Stream(ctx, []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("x")}}, agentcore.StreamOptions{}) {
		events = append(events, e)
	}
	res := find(events, agentcore.EventToolResult)
	if len(res) != 1 || !res[0].Cancelled || events[len(events)-1].Type != agentcore.EventAbort {
		t.Fatalf("events %s, result %+v", types(events), res)
	}

	// Cancelled while the model is still writing the arguments.
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c2", Name: "slow", Args: `{"a":"` + strings.Repeat("x", 200) + `"}`}}, ChunkSize: 4, Delay: 10 * time.Millisecond})
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	events = nil
	for e := range a.Stream(ctx, []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("x")}}, agentcore.StreamOptions{}) {
		events = append(events, e)
		if e.Type == agentcore.EventToolCallDelta && len(find(events, agentcore.EventToolCallDelta)) == 3 {
			cancel()
		}
	}
	res = find(events, agentcore.EventToolResult)
	if len(res) != 1 || res[0].ToolCallID != eventCallIDOf(t, events, "c2") || !res[0].Cancelled || events[len(events)-1].Type != agentcore.EventAbort {
		t.Fatalf("mid-input cancel: %s, %+v", types(events), res)
	}
}

func TestMaxSteps(t *testing.T) {
	a, srv := newAgent(t, map[string]*agentcore.Tool{"weather": weatherTool(nil)})
	a.MaxSteps = 2
	loop := scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "weather", Args: `{"city":"A"}`}}}
	srv.Push(loop, loop, loop)
	events := collectRun(a, agentcore.StreamOptions{}, "x")
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2", n)
	}
	fin := events[len(events)-1]
	if fin.Type != agentcore.EventFinish || fin.FinishReason != "tool-calls" {
		t.Fatalf("finish %+v", fin)
	}
}

func TestSchemaOf(t *testing.T) {
	got := string(agentcore.SchemaOf[weatherIn]())
	want := `{"additionalProperties":false,"properties":{"city":{"description":"City name","type":"string"},"unit":{"enum":["c","f"],"type":"string"}},"required":["city"],"type":"object"}`
	if got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
}
