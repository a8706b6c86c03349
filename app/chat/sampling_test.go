package chat

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
)

func f(v float64) *float64 { return &v }

// Hostile and out-of-range form values are refused with the field and the
// limit named; nothing is parsed from them.
func TestParseSamplingHostile(t *testing.T) {
	for _, c := range []struct{ temp, max, topP, model, want string }{
		{"NaN", "", "", "openai/gpt-5", "temperature must be a number"},
		{"nan", "", "", "openai/gpt-5", "temperature must be a number"},
		{"1e999", "", "", "openai/gpt-5", "temperature must be a number"},
		{"Inf", "", "", "openai/gpt-5", "temperature must be a number"},
		{"-0.1", "", "", "openai/gpt-5", "temperature must be a number from 0 to 2 for openai/gpt-5"},
		{"2.5", "", "", "openrouter/openai/gpt-5", "temperature must be a number from 0 to 2"},
		{"1.5", "", "", "anthropic/claude-sonnet-4-5", "temperature must be a number from 0 to 1 for anthropic/claude-sonnet-4-5"},
		{"<script>alert(1)</script>", "", "", "openai/gpt-5", "temperature must be a number"},
		{strings.Repeat("1", 5000), "", "", "openai/gpt-5", "temperature must be a number"},
		{"0x1p-2", "", "", "openai/gpt-5", ""}, // Go reads hex floats: 0.25, within limits
		{"", "0", "", "openai/gpt-5", "max output tokens must be a whole number from 1 to 128000"},
		{"", "-5", "", "openai/gpt-5", "max output tokens must be a whole number from 1 to 128000"},
		{"", "1.5", "", "openai/gpt-5", "max output tokens must be a whole number"},
		{"", "1e999", "", "openai/gpt-5", "max output tokens must be a whole number"},
		{"", "99999999999999999999999", "", "openai/gpt-5", "max output tokens must be a whole number"},
		{"", "128001", "", "openai/gpt-5", "max output tokens must be a whole number from 1 to 128000 (openai/gpt-5's output limit)"},
		{"", "64001", "", "anthropic/claude-sonnet-4-5", "from 1 to 64000 (anthropic/claude-sonnet-4-5's output limit)"},
		{"", "1000001", "", "ollama/llama3", "max output tokens must be a whole number from 1 to 1000000"},
		{"", "<b>9</b>", "", "openai/gpt-5", "max output tokens must be a whole number"},
		{"", "", "1.01", "openai/gpt-5", "top-p must be a number from 0 to 1"},
		{"", "", "-1", "openai/gpt-5", "top-p must be a number from 0 to 1"},
		{"", "", "NaN", "openai/gpt-5", "top-p must be a number"},
		{"", "", "1e999", "openai/gpt-5", "top-p must be a number"},
	} {
		s, err := ParseSampling(c.temp, c.max, c.topP, c.model)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q %q %q: %v", clip(c.temp, 20), c.max, c.topP, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q %q for %s: error %v, want %q", clip(c.temp, 20), clip(c.max, 20), c.topP, c.model, err, c.want)
		}
		if !s.IsZero() {
			t.Errorf("%q %q %q: parsed %+v from a refused form", clip(c.temp, 20), c.max, c.topP, s)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("the error repeats the input: %d bytes", len(err.Error()))
		}
	}
	s, err := ParseSampling(" 0.7 ", "2048", "0.9", "anthropic/claude-sonnet-4-5")
	if err != nil || *s.Temperature != 0.7 || s.MaxOutputTokens != 2048 || *s.TopP != 0.9 {
		t.Fatalf("%+v, %v", s, err)
	}
	if s, err := ParseSampling("", "", "", "openai/gpt-5"); err != nil || !s.IsZero() {
		t.Fatalf("an empty form: %+v, %v", s, err)
	}
	// Check refuses what a caller built by hand, NaN included.
	for _, s := range []Sampling{{Temperature: f(math.NaN())}, {TopP: f(math.NaN())}, {MaxOutputTokens: -1}, {Temperature: f(math.Inf(1))}} {
		if s.Check("openai/gpt-5") == nil {
			t.Errorf("%+v passed", s)
		}
	}
}

