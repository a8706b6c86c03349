package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// The differential test: the same scripted model turns run through the real
// @mastra/core Agent (mastraoracle/oracle.mjs, pinned by its package-lock)
// and through Parley, and the requests each sends the provider must agree
// on everything the model reads of the built-in tools: their definitions,
// what their calls return, and the messages around them. Instructions
// (the system prompt) are each product's own and are not compared, nor are
// the tools Mastra does not have.

// oracleDir holds the pinned @mastra/core, installed by `make mastra-oracle`.
const oracleDir = "mastraoracle"

// oracleCase is one conversation: the user's turns and the model's script.
type oracleCase struct {
	name     string
	tools    []string // Mastra's built-ins given to the agent
	signals  bool     // the agent tracks tasks as TaskSignalProvider does (the task lane)
	maxSteps int      // 0: the default (5)
	turns    []oracleTurn
	replies  []scripted.Reply
}

// oracleTurn is the user's: a message, or the answer to the suspended call.
type oracleTurn struct {
	Message string          `json:"message,omitempty"`
	Resume  json.RawMessage `json:"resume,omitempty"`
	// During is a message sent to the run while its first text streams.
	During *oracleDuring `json:"during,omitempty"`
}

// oracleDuring is a message for a running run: sent ("send", delivered to
// the run) or queued ("queue", a turn of its own after it).
type oracleDuring struct {
	Kind   string          `json:"kind"` // send, queue or signal
	Text   string          `json:"text,omitempty"`
	Signal json.RawMessage `json:"signal,omitempty"` // for signal: Mastra's AgentSignal
}

func userSays(texts ...string) []oracleTurn {
	turns := make([]oracleTurn, len(texts))
	for i, t := range texts {
		turns[i] = oracleTurn{Message: t}
	}
	return turns
}

