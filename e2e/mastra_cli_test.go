package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// mastraCLI is the real mastra CLI, pinned by mastracli/package-lock.json
// and installed by `make mastra-cli`.
const mastraCLI = "mastracli/node_modules/.bin/mastra"

// cliTimeout bounds one CLI command (node loads a large bundle first).
const cliTimeout = time.Minute

// mastraCmd runs `mastra api --url <parley> args…`. It returns the decoded
// JSON of stdout on success, or of stderr (the CLI's error envelope) with
// ok false when the command exits non-zero.
type mastraCmd func(t *testing.T, args ...string) (out map[string]any, ok bool)

// findMastraCLI returns node and the CLI's script, failing the test when
// either is missing.
func findMastraCLI(t *testing.T) (node, bin string) {
	bin, err := filepath.Abs(mastraCLI)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		t.Fatalf("the mastra CLI is not installed (%v): run `make mastra-cli`", err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (the mastra CLI needs it): %v", err)
	}
	return node, bin
}

// mastraCLIFor runs the CLI against the Parley at url with its token, as a
// user does: --header "Authorization: Bearer <token>".
func mastraCLIFor(t *testing.T, node, bin, url string) mastraCmd {
	tok, ok := tokens.Load(strings.TrimPrefix(url, "http://"))
	if !ok {
		t.Fatalf("no token known for %s", url)
	}
	return mastraCLIWith(t, node, bin, url, "--header", "Authorization: Bearer "+tok.(string))
}

// mastraCLIWith runs the CLI against url with the flags given.
func mastraCLIWith(t *testing.T, node, bin, url string, flags ...string) mastraCmd {
	home := t.TempDir()
	return func(t *testing.T, args ...string) (map[string]any, bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append(append([]string{bin, "api", "--url", url}, flags...), args...)...)
		cmd.Dir = home
		// No telemetry, no config of the user running the tests.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MASTRA_TELEMETRY_DISABLED=1", "NO_COLOR=1"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("mastra %v: %v\n%s", args, err, stderr.Bytes())
		}
		raw := stdout.Bytes()
		if err != nil {
			raw = stderr.Bytes()
		}
		var out map[string]any
		if jerr := json.Unmarshal(raw, &out); jerr != nil {
			t.Fatalf("mastra %v: output is not JSON (%v):\nstdout %s\nstderr %s", args, jerr, stdout.Bytes(), stderr.Bytes())
		}
		t.Logf("mastra %v → %s", args, bytes.TrimSpace(raw))
		return out, err == nil
	}
}

