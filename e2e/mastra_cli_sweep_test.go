package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// sweepParallel is how many CLI processes the sweep runs at once: node
// takes about a second to start, and the machine has few cores.
const sweepParallel = 4

// sweepTimeout bounds one command of the sweep, as cliTimeout does: a
// command that hangs fails alone instead of holding the whole test.
const sweepTimeout = cliTimeout

// sweepCmd is one leaf command of `mastra api`: its arguments, and the
// HTTP status it fails with when it is meant to (0: it succeeds). Parley
// has no workflows or datasets, so an id of one is Mastra's 404; what
// would store a score or a dataset is a 501, working memory a 400.
type sweepCmd struct {
	args []string
	fail int
}

// sweepResult is what one CLI run printed.
type sweepResult struct {
	out map[string]any
	ok  bool
	err error
}

// runSweep runs the commands, sweepParallel at a time, and returns their
// results in order. It does not touch t from the goroutines.
func runSweep(t *testing.T, node, bin, url string, cmds []sweepCmd) []sweepResult {
	tok, ok := tokens.Load(strings.TrimPrefix(url, "http://"))
	if !ok {
		t.Fatalf("no token known for %s", url)
	}
	home := t.TempDir()
	res := make([]sweepResult, len(cmds))
	sem := make(chan struct{}, sweepParallel)
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(t.Context(), sweepTimeout)
			defer cancel()
			args := append([]string{bin, "api", "--url", url, "--header", "Authorization: Bearer " + tok.(string)}, c.args...)
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = home
			cmd.WaitDelay = time.Second // a child left holding stdout does not hold the test
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MASTRA_TELEMETRY_DISABLED=1", "NO_COLOR=1"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if ctx.Err() != nil {
				res[i].err = errors.New("no answer in time")
				return
			}
			if err != nil && !errors.As(err, &exit) {
				res[i].err = err
				return
			}
			raw := stdout.Bytes()
			if err != nil {
				raw = stderr.Bytes()
			}
			t.Logf("mastra %v → %s", c.args, bytes.TrimSpace(raw))
			res[i].ok = err == nil
			if jerr := json.Unmarshal(raw, &res[i].out); jerr != nil {
				res[i].err = errors.New("output is not JSON: " + stdout.String() + stderr.String())
			}
		}()
	}
	wg.Wait()
	return res
}