func TestMastraOracle(t *testing.T) {
	node := findOracle(t)
	taskTools := []string{"task_write", "task_update", "task_complete", "task_check"}
	cases := []oracleCase{
		{
			name:  "task tools: write, update, complete, check",
			tools: taskTools, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"Read the code","status":"in_progress","activeForm":"Reading the code"},{"content":"Fix the bug","status":"pending","activeForm":"Fixing the bug"}]}`),
				call("task_update", `{"id":"task_fix_the_bug","status":"in_progress"}`),
				call("task_complete", `{"id":"task_read_the_code"}`),
				call("task_check", `{}`),
				{Text: "Done."},
			},
		},
		{
			name:  "ask_user: an open question, answered",
			tools: []string{"ask_user"},
			turns: []oracleTurn{{Message: "Pick a colour"}, {Resume: json.RawMessage(`"Teal, with a <b>tag</b>"`)}},
			replies: []scripted.Reply{
				call("ask_user", `{"question":"Which colour?"}`),
				{Text: "Teal it is."},
			},
		},
		{
			name:  "ask_user: multiple choice, answered",
			tools: []string{"ask_user"},
			turns: []oracleTurn{{Message: "Pick colours"}, {Resume: json.RawMessage(`["Red","Blue"]`)}},
			replies: []scripted.Reply{
				call("ask_user", `{"question":"Which colours?","options":[{"label":"Red"},{"label":"Blue","description":"calm"},{"label":"Green"}],"selectionMode":"multi_select"}`),
				{Text: "Red and blue."},
			},
		},
		{
			name:  "ask_user: skipped",
			tools: []string{"ask_user"},
			turns: []oracleTurn{{Message: "Pick a colour"}, {Resume: json.RawMessage(`"(skipped)"`)}},
			replies: []scripted.Reply{
				call("ask_user", `{"question":"Which colour?","options":[{"label":"Red"},{"label":"Blue"}]}`),
				{Text: "I will choose."},
			},
		},
		{
			name:  "submit_plan: approved",
			tools: []string{"submit_plan"},
			turns: []oracleTurn{{Message: "Plan the change"}, {Resume: json.RawMessage(`{"action":"approved"}`)}},
			replies: []scripted.Reply{
				call("submit_plan", `{"path":"plan.md"}`),
				{Text: "Starting."},
			},
		},
		{
			name:  "submit_plan: changes requested, then rejected",
			tools: []string{"submit_plan"},
			turns: []oracleTurn{
				{Message: "Plan the change"},
				{Resume: json.RawMessage(`{"action":"rejected","feedback":"Cover the <b>tests</b> too","path":".mastracode/plans/x.md","title":"X","plan":"Do X"}`)},
				{Resume: json.RawMessage(`{"action":"rejected"}`)},
			},
			replies: []scripted.Reply{
				call("submit_plan", `{"path":".mastracode/plans/x.md"}`),
				call("submit_plan", `{"path":".mastracode/plans/x.md"}`),
				{Text: "Waiting for your instructions."},
			},
		},
		{
			name:    "a message sent to the running run",
			turns:   []oracleTurn{{Message: "Write a long answer", During: &oracleDuring{Kind: "send", Text: "Also mention <b>tests</b>."}}},
			replies: []scripted.Reply{{Text: slowText, Delay: 15 * time.Millisecond}, {Text: "Noted, tests too."}},
		},
		{
			name: "a reactive signal sent to the running run",
			turns: []oracleTurn{{Message: "Write a long answer", During: &oracleDuring{Kind: "signal",
				Signal: json.RawMessage(`{"type":"reactive","tagName":"ci-result","contents":"Build 118 <failed>","attributes":{"status":"failed","attempt":2}}`)}}},
			replies: []scripted.Reply{{Text: slowText, Delay: 15 * time.Millisecond}, {Text: "I see the build failed."}},
		},
		{
			name:    "a message queued behind the running run",
			turns:   []oracleTurn{{Message: "Write a long answer", During: &oracleDuring{Kind: "queue", Text: "Then summarise it."}}},
			replies: []scripted.Reply{{Text: slowText, Delay: 15 * time.Millisecond}, {Text: "In short: done."}},
		},
		{
			name:  "task lane over two turns",
			tools: taskTools, signals: true,
			turns: userSays("Plan it", "Now finish it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"Read the code","status":"in_progress","activeForm":"Reading the code"},{"content":"Fix the bug","status":"pending","activeForm":"Fixing the bug"}]}`),
				{Text: "Planned."},
				call("task_complete", `{"id":"task_read_the_code"}`),
				call("task_update", `{"id":"task_fix_the_bug","status":"in_progress","content":"Fix the bug in main.go"}`),
				{Text: "Working on it."},
			},
		},
		{
			name:  "task lane over a six-step run",
			tools: taskTools, signals: true, maxSteps: 6,
			turns: userSays("Do it all"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"One","status":"in_progress","activeForm":"Doing one"},{"content":"Two","status":"pending","activeForm":"Doing two"},{"content":"Three","status":"pending","activeForm":"Doing three"}]}`),
				call("task_complete", `{"id":"task_one"}`),
				call("task_update", `{"id":"task_two","status":"in_progress"}`),
				call("task_write", `{"tasks":[{"id":"task_two","content":"Two","status":"completed","activeForm":"Doing two"},{"id":"task_three","content":"Three, renamed","status":"in_progress","activeForm":"Doing three"}]}`),
				call("task_check", `{}`),
				{Text: "All but three done."},
			},
		},
		{
			name:  "task tools: ids kept, reused and made unique",
			tools: taskTools, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"id":"dup","content":"First","status":"pending","activeForm":"Doing first"},{"id":"dup","content":"Second","status":"pending","activeForm":"Doing second"},{"content":"A very long task description that goes on well past the forty-eight characters a slug keeps","status":"pending","activeForm":"Going on"}]}`),
				call("task_write", `{"tasks":[{"content":"First","status":"completed","activeForm":"Doing first"},{"content":"Third","status":"in_progress","activeForm":"Doing third"}]}`),
				call("task_update", `{"id":"dup","status":"in_progress","activeForm":"Redoing first"}`),
				call("task_check", `{}`),
				{Text: "Done."},
			},
		},
		{
			name:  "task tools: unknown keys are stripped",
			tools: taskTools, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"Read the code","status":"pending","activeForm":"Reading the code","priority":"high"}],"note":"x"}`),
				call("task_update", `{"id":"task_read_the_code","status":"completed","owner":"me"}`),
				{Text: "Done."},
			},
		},
		{
			name:  "task tools: errors of the tools",
			tools: taskTools, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"A","status":"in_progress","activeForm":"Doing A"},{"content":"B","status":"in_progress","activeForm":"Doing B"}]}`),
				call("task_update", `{"id":"task_nope","status":"completed"}`),
				call("task_complete", `{"id":"task_nope"}`),
				call("task_check", `{}`),
				{Text: "Done."},
			},
		},
		{
			name:  "task tools: validation errors",
			tools: taskTools, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				call("task_write", `{"tasks":[{"content":"A","status":"started","activeForm":"Doing A"}]}`),
				call("task_write", `{"tasks":"none"}`),
				call("task_update", `{"id":"task_a"}`),
				call("task_complete", `{}`),
				{Text: "Done."},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := normalRequests(t, c, runOracle(t, node, c))
			got := normalRequests(t, c, runParley(t, c))
			if dir := os.Getenv("PARLEY_ORACLE_DUMP"); dir != "" {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				name := strings.NewReplacer(" ", "_", ":", "", ",", "").Replace(c.name)
				_ = os.WriteFile(filepath.Join(dir, name+".parley.json"), g, 0o644)
				_ = os.WriteFile(filepath.Join(dir, name+".mastra.json"), w, 0o644)
			}
			if len(got) != len(want) {
				t.Fatalf("Parley made %d provider requests, Mastra %d", len(got), len(want))
			}
			// The prompt-caching shape: each request is the one before with
			// more at its end (signals stay where they happened).
			for i := 1; i < len(got); i++ {
				prev, next := got[i-1].Messages, got[i].Messages
				if len(next) < len(prev) || !reflect.DeepEqual(next[:len(prev)], prev) {
					t.Fatalf("Parley's request %d is not request %d with more at its end", i+1, i)
				}
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					g, _ := json.MarshalIndent(got[i], "", "  ")
					w, _ := json.MarshalIndent(want[i], "", "  ")
					t.Fatalf("request %d differs:\nParley %s\nMastra %s", i, g, w)
				}
			}
		})
	}
}

