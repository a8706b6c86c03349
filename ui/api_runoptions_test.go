package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
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
		{`"instructions":7`, `instructions must be a string, {"role": "system", "content": "…"} or a list of them`},
		{`"instructions":true`, "instructions must be a string"},
		{`"instructions":[{"role":"user","content":"hi"}]`, `instructions[0].role must be "system", not "user"`},
		{`"instructions":{"role":"` + strings.Repeat("r", 5000) + `","content":"hi"}`, `instructions.role must be "system", not "` + strings.Repeat("r", 39) + "…"},
		{`"instructions":{"content":"hi"}`, `instructions.role must be "system", not nothing`},
		{`"instructions":{"role":"system"}`, "instructions.content must be a string"},
		{`"instructions":{"role":"system","content":[{"type":"text","text":"hi"}]}`, "instructions.content must be a string"},
		{`"instructions":["ok",7]`, `instructions[1] must be a string or {"role": "system", "content": "…"}`},
		{`"instructions":[[["deep"]]]`, `instructions[0] must be a string or {"role": "system"`},
		{`"instructions":["a",null]`, `instructions[1] must be a string or {"role": "system"`},
		{`"instructions":{"role":"system","content":"x","providerOptions":"cache"}`, "instructions.providerOptions must be an object of provider names"},
		{`"instructions":{"role":"system","content":"x","providerOptions":[{"anthropic":{}}]}`, "instructions.providerOptions must be an object of provider names"},
		{`"instructions":{"role":"system","content":"x","providerOptions":{"anthropic":[]}}`, "instructions.providerOptions.anthropic must be an object"},
		{`"instructions":["a",{"role":"system","content":"x","providerOptions":{"anthropic":{"cacheControl":"yes"}}}]`,
			`instructions[1].providerOptions.anthropic.cacheControl must be {"type": "ephemeral"} or false`},
		{`"instructions":{"role":"system","content":"x","providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral","ttl":"1h"}}}}`,
			"instructions.providerOptions.anthropic.cacheControl.ttl is not supported"},
		{`"messages":["a","b",{"role":"user","content":"hi","providerOptions":{"anthropic":{"cacheControl":{"type":"persistent"}}}}]`,
			`messages[2].providerOptions.anthropic.cacheControl must be {"type": "ephemeral"} or false`},
		{`"messages":[{"role":"user","content":"hi","providerOptions":{"anthropic":{"cacheControl":true}}}]`,
			`messages[0].providerOptions.anthropic.cacheControl must be {"type": "ephemeral"} or false`},
		{`"messages":[{"role":"user","content":"hi","providerOptions":{"anthropic":{"cacheControl":{"type":{"ephemeral":1}}}}}]`,
			`messages[0].providerOptions.anthropic.cacheControl must be`},
		{`"messages":[{"role":"user","content":"hi","providerOptions":7}]`, "messages[0].providerOptions must be an object of provider names"},
		{`"messages":[{"role":"user","content":"hi","providerOptions":{"anthropic":"cache"}}]`, "messages[0].providerOptions.anthropic must be an object"},
		{`"modelSettings":"hot"`, "modelSettings must be an object"},
		{`"modelSettings":{"temperature":3}`, "modelSettings.temperature must be a number from 0 to 2"},
		{`"modelSettings":{"temperature":"warm"}`, "modelSettings.temperature must be a number"},
		{`"modelSettings":{"maxOutputTokens":0}`, "modelSettings.maxOutputTokens must be a whole number from 1 to 1000000"},
		{`"modelSettings":{"maxOutputTokens":1.5}`, "modelSettings.maxOutputTokens must be a whole number"},
		{`"modelSettings":{"topP":1.5}`, "modelSettings.topP must be a number from 0 to 1"},
		{`"modelSettings":{"topP":"high"}`, "modelSettings.topP must be a number from 0 to 1"},
		{`"modelSettings":{"topP":-0.1}`, "modelSettings.topP must be a number from 0 to 1"},
		{`"modelSettings":{"seed":7}`, "modelSettings.seed is not supported: Parley passes on temperature, maxOutputTokens and topP"},
		{`"providerOptions":"fast"`, "providerOptions must be an object of provider names"},
		{`"providerOptions":[1]`, "providerOptions must be an object of provider names"},
		{`"providerOptions":{"openai":"low"}`, "providerOptions.openai must be an object"},
		{`"providerOptions":{"openai":{"reasoningEffort":"extreme"}}`, `providerOptions.openai.reasoningEffort must be "none", "minimal"`},
		{`"providerOptions":{"openai":{"reasoningEffort":3}}`, `providerOptions.openai.reasoningEffort must be`},
		{`"providerOptions":{"openai":{"promptCacheKey":7}}`, "providerOptions.openai.promptCacheKey must be a string of 1 to 256 bytes"},
		{`"providerOptions":{"openai":{"promptCacheKey":"` + strings.Repeat("k", 300) + `"}}`, "providerOptions.openai.promptCacheKey must be a string of 1 to 256 bytes"},
		{`"providerOptions":{"anthropic":{"cacheControl":{"type":"persistent"}}}`, `providerOptions.anthropic.cacheControl must be {"type": "ephemeral"} or false`},
		{`"providerOptions":{"anthropic":{"cacheControl":true}}`, `providerOptions.anthropic.cacheControl must be`},
		{`"providerOptions":{"anthropic":{"cacheControl":{"type":"ephemeral","ttl":"1h"}}}`, "providerOptions.anthropic.cacheControl.ttl is not supported"},
		{`"providerOptions":{"anthropic":{"thinking":{"type":"enabled"}}}`, "providerOptions.anthropic.thinking.budgetTokens must be a whole number from 1024 to 128000"},
		{`"providerOptions":{"anthropic":{"thinking":{"type":"enabled","budgetTokens":1e30}}}`, "providerOptions.anthropic.thinking"},
		{`"providerOptions":{"anthropic":{"thinking":{"type":"enabled","budgetTokens":99999999}}}`, "providerOptions.anthropic.thinking.budgetTokens must be a whole number from 1024 to 128000"},
		{`"providerOptions":{"anthropic":{"thinking":"on"}}`, `providerOptions.anthropic.thinking must be {"type": "enabled"`},
		{`"providerOptions":{"anthropic":{"sendReasoning":"yes"}}`, "providerOptions.anthropic.sendReasoning must be true or false"},
		{`"providerOptions":{"google":{"thinkingConfig":{"thinkingBudget":"lots"}}}`, "providerOptions.google.thinkingConfig.thinkingBudget must be a whole number from -1 to 32768"},
		{`"providerOptions":{"google":{"thinkingConfig":{"thinkingBudget":4294967296}}}`, "providerOptions.google.thinkingConfig.thinkingBudget must be"},
		{`"providerOptions":{"google":{"thinkingConfig":[]}}`, "providerOptions.google.thinkingConfig must be an object"},
		{`"providerOptions":{"google":{"thinkingConfig":{"includeThoughts":1}}}`, "providerOptions.google.thinkingConfig.includeThoughts must be true or false"},
		{`"providerOptions":{"google":{"thinkingConfig":{"thinkingLevel":"max"}}}`, "providerOptions.google.thinkingConfig.thinkingLevel must be"},
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
					`"instructions":["You are terse.",{"role":"system","content":"Answer in French."}],"modelSettings":{"temperature":0.25,"maxOutputTokens":321,"topP":0.5}`+memory+`}`, http.StatusOK)
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
			if b := string(reqs[0].Body); !strings.Contains(b, `"temperature":0.25`) || !strings.Contains(b, `321`) || !strings.Contains(b, `"top_p":0.5`) {
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
		{`{"providerOptions":{"openai":{"reasoningEffort":true}}}`, "ifIdle.streamOptions: providerOptions.openai.reasoningEffort must be"},
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

// providerOptions and modelSettings.topP in a generate body reach the
// provider's request: openai.reasoningEffort as reasoning_effort,
// openai.promptCacheKey as prompt_cache_key; other providers' options and
// unknown keys are ignored, on a thread and without one.
func TestAPIProviderOptionsReachTheProvider(t *testing.T) {
	for _, memory := range []string{"", `,"memory":{"thread":"t-provider-options","resource":"u"}`} {
		t.Run(fmt.Sprintf("memory=%v", memory != ""), func(t *testing.T) {
			openaiServer := scripted.NewServer()
			t.Cleanup(openaiServer.Close)
			e := newAPIEnv(t, func(a *agentcore.Agent) {
				a.Model = "openai/gpt-5"
				a.Models = func(spec string) (llm.Model, error) {
					return llm.Open(spec, llm.Config{APIKeys: map[string]string{"openai": "k"}, BaseURLs: map[string]string{"openai": openaiServer.URL()},
						Getenv: func(string) string { return "" }, MaxRetries: -1})
				}
			})
			openaiServer.Push(scripted.Reply{Text: "Thought hard."})
			// (topP goes to the model too, but OpenAI's reasoning models
			// take none: fantasy leaves it out for them.)
			got := e.call("POST", "/api/agents/parley/generate", `{"messages":"think","modelSettings":{"topP":0.5},`+
				`"providerOptions":{"openai":{"reasoningEffort":"high","promptCacheKey":"my-key","serviceTier":"flex"},`+
				`"mistral":{"safePrompt":true},"anthropic":{"cacheControl":{"type":"ephemeral"},"unknown":[1,2]},"google":{"thinkingConfig":{"thinkingBudget":1024}}}`+memory+`}`, http.StatusOK)
			if got["text"] != "Thought hard." {
				t.Fatalf("text %q", got["text"])
			}
			reqs := openaiServer.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if body["reasoning_effort"] != "high" || body["prompt_cache_key"] != "my-key" {
				t.Errorf("reasoning_effort %v, prompt_cache_key %v: %s", body["reasoning_effort"], body["prompt_cache_key"], reqs[0].Body)
			}
			if _, ok := body["service_tier"]; ok {
				t.Errorf("an option Parley does not pass on went out: %s", reqs[0].Body)
			}
		})
	}
}
