package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// `parley api` is a client of a running Parley's JSON API that behaves like
// `mastra api` (npm mastra, src/commands/api): the answer is printed as
// {"data": …} JSON on stdout (lists as {"data": [...], "page": {…}}); any
// failure is printed as {"error": {code, message, details}} on stderr with a
// non-zero exit, using mastra's error codes, so scripts written for one work
// with the other.

const apiUsage = `Usage:
  parley api tool list              [flags]
  parley api tool get <id>          [flags] [--schema]
  parley api tool execute <id> JSON [flags]
  parley api notify <threadId> <summary> [flags] [--source S] [--kind K]
                    [--priority low|medium|high|urgent] [--dedupe KEY] [--payload JSON]

  get --schema prints only the tool's input schema. execute sends JSON as the
  tool's input; {"data": …, "requestContext": {…}, "threadId": …, "resourceId": …}
  sends the whole request body instead. notify files a notification in a
  chat's inbox (source defaults to "cli", kind to "message", priority to
  medium); a pending one with the same --dedupe key is updated instead.

Flags (anywhere after "api"):
  --url URL      the Parley to call (default: env PARLEY_URL, else the desktop
                 app running for this user, else ` + defaultAPIURL + `)
  --token T      sent as Authorization: Bearer T (default: env PARLEY_TOKEN,
                 else the token of the data folder, env PARLEY_DATA_DIR)
  --timeout D    give up on a request after D (default ` + "30s" + `)
  --pretty       indent the JSON output
`

const (
	defaultAPIURL = "http://127.0.0.1:7777" // parley serve's default address
	// defaultAPITimeout is mastra api's default; a tool calling a sub-agent
	// may need --timeout.
	defaultAPITimeout = 30 * time.Second
	// exitUsage is the exit code of a malformed command line, as for Main.
	exitUsage = 2
)

// cliError is mastra api's error envelope: {"error": {code, message, details}}.
type cliError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	usage   bool           // a malformed command line, not a failed request
}

func (e *cliError) Error() string { return e.Message }

func usageError(format string, a ...any) *cliError {
	return &cliError{Code: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, a...) + ` (see "parley api --help")`, Details: map[string]any{}, usage: true}
}

// apiOptions are the flags of `parley api`.
type apiOptions struct {
	url     string
	token   string
	timeout time.Duration
	pretty  bool
	schema  bool
	// notify
	source, kind, priority, dedupe, payload string
}

// apiCmd runs `parley api …` and returns the exit code.
func apiCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var o apiOptions
	fs := flag.NewFlagSet("parley api", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // failures are reported as JSON below
	fs.StringVar(&o.url, "url", defaultAPIURL, "")
	fs.StringVar(&o.token, "token", getenv("PARLEY_TOKEN"), "")
	fs.DurationVar(&o.timeout, "timeout", defaultAPITimeout, "")
	fs.BoolVar(&o.pretty, "pretty", false, "")
	fs.BoolVar(&o.schema, "schema", false, "")
	fs.StringVar(&o.source, "source", "cli", "")
	fs.StringVar(&o.kind, "kind", "message", "")
	fs.StringVar(&o.priority, "priority", "", "")
	fs.StringVar(&o.dedupe, "dedupe", "", "")
	fs.StringVar(&o.payload, "payload", "", "")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, apiUsage)
		return 0
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["url"] {
		// PARLEY_URL, else the desktop app running for this user.
		if u := getenv("PARLEY_URL"); u != "" {
			o.url = u
		} else if a, ok := readDesktopAddress(dataDirFrom(getenv)); ok {
			o.url = a.URL
			if !set["token"] && getenv("PARLEY_TOKEN") == "" {
				o.token = a.Token
			}
		}
	}
	if o.token == "" {
		// The data folder's token, which every Parley on it answers to.
		if t, terr := readToken(TokenPath(dataDirFrom(getenv))); terr == nil {
			o.token = t
		}
	}
	var out any
	if err == nil {
		out, err = runAPI(pos, o)
	}
	if err != nil {
		var ce *cliError
		if !errors.As(err, &ce) {
			ce = usageError("%v", err) // a flag the flag package refused
		}
		writeJSONTo(stderr, map[string]any{"error": ce}, o.pretty)
		if ce.usage {
			return exitUsage
		}
		return 1
	}
	writeJSONTo(stdout, out, o.pretty)
	return 0
}