// slowText streams for about a second at 15 ms a token: long enough for a
// message sent at its first token to arrive before it ends.
const slowText = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty."

func call(name, args string) scripted.Reply {
	return scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: name, Args: args}}}
}

// findOracle returns node, failing the test when it or the oracle's
// packages are missing.
func findOracle(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(oracleDir, "node_modules", "@mastra", "core", "package.json")); err != nil {
		t.Fatalf("@mastra/core is not installed (%v): run `make mastra-oracle`", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return node
}

// runOracle runs c through Mastra's Agent on a scripted model of its own
// and returns the requests it made.
func runOracle(t *testing.T, node string, c oracleCase) []scripted.Request {
	t.Helper()
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	model.Push(c.replies...)
	sc, err := json.Marshal(map[string]any{"baseURL": model.URL(), "tools": c.tools, "signals": c.signals, "turns": c.turns, "maxSteps": c.maxSteps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oracle.mjs")
	cmd.Dir = oracleDir
	cmd.Stdin = bytes.NewReader(sc)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MASTRA_TELEMETRY_DISABLED=1", "NO_COLOR=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Mastra oracle failed: %v\n%s", err, out)
	}
	return model.Requests()
}

// runParley runs c through Parley's API on its scripted model.
func runParley(t *testing.T, c oracleCase) []scripted.Request {
	t.Helper()
	p := startParley(t)
	p.Model.Push(c.replies...)
	id := p.newThread()
	runID := ""
	for _, turn := range c.turns {
		if turn.Resume != nil {
			body, _ := json.Marshal(map[string]any{"runId": runID, "resumeData": turn.Resume, "memory": map[string]string{"thread": id}})
			if code, out := p.postJSON(t, "/api/agents/parley/resume-stream", string(body)); code != 200 || !strings.Contains(out, `"type":"finish"`) {
				t.Fatalf("resume-stream: %d %s", code, out)
			}
			continue
		}
		if turn.During != nil {
			streamSending(t, p, id, turn)
			continue
		}
		req := map[string]any{"messages": turn.Message, "memory": map[string]string{"thread": id, "resource": "default"}}
		if c.maxSteps > 0 {
			req["maxSteps"] = c.maxSteps
		}
		body, _ := json.Marshal(req)
		code, out := p.postJSON(t, "/api/agents/parley/generate", string(body))
		if code != 200 {
			t.Fatalf("generate: %d %s", code, out)
		}
		var res struct {
			RunID string `json:"runId"`
		}
		_ = json.Unmarshal([]byte(out), &res)
		runID = res.RunID
	}
	// Every scripted reply is for a request: a queued turn may still be
	// on its way to the model.
	for deadline := time.Now().Add(10 * time.Second); len(p.Model.Requests()) < len(c.replies) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.In.Runtime.Wait(ctx, id); err != nil {
		t.Fatalf("the chat did not come to rest: %v", err)
	}
	return p.Model.Requests()
}

// streamSending streams turn's message on thread id and, at its first text
// delta, sends or queues turn.During to the run, as a client would; it
// returns once the thread is idle again.
func streamSending(t *testing.T, p *parley, id string, turn oracleTurn) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"messages": turn.Message, "memory": map[string]string{"thread": id, "resource": "default"}})
	resp, err := http.Post(p.URL+"/api/agents/parley/stream", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sent := false
	for sc.Scan() {
		if !sent && strings.Contains(sc.Text(), `"type":"text-delta"`) {
			sent = true
			route := map[string]string{"send": "send-message", "queue": "queue-message", "signal": "signals"}[turn.During.Kind]
			msg, _ := json.Marshal(map[string]any{"message": turn.During.Text, "resourceId": "default", "threadId": id})
			if turn.During.Kind == "signal" {
				msg, _ = json.Marshal(map[string]any{"signal": turn.During.Signal, "resourceId": "default", "threadId": id})
			}
			if code, out := p.postJSON(t, "/api/agents/parley/"+route, string(msg)); code != 200 {
				t.Fatalf("%s: %d %s", route, code, out)
			}
		}
	}
	// A queued message starts a run of its own once this one has ended.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.In.Runtime.Wait(ctx, id); err != nil {
		t.Fatalf("the thread did not come to rest: %v", err)
	}
}