// at walks a decoded JSON value: at(v, "data", 0, "id").
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// The mastra CLI, as an external client, lists and reads the agent, runs it
// with and without memory, and manages threads and their messages.
func TestMastraCLI(t *testing.T) {
	node, bin := findMastraCLI(t)
	p := startParley(t)
	mastra := mastraCLIFor(t, node, bin, p.URL)
	must := func(args ...string) map[string]any {
		t.Helper()
		out, ok := mastra(t, args...)
		if !ok {
			t.Fatalf("mastra %v failed: %v", args, out)
		}
		return out
	}
	expect := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}

	list := must("agent", "list")
	expect("agent list: id", at(list, "data", 0, "id"), "parley")
	expect("agent list: name", at(list, "data", 0, "name"), "Parley")
	expect("agent list: provider", at(list, "data", 0, "provider"), "demo")
	expect("agent list: modelId", at(list, "data", 0, "modelId"), "scripted")
	expect("agent list: total", at(list, "page", "total"), 1.0)

	agent := must("agent", "get", "parley")
	expect("agent get: name", at(agent, "data", "name"), "Parley")
	if s, _ := at(agent, "data", "instructions").(string); s == "" {
		t.Errorf("agent get: no instructions: %v", agent)
	}

	thread := must("thread", "create", `{"resourceId":"cli-user","threadId":"cli_thread","title":"From the CLI"}`)
	expect("thread create: id", at(thread, "data", "id"), "cli_thread")
	expect("thread create: resourceId", at(thread, "data", "resourceId"), "cli-user")
	expect("thread create: title", at(thread, "data", "title"), "From the CLI")

	p.Model.Push(scripted.Reply{Text: "Hello, CLI."})
	run := must("agent", "run", "parley", `{"messages":"Hello from the CLI","memory":{"thread":"cli_thread","resource":"cli-user"}}`)
	expect("agent run: text", at(run, "data", "text"), "Hello, CLI.")
	expect("agent run: finishReason", at(run, "data", "finishReason"), "stop")
	if id, _ := at(run, "data", "runId").(string); id == "" {
		t.Errorf("agent run: no runId: %v", run)
	}
	if n, _ := at(run, "data", "usage", "totalTokens").(float64); n <= 0 {
		t.Errorf("agent run: no usage: %v", run)
	}

	p.Model.Push(scripted.Reply{Text: "Nothing remembered."})
	free := must("agent", "run", "parley", `{"messages":"Answer without memory"}`)
	expect("agent run without memory: text", at(free, "data", "text"), "Nothing remembered.")
	threads, err := p.In.Store.ListThreads(t.Context(), agentcore.ThreadQuery{})
	if err != nil || len(threads) != 1 {
		t.Errorf("threads after both runs: %v (%v), want only cli_thread", threads, err)
	}

	mine := must("thread", "list", `{"resourceId":"cli-user","agentId":"parley"}`)
	expect("thread list: id", at(mine, "data", 0, "id"), "cli_thread")
	expect("thread list: total", at(mine, "page", "total"), 1.0)
	expect("thread get: title", at(must("thread", "get", "cli_thread"), "data", "title"), "From the CLI")

	msgs := must("thread", "messages", "cli_thread")
	expect("thread messages: total", at(msgs, "page", "total"), 2.0)
	for i, want := range []struct{ role, text string }{{"user", "Hello from the CLI"}, {"assistant", "Hello, CLI."}} {
		m := at(msgs, "data", i)
		expect("message role", at(m, "role"), want.role)
		expect("message text", at(m, "content", "parts", 0, "text"), want.text)
		expect("message format", at(m, "content", "format"), 2.0)
		expect("message type", at(m, "type"), "v2")
		expect("message threadId", at(m, "threadId"), "cli_thread")
	}

	renamed := must("thread", "update", "cli_thread", `{"title":"Renamed by the CLI"}`)
	expect("thread update: title", at(renamed, "data", "title"), "Renamed by the CLI")

	missing, ok := mastra(t, "agent", "get", "nope")
	if ok {
		t.Errorf("agent get nope succeeded: %v", missing)
	}
	expect("agent get nope: status", at(missing, "error", "details", "status"), 404.0)
	expect("agent get nope: error", at(missing, "error", "details", "body", "error"), "Agent with id nope not found")

	deleted := must("thread", "delete", "cli_thread", `{"resourceId":"cli-user"}`)
	expect("thread delete: result", at(deleted, "data", "result"), "Thread deleted")
	gone, ok := mastra(t, "thread", "get", "cli_thread")
	if ok {
		t.Errorf("thread get after delete succeeded: %v", gone)
	}
	expect("thread get after delete: status", at(gone, "error", "details", "status"), 404.0)
}