// Every leaf command of the real mastra CLI's API groups (those of
// @mastra/server's routes; the platform's learning and factory groups are
// not a server's) is run once against Parley: none fails because Parley
// lacks the route, each either succeeds or fails the way it is meant to,
// and --schema works for the groups' commands.
func TestMastraCLISweep(t *testing.T) {
	node, bin := findMastraCLI(t)
	p := startParley(t, map[string]*agentcore.Tool{"write_note": noteTool()})
	mastra := mastraCLIFor(t, node, bin, p.URL)

	// A chat with a run in it, for the thread, memory and trace commands.
	if out, ok := mastra(t, "thread", "create", `{"resourceId":"sweeper","threadId":"sweep","title":"Swept"}`); !ok {
		t.Fatalf("thread create: %v", out)
	}
	p.Model.Push(scripted.Reply{Text: "The sweep finds a zebra."})
	if out, ok := mastra(t, "agent", "run", "parley", `{"messages":"Hello, sweep","memory":{"thread":"sweep","resource":"sweeper"}}`); !ok {
		t.Fatalf("agent run: %v", out)
	}
	traces, ok := mastra(t, "trace", "list")
	traceID, _ := at(traces, "data", 0, "traceId").(string)
	if !ok || traceID == "" {
		t.Fatalf("trace list: %v", traces)
	}

	cmd := func(fail int, args ...string) sweepCmd { return sweepCmd{args: args, fail: fail} }
	cmds := []sweepCmd{
		cmd(0, "agent", "list"),
		cmd(0, "agent", "get", "parley"),
		cmd(0, "workflow", "list"),
		cmd(404, "workflow", "get", "nightly"),
		cmd(404, "workflow", "run", "start", "nightly", `{"inputData":{}}`),
		cmd(404, "workflow", "run", "list", "nightly"),
		cmd(404, "workflow", "run", "get", "nightly", "run_1"),
		cmd(404, "workflow", "run", "resume", "nightly", "run_1", `{"resumeData":{"ok":true}}`),
		cmd(404, "workflow", "run", "cancel", "nightly", "run_1"),
		cmd(0, "tool", "list"),
		cmd(0, "tool", "get", "write_note"),
		cmd(0, "tool", "execute", "write_note", `{"path":"swept.md","content":"x"}`),
		cmd(0, "mcp", "list"),
		cmd(0, "mcp", "get", "parley"),
		cmd(0, "mcp", "tool", "list", "parley"),
		cmd(0, "mcp", "tool", "get", "parley", "read_chat"),
		cmd(0, "mcp", "tool", "execute", "parley", "read_chat", `{"threadId":"sweep"}`),
		cmd(0, "thread", "list"),
		cmd(0, "thread", "get", "sweep"),
		cmd(0, "thread", "update", "sweep", `{"title":"Swept again"}`),
		cmd(0, "thread", "messages", "sweep"),
		cmd(0, "memory", "search", `{"agentId":"parley","resourceId":"sweeper","searchQuery":"zebra"}`),
		cmd(0, "memory", "current", "get", `{"threadId":"sweep","agentId":"parley"}`),
		cmd(0, "memory", "current", "update", `{"threadId":"sweep","agentId":"parley","workingMemory":"x"}`),
		cmd(0, "memory", "status", `{"agentId":"parley"}`),
		cmd(0, "trace", "list", "--verbose"),
		cmd(0, "trace", "get", traceID),
		cmd(0, "trace", "get", traceID, "--verbose"),
		cmd(0, "trace", "span", traceID, traceID),
		cmd(0, "trace", "query", `{"timeRange":{"from":"2000-01-01T00:00:00.000Z","to":"2999-01-01T00:00:00.000Z"}}`),
		cmd(0, "log", "list"),
		cmd(0, "metric", "aggregate", `{"name":"latency_ms","aggregation":"avg"}`),
		cmd(0, "metric", "breakdown", `{"name":"latency_ms","aggregation":"avg","groupBy":"model","limit":10}`),
		cmd(0, "metric", "timeseries", `{"name":"latency_ms","aggregation":"avg","interval":"1h"}`),
		cmd(0, "metric", "percentiles", `{"name":"latency_ms","percentiles":[0.5,0.95],"interval":"1h"}`),
		cmd(0, "metric", "names"),
		cmd(0, "metric", "label-keys", `{"metricName":"latency_ms"}`),
		cmd(0, "metric", "label-values", `{"metricName":"latency_ms","labelKey":"model"}`),
		cmd(501, "score", "create", `{"score":{"scorerId":"quality","score":0.9}}`),
		cmd(0, "score", "list"),
		cmd(0, "score", "get", "score_1"),
		cmd(0, "score", "delete", `{"scoreIds":["score_1"]}`),
		cmd(0, "feedback", "delete", `{"feedbackIds":["feedback_1"]}`),
		cmd(0, "dataset", "list"),
		cmd(404, "dataset", "get", "evals"),
		cmd(501, "dataset", "create", `{"name":"evals"}`),
		cmd(404, "dataset", "items", "evals"),
		cmd(404, "experiment", "list", "evals"),
		cmd(404, "experiment", "get", "evals", "exp_1"),
		cmd(404, "experiment", "run", "evals", `{"name":"baseline"}`),
		cmd(404, "experiment", "results", "evals", "exp_1"),
	}
	// --schema reads the manifest: one command of each group.
	for _, args := range [][]string{{"workflow", "run", "start"}, {"mcp", "tool", "execute"}, {"memory", "search"},
		{"memory", "current", "update"}, {"trace", "query"}, {"log", "list"}, {"metric", "aggregate"}, {"score", "create"},
		{"feedback", "delete"}, {"dataset", "create"}, {"experiment", "run"}} {
		cmds = append(cmds, sweepCmd{args: append(args, "--schema"), fail: -1})
	}

	for i, r := range runSweep(t, node, bin, p.URL, cmds) {
		c := cmds[i]
		switch {
		case r.err != nil:
			t.Errorf("mastra %v: %v", c.args, r.err)
		case c.fail == -1: // --schema
			if !r.ok || at(r.out, "method") == nil || at(r.out, "response") == nil {
				t.Errorf("mastra %v: %v", c.args, r.out)
			}
		case strings.Contains(jsonText(r.out), "no API route"):
			t.Errorf("mastra %v: Parley lacks the route: %v", c.args, r.out)
		case c.fail == 0 && !r.ok:
			t.Errorf("mastra %v failed: %v", c.args, r.out)
		case c.fail != 0 && (r.ok || at(r.out, "error", "details", "status") != float64(c.fail)):
			t.Errorf("mastra %v: %v, want it to fail with %d", c.args, r.out, c.fail)
		case c.fail != 0:
			if msg, _ := at(r.out, "error", "details", "body", "error").(string); msg == "" {
				t.Errorf("mastra %v: no reason in Mastra's error shape: %v", c.args, r.out)
			}
		}
	}

	// What a few of them said.
	search, _ := mastra(t, "memory", "search", `{"agentId":"parley","resourceId":"sweeper","searchQuery":"zebra"}`)
	if s, _ := at(search, "data", 0, "content").(string); !strings.Contains(s, "zebra") {
		t.Errorf("memory search: %v", search)
	}
	trace, _ := mastra(t, "trace", "get", traceID)
	if at(trace, "data", "spans", 0, "spanType") != "agent_run" || at(trace, "data", "spans", 1, "spanType") != "model_generation" {
		t.Errorf("trace get: %v", trace)
	}
	chats, _ := mastra(t, "mcp", "tool", "execute", "parley", "list_chats", `{}`)
	if at(chats, "data", "result", "chats", 0, "id") != "sweep" {
		t.Errorf("mcp tool execute list_chats: %v", chats)
	}
	if out, ok := mastra(t, "thread", "delete", "sweep", `{"resourceId":"sweeper"}`); !ok {
		t.Errorf("thread delete: %v", out)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