// parseInterleaved parses flags placed anywhere among the positional
// arguments (`api --url U tool get x` and `api tool get x --url U` alike, as
// mastra's commander does) and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil // after "--", nothing is a flag
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// runAPI runs one command and returns what to print.
func runAPI(pos []string, o apiOptions) (any, error) {
	if len(pos) == 0 {
		return nil, usageError("missing command: want tool list, get or execute, or notify")
	}
	if pos[0] == "notify" {
		return notify(pos[1:], o)
	}
	if pos[0] != "tool" {
		return nil, usageError("unknown command %q: want tool or notify", pos[0])
	}
	if len(pos) < 2 {
		return nil, usageError("missing command: want tool list, get or execute")
	}
	c, err := newAPIClient(o)
	if err != nil {
		return nil, err
	}
	cmd, args := pos[1], pos[2:]
	if o.schema && cmd != "get" {
		return nil, usageError("--schema is only for tool get")
	}
	switch cmd {
	case "list":
		if len(args) > 0 {
			return nil, usageError("tool list takes no arguments, got %q", args[0])
		}
		return c.listTools()
	case "get":
		id, err := toolArg(args, 1)
		if err != nil {
			return nil, err
		}
		return c.getTool(id, o.schema)
	case "execute":
		id, err := toolArg(args, 2)
		if err != nil {
			return nil, err
		}
		if len(args) < 2 {
			return nil, &cliError{Code: "MISSING_INPUT", Message: "Command requires a single inline JSON input argument",
				Details: map[string]any{"command": "parley api tool execute"}}
		}
		return c.executeTool(id, args[1])
	}
	return nil, usageError("unknown command \"tool %s\": want list, get or execute", cmd)
}

// toolArg is the tool id among at most max arguments.
func toolArg(args []string, max int) (string, error) {
	if len(args) == 0 || args[0] == "" {
		return "", &cliError{Code: "MISSING_ARGUMENT", Message: "Missing required argument <toolId>", Details: map[string]any{"argument": "toolId"}}
	}
	if len(args) > max {
		return "", usageError("unexpected argument %q", args[max])
	}
	return args[0], nil
}

// apiClient calls one Parley's JSON API.
type apiClient struct {
	base    string // ends in /api
	token   string
	timeout time.Duration
}

func newAPIClient(o apiOptions) (*apiClient, error) {
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--url %q: want an http or https address, like %s", o.url, defaultAPIURL)
	}
	if o.timeout <= 0 {
		return nil, usageError("--timeout %s: want a positive duration, like 30s", o.timeout)
	}
	// As mastra does: the API lives under /api unless the URL names it already.
	base := strings.TrimSuffix(o.url, "/")
	if !strings.HasSuffix(base, "/api") {
		base += "/api"
	}
	return &apiClient{base: base, token: o.token, timeout: o.timeout}, nil
}

// do sends a request and decodes the JSON answer; a non-2xx answer is an
// HTTP_ERROR carrying the status and the server's body.
func (c *apiClient) do(method, path string, query url.Values, body any) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, usageError("bad request address %s: %v", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	answer := parseAnswer(raw)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &cliError{Code: "HTTP_ERROR", Message: fmt.Sprintf("Request failed with status %d", resp.StatusCode),
			Details: map[string]any{"status": resp.StatusCode, "body": answer}}
	}
	return answer, nil
}

// transportError names why no answer came: the timeout, or no server.
func (c *apiClient) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &cliError{Code: "REQUEST_TIMEOUT", Message: fmt.Sprintf("Request timed out after %dms", c.timeout.Milliseconds()),
			Details: map[string]any{"timeoutMs": c.timeout.Milliseconds()}}
	}
	return &cliError{Code: "SERVER_UNREACHABLE", Message: "Could not connect to target server", Details: map[string]any{"message": err.Error()}}
}

// parseAnswer is the body as JSON, or as text when it is not JSON (the
// auth guard answers in text); empty is null.
func parseAnswer(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}