// normalRequest is what the comparison sees of one provider request.
type normalRequest struct {
	Tools    map[string]any `json:"tools"`
	Messages []any          `json:"messages"`
}

// normalRequests keeps of each request the definitions of c's tools and
// the messages after the system prompt, with tool-call ids numbered in the
// order they appear and JSON texts parsed.
func normalRequests(t *testing.T, c oracleCase, reqs []scripted.Request) []normalRequest {
	t.Helper()
	ids := map[string]string{}
	callID := func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("call#%d", len(ids)+1)
		}
		return ids[id]
	}
	var out []normalRequest
	for _, r := range reqs {
		r.Body = []byte(deviations.Replace(string(r.Body)))
		var body struct {
			Messages []map[string]any `json:"messages"`
			Tools    []struct {
				Function struct {
					Name        string         `json:"name"`
					Description string         `json:"description"`
					Parameters  map[string]any `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		n := normalRequest{Tools: map[string]any{}}
		for _, tool := range body.Tools {
			if f := tool.Function; slices.Contains(c.tools, f.Name) {
				delete(f.Parameters, "$schema")
				n.Tools[f.Name] = map[string]any{"description": f.Description, "parameters": f.Parameters}
			}
		}
		for _, m := range body.Messages {
			if m["role"] == "system" {
				continue
			}
			nm := map[string]any{"role": m["role"], "content": jsonOrText(m["content"])}
			if id, ok := m["tool_call_id"].(string); ok {
				nm["tool_call_id"] = callID(id)
			}
			if calls, ok := m["tool_calls"].([]any); ok {
				var ncalls []any
				for _, raw := range calls {
					tc := raw.(map[string]any)
					f := tc["function"].(map[string]any)
					ncalls = append(ncalls, map[string]any{"id": callID(tc["id"].(string)), "name": f["name"], "arguments": jsonOrText(f["arguments"])})
				}
				nm["tool_calls"] = ncalls
			}
			n.Messages = append(n.Messages, nm)
		}
		out = append(out, n)
	}
	return out
}

// deviations are where Parley differs from Mastra on purpose, as Mastra's
// text is rewritten before the comparison: plans live in .parley/plans, not
// .mastracode/plans.
var deviations = strings.NewReplacer(".mastracode/plans", ".parley/plans")

// generatedTime matches the times a tool result may carry.
var generatedTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// jsonOrText parses a JSON text (a tool result, call arguments) so that
// key order and spacing do not count; other text is kept, "" for none.
func jsonOrText(v any) any {
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return ""
		}
		return v
	}
	s = generatedTime.ReplaceAllString(s, "<time>")
	var parsed any
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &parsed) == nil {
		return parsed
	}
	return s
}

// The stream's chunks, as Mastra's agent stream and Parley's
// /api/agents/:id/stream send them for the same model turns: the same
// chunk types in the same order, each with the same payload fields, up to
// the deviations named in streamDeviation.
func TestMastraOracleStream(t *testing.T) {
	node := findOracle(t)
	for _, c := range []oracleCase{
		{
			name: "text", turns: userSays("Hello"),
			replies: []scripted.Reply{{Text: "Hello there, how can I help?"}},
		},
		{
			name: "text, a task list, then a question", tools: []string{"task_write", "ask_user"}, signals: true,
			turns: userSays("Plan it"),
			replies: []scripted.Reply{
				{Text: "Let me plan.", ToolCalls: []scripted.ToolCall{{Name: "task_write", Args: `{"tasks":[{"content":"A","status":"pending","activeForm":"Doing A"}]}`}}},
				call("ask_user", `{"question":"Which one?","options":[{"label":"A"},{"label":"B"}]}`),
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := mastraChunks(t, node, c)
			got := parleyChunks(t, c)
			if !slices.Equal(got, want) {
				t.Fatalf("chunks differ:\nParley %s\nMastra %s", strings.Join(got, "\n       "), strings.Join(want, "\n       "))
			}
		})
	}
}

// streamDeviation drops what Parley leaves out or adds on purpose, and
// says what remains of a chunk: its type and payload fields.
//   - step-start: Mastra echoes the provider request; Parley adds stepNumber.
//   - step-finish and finish: Mastra adds the step's messages in the AI
//     SDK's form, the provider's response and metadata (headers included).
//   - after a suspended call Parley ends the step and the run (step-finish,
//     finish "suspended"); Mastra's stream just ends.
func streamDeviation(chunks []map[string]any) []string {
	var out []string
	suspended := false
	for _, c := range chunks {
		typ, _ := c["type"].(string)
		p, _ := c["payload"].(map[string]any)
		switch {
		case suspended && (typ == "step-finish" || typ == "finish"):
			continue
		case typ == "tool-call-suspended":
			suspended = true
		}
		var keys []string
		for k := range p {
			if typ == "step-start" && (k == "request" || k == "stepNumber") ||
				(typ == "step-finish" || typ == "finish") && (k == "messages" || k == "metadata" || k == "response") {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		line := typ + " " + strings.Join(keys, ",")
		if rs, ok := p["resumeSchema"].(string); ok { // its text is what a client parses
			line += " resumeSchema=" + rs
		}
		if d, ok := c["data"].(map[string]any); ok { // a signal: what a client shows of it
			attrs, _ := json.Marshal(d["attributes"])
			line += fmt.Sprintf(" %v transient=%v %s tag=%v %q", d["type"], c["transient"], attrs, d["tagName"], d["contents"])
		}
		out = append(out, line)
	}
	return out
}

func mastraChunks(t *testing.T, node string, c oracleCase) []string {
	t.Helper()
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	model.Push(c.replies...)
	sc, err := json.Marshal(map[string]any{"baseURL": model.URL(), "tools": c.tools, "signals": c.signals, "turns": c.turns, "stream": true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oracle.mjs")
	cmd.Dir = oracleDir
	cmd.Stdin = bytes.NewReader(sc)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MASTRA_TELEMETRY_DISABLED=1", "NO_COLOR=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Mastra oracle failed: %v\n%s", err, out)
	}
	var chunks []map[string]any
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "CHUNK "); ok {
			var ch map[string]any
			if err := json.Unmarshal([]byte(rest), &ch); err != nil {
				t.Fatalf("oracle chunk %q: %v", rest, err)
			}
			chunks = append(chunks, ch)
		}
	}
	return streamDeviation(chunks)
}

func parleyChunks(t *testing.T, c oracleCase) []string {
	t.Helper()
	p := startParley(t)
	p.Model.Push(c.replies...)
	id := p.newThread()
	var chunks []map[string]any
	for _, turn := range c.turns {
		body, _ := json.Marshal(map[string]any{"messages": turn.Message, "memory": map[string]string{"thread": id, "resource": "default"}})
		code, out := p.postJSON(t, "/api/agents/parley/stream", string(body))
		if code != 200 {
			t.Fatalf("stream: %d %s", code, out)
		}
		for line := range strings.Lines(out) {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			if !ok || rest == "[DONE]" {
				continue
			}
			var ch map[string]any
			if err := json.Unmarshal([]byte(rest), &ch); err != nil {
				t.Fatalf("chunk %q: %v", rest, err)
			}
			chunks = append(chunks, ch)
		}
	}
	return streamDeviation(chunks)
}
