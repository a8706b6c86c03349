package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"parley/agentcore/scripted"
)

// Run options in a generate body that cannot be honoured are refused with
// a 400 naming them, before anything is stored or the model is asked.
func TestAPIRunOptionsHostile(t *testing.T) {
	e := newAPIEnv(t, withTools)
	for _, c := range []struct{ body, msg string }{
		{`"maxSteps":0`, "maxSteps must be between 1 and 100, not 0"},
		{`"maxSteps":-3`, "maxSteps must be between 1 and 100, not -3"},
		{`"maxSteps":1000000`, "maxSteps must be between 1 and 100"},
		{`"maxSteps":"five"`, "maxSteps must be"},
		{`"maxSteps":2.5`, "maxSteps must be"},
		{`"toolChoice":"always"`, `toolChoice must be "auto", "none", "required" or {"type": "tool"`},
		{`"toolChoice":{"type":"tool","toolName":"rm -rf /"}`, `toolChoice names "rm -rf /", which is not one of the agent's tools`},
		{`"toolChoice":{"type":"function"}`, `toolChoice must be`},
		{`"toolChoice":7`, `toolChoice must be`},
		{`"activeTools":["weather","<script>"]`, `activeTools names "<script>", which is not one of the agent's tools`},
		{`"activeTools":"weather"`, "activeTools must be"},
		{`"instructions":7`, "instructions must be a string"},
		{`"instructions":[{"role":"user","content":"hi"}]`, "instructions must be a string"},
		{`"modelSettings":"hot"`, "modelSettings must be an object"},
		{`"modelSettings":{"temperature":3}`, "modelSettings.temperature must be a number from 0 to 2"},
		{`"modelSettings":{"temperature":"warm"}`, "modelSettings.temperature must be a number"},
		{`"modelSettings":{"maxOutputTokens":0}`, "modelSettings.maxOutputTokens must be a whole number from 1 to 1000000"},
		{`"modelSettings":{"maxOutputTokens":1.5}`, "modelSettings.maxOutputTokens must be a whole number"},
		{`"modelSettings":{"topP":0.9}`, "modelSettings.topP is not supported: Parley passes on temperature and maxOutputTokens"},
		{`"modelSettings":{"` + strings.Repeat("k", 5000) + `":1}`, "modelSettings." + strings.Repeat("k", 40) + "… is not supported"},
	} {
		for _, memory := range []string{"", `,"memory":{"thread":"t-opts","resource":"u"}`} {
			got := e.call("POST", "/api/agents/parley/generate", `{"messages":"hi",`+c.body+memory+`}`, http.StatusBadRequest)
			if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("%s%s: error %q, want it to say %q", c.body, memory, msg, c.msg)
			}
		}
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("%d model requests for refused bodies", n)
	}
}

// maxSteps, toolChoice and activeTools reach the model, on a thread and
// without one.
func TestAPIRunOptions(t *testing.T) {
	for _, memory := range []string{"", `,"memory":{"thread":"t-run-options","resource":"u"}`} {
		t.Run(fmt.Sprintf("memory=%v", memory != ""), func(t *testing.T) {
			e := newAPIEnv(t, withTools)
			// Seven steps of tool calls, then text: the agent's five would stop early.
			for range 6 {
				e.model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "weather", Args: `{"city":"Oslo"}`}}})
			}
			e.model.Push(scripted.Reply{Text: "Done after seven."})
			got := e.call("POST", "/api/agents/parley/generate",
				`{"messages":"go","maxSteps":7,"toolChoice":{"type":"tool","toolName":"weather"},"activeTools":["weather","lookup"],`+
					`"instructions":["You are terse.",{"role":"system","content":"Answer in French."}],"modelSettings":{"temperature":0.25,"maxOutputTokens":321}`+memory+`}`, http.StatusOK)
			if got["text"] != "Done after seven." {
				t.Fatalf("text %q, want the seventh step's", got["text"])
			}
			reqs := e.model.Requests()
			if len(reqs) != 7 {
				t.Fatalf("%d model calls, want 7", len(reqs))
			}
			// The call's instructions replace the agent's ("Be brief.").
			var system []string
			for _, m := range reqs[0].Messages {
				if m.Role == "system" {
					system = append(system, m.Content)
				}
			}
			if !slices.Equal(system, []string{"You are terse.", "Answer in French."}) {
				t.Errorf("system messages %q, want the call's instructions instead of the agent's", system)
			}
			if b := string(reqs[0].Body); !strings.Contains(b, `"temperature":0.25`) || !strings.Contains(b, `321`) {
				t.Errorf("the model settings did not reach the model: %s", b)
			}
			var body struct {
				ToolChoice json.RawMessage `json:"tool_choice"`
			}
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body.ToolChoice), `"weather"`) {
				t.Errorf("tool_choice %s, want the weather tool", body.ToolChoice)
			}
			var offered []string
			for _, tool := range reqs[0].Tools {
				offered = append(offered, tool.Function.Name)
			}
			slices.Sort(offered)
			if !slices.Equal(offered, []string{"lookup", "weather"}) {
				t.Errorf("tools offered %v, want only the active ones", offered)
			}
		})
	}
}

// A message that wakes an idle thread starts its run with ifIdle's
// streamOptions, as generate's options; a bad one is a 400 naming it.
func TestAPIIfIdleStreamOptions(t *testing.T) {
	e := newAPIEnv(t, withTools)
	e.call("POST", "/api/memory/threads", `{"threadId":"t-idle-opts","resourceId":"u"}`, http.StatusOK)
	for _, c := range []struct{ opts, msg string }{
		{`{"maxSteps":0}`, "ifIdle.streamOptions: maxSteps must be between 1 and 100, not 0"},
		{`{"modelSettings":{"seed":7}}`, "ifIdle.streamOptions: modelSettings.seed is not supported"},
		{`{"activeTools":["nope"]}`, `ifIdle.streamOptions: activeTools names "nope"`},
	} {
		got := e.call("POST", "/api/agents/parley/send-message",
			`{"message":"hi","resourceId":"u","threadId":"t-idle-opts","ifIdle":{"streamOptions":`+c.opts+`}}`, http.StatusBadRequest)
		if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
			t.Errorf("%s: error %q, want %q", c.opts, msg, c.msg)
		}
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("%d model requests for refused messages", n)
	}
	e.model.Push(scripted.Reply{Text: "Woken."})
	e.call("POST", "/api/agents/parley/send-message",
		`{"message":"wake up","resourceId":"u","threadId":"t-idle-opts","ifIdle":{"behavior":"wake","streamOptions":{"instructions":"Speak like a pirate.","modelSettings":{"temperature":0.75}}}}`, http.StatusOK)
	if err := e.rt.Wait(t.Context(), "t-idle-opts"); err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want the woken run's one", len(reqs))
	}
	if b := string(reqs[0].Body); !strings.Contains(b, `"temperature":0.75`) || !strings.Contains(b, "Speak like a pirate.") || strings.Contains(b, "Be brief.") {
		t.Errorf("the woken run did not take ifIdle's stream options: %s", b)
	}
}