func (c *apiClient) listTools() (any, error) {
	answer, err := c.do(http.MethodGet, "/tools", nil, nil)
	if err != nil {
		return nil, err
	}
	tools, ok := answer.(map[string]any)
	if !ok {
		return nil, unexpected(answer)
	}
	// By name, so the order is the same every time.
	items := make([]any, 0, len(tools))
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		items = append(items, readableTool(tools[name]))
	}
	return map[string]any{"data": items, "page": map[string]any{
		"total": len(items), "page": 0, "perPage": len(items), "hasMore": false,
	}}, nil
}

func (c *apiClient) getTool(id string, schemaOnly bool) (any, error) {
	answer, err := c.do(http.MethodGet, "/tools/"+url.PathEscape(id), nil, nil)
	if err != nil {
		return nil, err
	}
	tool, ok := readableTool(answer).(map[string]any)
	if !ok {
		return nil, unexpected(answer)
	}
	if schemaOnly {
		if s, ok := tool["inputSchema"]; ok {
			return s, nil
		}
		return map[string]any{}, nil // no input schema: any input is accepted
	}
	return map[string]any{"data": tool}, nil
}

// executeTool sends input as the tool's data, unless it is a request body
// already (it has "data"), as mastra does; a runId goes in the query.
func (c *apiClient) executeTool(id, input string) (any, error) {
	var in any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		return nil, &cliError{Code: "INVALID_JSON", Message: "Input must be valid JSON", Details: map[string]any{"message": err.Error()}}
	}
	body, ok := in.(map[string]any)
	if !ok {
		return nil, &cliError{Code: "INVALID_JSON", Message: "Input JSON must be an object", Details: map[string]any{}}
	}
	if _, wrapped := body["data"]; !wrapped {
		body = map[string]any{"data": body}
	}
	query := url.Values{}
	if runID, ok := body["runId"].(string); ok {
		query.Set("runId", runID)
		delete(body, "runId")
	}
	answer, err := c.do(http.MethodPost, "/tools/"+url.PathEscape(id)+"/execute", query, body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": answer}, nil
}

func unexpected(answer any) error {
	return &cliError{Code: "INVALID_RESPONSE", Message: "The server's answer is not a tool or a list of tools", Details: map[string]any{"body": answer}}
}

// readableTool turns a tool's schema strings (SuperJSON, {"json": schema})
// back into JSON Schema objects without "$schema", as mastra api prints them.
func readableTool(v any) any {
	tool, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(tool)
	for _, k := range []string{"inputSchema", "outputSchema", "requestContextSchema"} {
		s, ok := tool[k].(string)
		if !ok {
			continue
		}
		var schema any
		if json.Unmarshal([]byte(s), &schema) != nil {
			continue // not JSON: shown as sent
		}
		if m, ok := schema.(map[string]any); ok {
			if inner, ok := m["json"]; ok && len(m) == 1 {
				schema = inner
			}
		}
		if m, ok := schema.(map[string]any); ok {
			delete(m, "$schema")
		}
		out[k] = schema
	}
	return out
}

func writeJSONTo(w io.Writer, v any, pretty bool) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // a terminal, not a web page
	if pretty {
		enc.SetIndent("", "  ")
	}
	_ = enc.Encode(v)
}

// notify posts a notification to a chat: `parley api notify <threadId> <summary>`.
func notify(args []string, o apiOptions) (any, error) {
	switch {
	case len(args) < 2 || args[0] == "":
		return nil, &cliError{Code: "MISSING_ARGUMENT", Message: "notify needs <threadId> and <summary>", Details: map[string]any{"argument": "threadId"}}
	case len(args) > 2:
		return nil, usageError("unexpected argument %q (quote the summary)", args[2])
	}
	body := map[string]any{"threadId": args[0], "summary": args[1], "source": o.source, "kind": o.kind}
	if o.priority != "" {
		body["priority"] = o.priority
	}
	if o.dedupe != "" {
		body["dedupeKey"] = o.dedupe
	}
	if o.payload != "" {
		if !json.Valid([]byte(o.payload)) {
			return nil, &cliError{Code: "INVALID_JSON", Message: "--payload must be valid JSON", Details: map[string]any{}}
		}
		body["payload"] = json.RawMessage(o.payload)
	}
	c, err := newAPIClient(o)
	if err != nil {
		return nil, err
	}
	answer, err := c.do(http.MethodPost, "/notifications", nil, body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": answer}, nil
}