// The mastra CLI lists, reads and runs Parley's tools; an input that fails
// the tool's schema comes back as Mastra's validation result.
func TestMastraCLITools(t *testing.T) {
	node, bin := findMastraCLI(t)
	p := startParley(t, map[string]*agentcore.Tool{"write_note": noteTool()})
	mastra := mastraCLIFor(t, node, bin, p.URL)
	must := func(args ...string) map[string]any {
		t.Helper()
		out, ok := mastra(t, args...)
		if !ok {
			t.Fatalf("mastra %v failed: %v", args, out)
		}
		return out
	}
	expect := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}

	// The workspace tools and the test's write_note.
	list := must("tool", "list")
	var note any
	items, _ := at(list, "data").([]any)
	for _, it := range items {
		if at(it, "id") == "write_note" {
			note = it
		}
	}
	expect("tool list: total", at(list, "page", "total"), float64(len(items)))
	expect("tool list: description", at(note, "description"), "Write a note to a file.")
	// The CLI parses the SuperJSON schema strings back into schemas.
	expect("tool list: input required", at(note, "inputSchema", "required"), []any{"path", "content"})
	if len(items) < 2 {
		t.Errorf("tool list: %v, want the workspace tools too", items)
	}

	tool := must("tool", "get", "write_note")
	expect("tool get: id", at(tool, "data", "id"), "write_note")
	expect("tool get: path described", at(tool, "data", "inputSchema", "properties", "path", "description"), "Where to write the note")
	expect("tool get: output", at(tool, "data", "outputSchema", "properties", "written", "type"), "integer")

	run := must("tool", "execute", "write_note", `{"path":"a.md","content":"hello"}`)
	expect("tool execute: output", at(run, "data"), map[string]any{"written": 5.0})
	wrapped := must("tool", "execute", "write_note", `{"data":{"path":"b.md","content":"hi"},"requestContext":{"k":"v"}}`)
	expect("tool execute with data: output", at(wrapped, "data"), map[string]any{"written": 2.0})

	// As Mastra's server, the tool's validation error is the call's result.
	bad := must("tool", "execute", "write_note", `{"path":"a.md"}`)
	expect("invalid input: error", at(bad, "data", "error"), true)
	expect("invalid input: message", at(bad, "data", "message"), "Tool input validation failed for write_note. Please fix the following errors and try again:\n"+
		"- content: Invalid input: expected string, received undefined\n\nProvided arguments: {\n  \"path\": \"a.md\"\n}")
	expect("invalid input: field", at(bad, "data", "validationErrors", "fields", "content", "errors"), []any{"Invalid input: expected string, received undefined"})

	missing, ok := mastra(t, "tool", "get", "nope")
	if ok {
		t.Errorf("tool get nope succeeded: %v", missing)
	}
	expect("tool get nope: status", at(missing, "error", "details", "status"), 404.0)
	expect("tool get nope: error", at(missing, "error", "details", "body", "error"), "Tool not found")

	agent := must("agent", "get", "parley")
	expect("agent get: tool id", at(agent, "data", "tools", "write_note", "id"), "write_note")

	// --schema reads Mastra's schema manifest from GET /api/system/api-schema.
	schema := must("tool", "execute", "--schema")
	expect("tool execute --schema: command", at(schema, "command"), "mastra api tool execute <toolId> <input>")
	expect("tool execute --schema: path", at(schema, "path"), "/tools/:toolId/execute")
	if at(schema, "input", "schema", "properties", "data") == nil {
		t.Errorf("tool execute --schema: no data in %v", at(schema, "input"))
	}
	for _, args := range [][]string{{"agent", "run", "--schema"}, {"agent", "list", "--schema"}, {"tool", "list", "--schema"},
		{"thread", "list", "--schema"}, {"thread", "create", "--schema"}, {"thread", "update", "--schema"},
		{"thread", "delete", "--schema"}, {"thread", "messages", "--schema"}} {
		if out := must(args...); at(out, "method") == nil || at(out, "response") == nil {
			t.Errorf("mastra %v: %v", args, out)
		}
	}
	runSchema := must("agent", "run", "--schema")
	if at(runSchema, "input", "schema", "properties", "messages") == nil {
		t.Errorf("agent run --schema: no messages in %v", at(runSchema, "input"))
	}
}

// Without the token the CLI gets Parley's 401 and its one-line reason, for
// reading and for running a tool alike; with a wrong one too.
func TestMastraCLINeedsTheToken(t *testing.T) {
	node, bin := findMastraCLI(t)
	p := startParley(t)
	for name, flags := range map[string][]string{
		"no header":   nil,
		"wrong token": {"--header", "Authorization: Bearer not-the-token-0000"},
	} {
		mastra := mastraCLIWith(t, node, bin, p.URL, flags...)
		for _, args := range [][]string{
			{"tool", "list"},
			{"tool", "execute", "execute_command", `{"command":"touch pwned"}`},
		} {
			out, ok := mastra(t, args...)
			raw, _ := json.Marshal(out)
			if ok || !strings.Contains(string(raw), "401") || !strings.Contains(string(raw), "authentication required") {
				t.Errorf("%s: mastra %v = %s, want a 401 naming the missing credential", name, args, raw)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "pwned")); err == nil {
		t.Fatal("a command ran without the token")
	}
	// With it, the same CLI works.
	if out, ok := mastraCLIFor(t, node, bin, p.URL)(t, "tool", "list"); !ok {
		t.Fatalf("with the token: %v", out)
	}
}
