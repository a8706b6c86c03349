package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

type cityIn struct {
	City string `json:"city" desc:"City name"`
}

type cityOut struct {
	City           string         `json:"city"`
	ThreadID       string         `json:"threadId,omitempty"`
	RunID          string         `json:"runId,omitempty"`
	RequestContext map[string]any `json:"requestContext,omitempty"`
}

func apiTestTools() map[string]*agentcore.Tool {
	return map[string]*agentcore.Tool{
		"weather": agentcore.NewTool("weather", "Current weather for a city.",
			func(ctx context.Context, in cityIn, tc *agentcore.ToolContext) (cityOut, error) {
				return cityOut{City: in.City, ThreadID: tc.ThreadID, RunID: tc.RunID, RequestContext: tc.RequestContext}, nil
			}),
		"slow": {ID: "slow", Execute: func(ctx context.Context, _ json.RawMessage, _ *agentcore.ToolContext) (any, error) {
			<-ctx.Done() // until the client gives up
			return nil, ctx.Err()
		}},
	}
}

// startAPIServer runs a real Parley with the test tools on a free loopback
// port and returns its address. With no token given, PARLEY_DATA_DIR names
// its data folder, so `parley api` finds the folder's token as a user's
// does; with one, PARLEY_DATA_DIR is an empty folder (no token to find).
func startAPIServer(t *testing.T, token string) string {
	t.Helper()
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	dir := t.TempDir()
	if token == "" {
		t.Setenv("PARLEY_DATA_DIR", dir)
	} else {
		t.Setenv("PARLEY_DATA_DIR", t.TempDir())
	}
	ctx, cancel := context.WithCancel(context.Background())
	in, err := Open(ctx, Config{DataDir: dir, Workspace: dir, Model: DemoModel, Token: token, Getenv: func(string) string { return "" }},
		Options{Scripted: model, Tools: apiTestTools(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- in.ServeOn(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		in.Close()
	})
	return "http://" + ln.Addr().String()
}

// parleyAPI runs `parley api args…` and decodes what it printed: stdout on
// success, stderr otherwise. Whatever it prints must be JSON.
func parleyAPI(t *testing.T, args ...string) (code int, out any) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code = Main(append([]string{"api"}, args...), &stdout, &stderr)
	raw := stdout.Bytes()
	if code != 0 {
		raw = stderr.Bytes()
		if stdout.Len() > 0 {
			t.Errorf("parley api %v failed but printed %s on stdout", args, stdout.Bytes())
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("parley api %v: output is not JSON (%v):\nstdout %s\nstderr %s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return code, out
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

func TestAPICommandTools(t *testing.T) {
	url := startAPIServer(t, "")
	must := func(args ...string) any {
		t.Helper()
		code, out := parleyAPI(t, append(args, "--url", url)...)
		if code != 0 {
			t.Fatalf("parley api %v: exit %d: %v", args, code, out)
		}
		return out
	}
	var inputSchema any
	if err := json.Unmarshal(agentcore.SchemaOf[cityIn](), &inputSchema); err != nil {
		t.Fatal(err)
	}

	// The workspace tools are listed too; the test's are among them, in name order.
	list := must("tool", "list")
	items, _ := at(list, "data").([]any)
	var ids []string
	for _, it := range items {
		ids = append(ids, at(it, "id").(string))
	}
	n := float64(len(items))
	if !slices.IsSorted(ids) || !slices.Contains(ids, "slow") || !slices.Contains(ids, "weather") ||
		!reflect.DeepEqual(at(list, "page"), map[string]any{"total": n, "page": 0.0, "perPage": n, "hasMore": false}) {
		t.Errorf("tool list: %v", list)
	}
	if got := at(items, slices.Index(ids, "weather"), "inputSchema"); !reflect.DeepEqual(got, inputSchema) {
		t.Errorf("tool list: weather's inputSchema %v, want the schema object %v", got, inputSchema)
	}

	// --url before the command, as `mastra api --url U tool get x` has it.
	code, got := parleyAPI(t, "--url", url, "tool", "get", "weather")
	if code != 0 || at(got, "data", "id") != "weather" || at(got, "data", "description") != "Current weather for a city." ||
		!reflect.DeepEqual(at(got, "data", "inputSchema"), inputSchema) || at(got, "data", "outputSchema", "type") != "object" {
		t.Errorf("tool get: %d %v", code, got)
	}
	if got := must("tool", "get", "weather", "--schema"); !reflect.DeepEqual(got, inputSchema) {
		t.Errorf("tool get --schema: %v, want %v", got, inputSchema)
	}
	if got := must("tool", "get", "slow", "--schema"); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("tool get --schema of a tool without one: %v", got)
	}

	if got := must("tool", "execute", "weather", `{"city":"Oslo"}`); !reflect.DeepEqual(got, map[string]any{"data": map[string]any{"city": "Oslo"}}) {
		t.Errorf("tool execute: %v", got)
	}
	// Input that fails the schema is Mastra's validation result, with a 200.
	if got := must("tool", "execute", "weather", `{"city":5}`); at(got, "data", "error") != true ||
		!reflect.DeepEqual(at(got, "data", "validationErrors", "fields", "city", "errors"), []any{"Invalid input: expected string, received number"}) {
		t.Errorf("tool execute with invalid input: %v", got)
	}
	got = must("tool", "execute", "weather", `{"data":{"city":"Rome"},"threadId":"t1","runId":"r9","requestContext":{"k":"v"}}`)
	if want := map[string]any{"city": "Rome", "threadId": "t1", "runId": "r9", "requestContext": map[string]any{"k": "v"}}; !reflect.DeepEqual(at(got, "data"), want) {
		t.Errorf("tool execute with a request body: %v, want data %v", got, want)
	}
}

func TestAPICommandErrors(t *testing.T) {
	url := startAPIServer(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now

	for _, c := range []struct {
		name string
		args []string
		exit int
		code string         // error.code
		want map[string]any // more of the error, by path "a.b"
	}{
		{"unknown tool", []string{"tool", "get", "nope", "--url", url}, 1, "HTTP_ERROR",
			map[string]any{"details.status": 404.0, "details.body.error": "Tool not found", "message": "Request failed with status 404"}},
		{"execute unknown tool", []string{"tool", "execute", "nope", `{}`, "--url", url}, 1, "HTTP_ERROR", map[string]any{"details.status": 404.0}},
		{"invalid JSON", []string{"tool", "execute", "weather", `{"city":`, "--url", url}, 1, "INVALID_JSON", map[string]any{"message": "Input must be valid JSON"}},
		{"not an object", []string{"tool", "execute", "weather", `["Oslo"]`, "--url", url}, 1, "INVALID_JSON", map[string]any{"message": "Input JSON must be an object"}},
		{"no input", []string{"tool", "execute", "weather", "--url", url}, 1, "MISSING_INPUT", nil},
		{"no tool id", []string{"tool", "get", "--url", url}, 1, "MISSING_ARGUMENT", map[string]any{"details.argument": "toolId"}},
		{"unreachable", []string{"tool", "list", "--url", closed}, 1, "SERVER_UNREACHABLE", map[string]any{"message": "Could not connect to target server"}},
		{"timeout", []string{"tool", "execute", "slow", `{"x":1}`, "--url", url, "--timeout", "200ms"}, 1, "REQUEST_TIMEOUT", map[string]any{"details.timeoutMs": 200.0}},
		{"unknown command", []string{"agent", "list", "--url", url}, 2, "INVALID_ARGUMENT", nil},
		{"unknown tool command", []string{"tool", "run", "x", "--url", url}, 2, "INVALID_ARGUMENT", nil},
		{"no command", []string{"--url", url}, 2, "INVALID_ARGUMENT", nil},
		{"unknown flag", []string{"tool", "list", "--verbose"}, 2, "INVALID_ARGUMENT", nil},
		{"schema on list", []string{"tool", "list", "--schema", "--url", url}, 2, "INVALID_ARGUMENT", nil},
		{"extra argument", []string{"tool", "get", "weather", "more", "--url", url}, 2, "INVALID_ARGUMENT", nil},
		{"bad url", []string{"tool", "list", "--url", "127.0.0.1:7777"}, 2, "INVALID_ARGUMENT", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			exit, out := parleyAPI(t, c.args...)
			if exit != c.exit || at(out, "error", "code") != c.code {
				t.Fatalf("exit %d, error %v; want exit %d, code %s", exit, out, c.exit, c.code)
			}
			if msg, _ := at(out, "error", "message").(string); msg == "" {
				t.Errorf("no message: %v", out)
			}
			for path, want := range c.want {
				p := []any{"error"}
				for _, k := range strings.Split(path, ".") {
					if k == "0" {
						p = append(p, 0)
					} else {
						p = append(p, k)
					}
				}
				if got := at(out, p...); got != want {
					t.Errorf("error.%s = %#v, want %#v (%v)", path, got, want, out)
				}
			}
		})
	}
}

func TestAPICommandToken(t *testing.T) {
	url := startAPIServer(t, "s3cret")
	t.Setenv("PARLEY_TOKEN", "")
	if code, out := parleyAPI(t, "tool", "list", "--url", url); code != 1 || at(out, "error", "details", "status") != 401.0 {
		t.Errorf("without the token: %d %v", code, out)
	}
	if code, out := parleyAPI(t, "tool", "get", "slow", "--url", url, "--token", "s3cret"); code != 0 || at(out, "data", "id") != "slow" {
		t.Errorf("with --token: %d %v", code, out)
	}
	t.Setenv("PARLEY_TOKEN", "s3cret")
	if code, out := parleyAPI(t, "tool", "execute", "weather", `{"city":"Oslo"}`, "--url", url); code != 0 || at(out, "data", "city") != "Oslo" {
		t.Errorf("with PARLEY_TOKEN: %d %v", code, out)
	}
}

func TestAPICommandHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"api", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "parley api tool execute <id> JSON") {
		t.Errorf("api --help: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if Main([]string{"help"}, &out, &errb); !strings.Contains(out.String(), "parley api tool") {
		t.Errorf("usage does not name parley api: %q", out.String())
	}
}

func TestAPICommandNotify(t *testing.T) {
	url := startAPIServer(t, "")
	tok, err := LoadToken(os.Getenv("PARLEY_DATA_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/api/memory/threads", strings.NewReader(`{"resourceId":"me","title":"CI"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var th struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&th); err != nil || th.ID == "" {
		t.Fatalf("create thread: %v", err)
	}
	resp.Body.Close()

	code, out := parleyAPI(t, "notify", th.ID, "Build 5 failed on main", "--source", "ci", "--kind", "build",
		"--priority", "low", "--dedupe", "build-5", "--payload", `{"url":"https://ci.example/5"}`, "--url", url)
	if code != 0 || at(out, "data", "record", "summary") != "Build 5 failed on main" || at(out, "data", "record", "source") != "ci" ||
		at(out, "data", "record", "payload", "url") != "https://ci.example/5" || at(out, "data", "decision", "action") != "summarize" {
		t.Fatalf("notify: exit %d %v", code, out)
	}
	// The same dedupe key updates the pending record.
	code, out = parleyAPI(t, "notify", th.ID, "Build 5 failed again", "--source", "ci", "--kind", "build", "--priority", "low", "--dedupe", "build-5", "--url", url)
	if code != 0 || at(out, "data", "record", "coalescedCount") != 2.0 {
		t.Fatalf("deduped notify: exit %d %v", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"notify", th.ID, "x", "--priority", "critical"}, 1, "HTTP_ERROR"},
		{[]string{"notify", "nope", "x"}, 1, "HTTP_ERROR"},
		{[]string{"notify", th.ID}, 1, "MISSING_ARGUMENT"},
		{[]string{"notify", th.ID, "x", "y"}, 2, "INVALID_ARGUMENT"},
		{[]string{"notify", th.ID, "x", "--payload", "{oops"}, 1, "INVALID_JSON"},
	} {
		code, out := parleyAPI(t, append(c.args, "--url", url)...)
		if code != c.code || at(out, "error", "code") != c.want {
			t.Errorf("%v: exit %d %v, want %d %s", c.args, code, out, c.code, c.want)
		}
	}
}

// Without --url, `parley api` calls PARLEY_URL, else the desktop app that
// published its address and token for this user.
func TestAPICommandFindsDesktop(t *testing.T) {
	url := startAPIServer(t, "desk-token")
	dir := t.TempDir()
	t.Setenv("PARLEY_DATA_DIR", dir)
	t.Setenv("PARLEY_TOKEN", "")
	t.Setenv("PARLEY_URL", "")
	remove, err := writeDesktopAddress(dir, desktopAddress{URL: url, Token: "desk-token"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, desktopFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("desktop.json: %v %v", fi, err)
	}
	if code, out := parleyAPI(t, "tool", "get", "slow"); code != 0 || at(out, "data", "id") != "slow" {
		t.Fatalf("through desktop.json: %d %v", code, out)
	}
	// An explicit token wins over the published one.
	if code, out := parleyAPI(t, "tool", "get", "slow", "--token", "wrong"); code != 1 || at(out, "error", "details", "status") != 401.0 {
		t.Fatalf("explicit token: %d %v", code, out)
	}
	remove()
	t.Setenv("PARLEY_URL", url)
	t.Setenv("PARLEY_TOKEN", "desk-token")
	if code, out := parleyAPI(t, "tool", "get", "slow"); code != 0 {
		t.Fatalf("through PARLEY_URL: %d %v", code, out)
	}
	if _, ok := readDesktopAddress(dir); ok {
		t.Fatal("desktop.json left after the app quit")
	}
}