// The chat's own setting wins over the model's default, which wins over
// nothing; a stored value beyond the current model's limit is not sent.
func TestSamplingResolution(t *testing.T) {
	chats, db := newChats(t)
	defs := NewModelDefaults(db)
	ctx := t.Context()
	const model = "anthropic/claude-sonnet-4-5"
	if err := defs.Set(ctx, model, Sampling{Temperature: f(0.2), MaxOutputTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	id := newThread(t, db, nil)
	if err := chats.SetSampling(ctx, id, model, Sampling{Temperature: f(0.9)}); err != nil {
		t.Fatal(err)
	}
	prepare := defs.WithDefaults(Prepare(&agentcore.Agent{ID: "a"}, testWorkspaces(t)))
	run := func(model string) agentcore.StreamOptions {
		th, err := db.GetThread(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		opts := agentcore.StreamOptions{Model: model}
		prepare(th, &opts)
		return opts
	}
	opts := run(model)
	if opts.Temperature == nil || *opts.Temperature != 0.9 || opts.MaxOutputTokens != 1000 || opts.TopP != nil {
		t.Fatalf("chat 0.9 over the model's 0.2 and 1000 tokens, no top-p: got %v %d %v", deref(opts.Temperature), opts.MaxOutputTokens, deref(opts.TopP))
	}
	// Another model has no defaults: only the chat's.
	opts = run("openai/gpt-5")
	if deref(opts.Temperature) != "0.9" || opts.MaxOutputTokens != 0 || opts.TopP != nil {
		t.Fatalf("on gpt-5: %v %d %v", deref(opts.Temperature), opts.MaxOutputTokens, deref(opts.TopP))
	}
	// A chat value beyond the model's limit (set for gpt-5, which takes 2)
	// is left to the provider rather than sent to Anthropic.
	if err := chats.SetSampling(ctx, id, "openai/gpt-5", Sampling{Temperature: f(1.5), TopP: f(0.5)}); err != nil {
		t.Fatal(err)
	}
	opts = run(model)
	if deref(opts.Temperature) != "0.2" || deref(opts.TopP) != "0.5" {
		t.Fatalf("1.5 on Anthropic: got %v (want the model's 0.2), top-p %v", deref(opts.Temperature), deref(opts.TopP))
	}
	// Clearing the chat's leaves the model's; clearing those, nothing.
	if err := chats.SetSampling(ctx, id, model, Sampling{}); err != nil {
		t.Fatal(err)
	}
	if err := defs.Set(ctx, model, Sampling{}); err != nil {
		t.Fatal(err)
	}
	if opts = run(model); opts.Temperature != nil || opts.MaxOutputTokens != 0 || opts.TopP != nil {
		t.Fatalf("nothing set, yet %v %d %v", deref(opts.Temperature), opts.MaxOutputTokens, deref(opts.TopP))
	}
	if th, _ := db.GetThread(ctx, id); len(th.Metadata) != 0 {
		t.Errorf("cleared settings left %v", th.Metadata)
	}
	// Refused values store nothing.
	if err := chats.SetSampling(ctx, id, model, Sampling{Temperature: f(1.5)}); err == nil {
		t.Error("1.5 for Anthropic was stored")
	}
	if err := defs.Set(ctx, model, Sampling{MaxOutputTokens: 1 << 40}); err == nil {
		t.Error("2^40 tokens were stored")
	}
	for _, m := range []string{"", "nomodel", strings.Repeat("a/", 200), "a/b\x00c", "a/b\nc"} {
		if err := defs.Set(ctx, m, Sampling{TopP: f(0.5)}); err == nil {
			t.Errorf("defaults stored for model %q", clip(m, 20))
		}
	}
	if all, err := defs.All(ctx); err != nil || len(all) != 0 {
		t.Errorf("refused defaults stored: %v, %v", all, err)
	}
	if th, _ := db.GetThread(ctx, id); len(th.Metadata) != 0 {
		t.Errorf("refused settings stored: %v", th.Metadata)
	}
}

func deref(v *float64) string {
	if v == nil {
		return "unset"
	}
	return FormValue(v)
}

// A chat's settings round-trip through the metadata as JSON keeps it, and
// odd stored values read as unset.
func TestSamplingMetadata(t *testing.T) {
	meta := map[string]any{}
	encode(meta, Settings{}, Settings{Sampling: Sampling{Temperature: f(0), MaxOutputTokens: 512, TopP: f(1)}})
	b, _ := json.Marshal(meta)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	s := decode(back).Sampling
	if deref(s.Temperature) != "0" || s.MaxOutputTokens != 512 || deref(s.TopP) != "1" {
		t.Fatalf("read back %+v from %s", s, b)
	}
	for _, odd := range []map[string]any{
		{keyTemperature: "hot", keyMaxTokens: "many", keyTopP: true},
		{keyTemperature: -1.0, keyMaxTokens: 1.5, keyTopP: 7.0},
		{keyTemperature: math.NaN(), keyMaxTokens: 1e30, keyTopP: math.Inf(1)},
	} {
		if s := decode(odd).Sampling; !s.IsZero() {
			t.Errorf("%v reads as %+v", odd, s)
		}
	}
}

// The provider request of a chat's run carries its temperature, max
// output tokens and top-p (the model's defaults filling what it leaves);
// a run's own settings (the API's modelSettings) win over both.
func TestSamplingReachesTheProvider(t *testing.T) {
	const model = "openai-compatible/x"
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	chats, db := newChats(t)
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, APIKeys: map[string]string{"openai-compatible": "k"},
		Getenv: func(string) string { return "" }, MaxRetries: -1}
	agent := &agentcore.Agent{ID: "a", Name: "A", Model: model, Instructions: agentcore.Text("Be brief."),
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }}
	rt := agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(rt.Close)
	defs := NewModelDefaults(db)
	rt.Prepare = defs.WithDefaults(Prepare(agent, testWorkspaces(t)))
	ctx := t.Context()
	if err := defs.Set(ctx, model, Sampling{TopP: f(0.8), MaxOutputTokens: 999}); err != nil {
		t.Fatal(err)
	}
	th, err := rt.CreateThread(ctx, agentcore.Thread{ResourceID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if err := chats.SetSampling(ctx, th.ID, model, Sampling{Temperature: f(0.35), MaxOutputTokens: 777}); err != nil {
		t.Fatal(err)
	}
	send := func(o agentcore.RunOptions) map[string]any {
		t.Helper()
		n := len(srv.Requests())
		srv.Push(scripted.Reply{Text: "ok"})
		if _, err := rt.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "hi", Options: o}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, live := rt.Live(th.ID); !live && len(srv.Requests()) > n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the run did not end")
			}
			time.Sleep(10 * time.Millisecond)
		}
		var body map[string]any
		if err := json.Unmarshal(srv.Requests()[n].Body, &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	body := send(agentcore.RunOptions{})
	if got := fmt.Sprint(body["temperature"], " ", body["max_tokens"], " ", body["top_p"]); got != "0.35 777 0.8" {
		t.Errorf("temperature, max_tokens, top_p = %s, want the chat's 0.35 and 777 and the model's 0.8", got)
	}
	body = send(agentcore.RunOptions{Temperature: f(1.25), TopP: f(0.1), MaxOutputTokens: 55})
	if got := fmt.Sprint(body["temperature"], " ", body["max_tokens"], " ", body["top_p"]); got != "1.25 55 0.1" {
		t.Errorf("with the run's own settings: %s, want 1.25 55 0.1", got)
	}
}
