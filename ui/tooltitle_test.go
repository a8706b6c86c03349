package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/components"
)

func renderCard(t *testing.T, c *components.ToolCard) string {
	t.Helper()
	var b bytes.Buffer
	if err := components.ToolCardView(*c).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func doneCall(name, args, result string) *agentcore.ToolInvocation {
	return &agentcore.ToolInvocation{ToolCallID: "c1", ToolName: name, State: "result", Args: json.RawMessage(args), Result: json.RawMessage(result)}
}

// Each built-in tool's card is titled in words; other tools keep their
// name, prettified.
func TestCardTitles(t *testing.T) {
	for _, tc := range []struct {
		name, state, args, result string
		title, code               string
	}{
		{"write_file", "result", `{"path":"src/server.go","content":"x"}`, `{}`, "Write", "src/server.go"},
		{"edit_file", "result", `{"path":"main.go","old_str":"a","new_str":"b"}`, `{}`, "Edit", "main.go"},
		{"view", "result", `{"path":"README.md"}`, `{"kind":"file","content":"1\thi"}`, "Read", "README.md"},
		{"view", "result", `{"path":"src"}`, `{"kind":"directory","content":"a.go"}`, "Listed", "src"},
		{"view", "result", `{}`, `{"kind":"directory","content":"a.go"}`, "Listed the workspace", ""},
		{"execute_command", "result", `{"command":"go test ./... 2>&1"}`, `{"output":"ok"}`, "Ran", "go test ./... 2>&1"},
		{"execute_command", "call", `{"command":"go test ./..."}`, ``, "Running", "go test ./..."},
		{"execute_command", "suspended", `{"command":"rm -rf build"}`, ``, "Run", "rm -rf build"},
		{"ask_user", "result", `{"question":"Which theme?"}`, `"Dark"`, "Asked:", ""},
		{"search_content", "result", `{"pattern":"TODO"}`, `{"content":""}`, "Searched for", "TODO"},
		{"find_files", "result", `{"pattern":"**/*.go"}`, `{"files":[]}`, "Listed files matching", "**/*.go"},
		{"find_files", "result", `{}`, `{"files":[]}`, "Listed files", ""},
		{"web_fetch", "result", `{"url":"https://example.com/a?b=c"}`, `{"content":"hi"}`, "Fetched example.com", ""},
		{"web_fetch", "call", `{"url":"https://example.com/"}`, ``, "Fetching example.com", ""},
		{"web_fetch", "suspended", `{"url":"https://example.com/"}`, ``, "Fetch example.com", ""},
		{"submit_plan", "suspended", `{"title":"x"}`, ``, "Proposed a plan:", ""},
		{"web_search", "result", `{"query":"go 1.25"}`, `"x"`, "Searched the web for “go 1.25”", ""},
		{"task_write", "result", `{"tasks":[]}`, `{}`, "Updated the task list", ""},
		{"delete_file", "result", `{"path":"old.txt"}`, `{}`, "Delete", "old.txt"},
		{"mkdir", "result", `{"path":"docs"}`, `{}`, "Create folder", "docs"},
		{"docs_lookup", "result", `{"topic":"x"}`, `"y"`, "Docs lookup", ""},
		{"github-list_issues", "result", `{}`, `"y"`, "Github list issues", ""},
	} {
		ti := doneCall(tc.name, tc.args, tc.result)
		ti.State = tc.state
		c := toolCard(ti, nil)
		if c.Title != tc.title || c.TitleCode != tc.code {
			t.Errorf("%s %s: title %q %q, want %q %q", tc.name, tc.args, c.Title, c.TitleCode, tc.title, tc.code)
		}
		if c.Name != tc.name {
			t.Errorf("%s: Name %q", tc.name, c.Name)
		}
	}
}

// A tool's name comes from the model or an MCP server: in a title it is
// text, escaped, never markup.
func TestCardTitleHostileName(t *testing.T) {
	c := toolCard(doneCall(`<img src=x onerror=alert(1)>_tool`, `{"a":"<b>"}`, `"<script>alert(2)</script>"`), nil)
	html := renderCard(t, c)
	for _, bad := range []string{"<img", "<script", "<b>"} {
		if strings.Contains(html, bad) {
			t.Fatalf("markup %q reached the card: %s", bad, html)
		}
	}
	if !strings.Contains(html, `&lt;img src=x onerror=alert(1)&gt; tool`) {
		t.Fatalf("title not shown as text: %s", html)
	}
	if !strings.Contains(html, `data-tool-name="&lt;img src=x onerror=alert(1)&gt;_tool"`) {
		t.Fatalf("raw name not kept in data-tool-name: %s", html)
	}
}

// Details hold the raw arguments and result, indented and unescaped, as
// escaped text; the body never shows the whole before/after file.
func TestCardDetails(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"path": "run.sh", "content": "go test 2>&1 | tee <log>\n"})
	if !bytes.Contains(args, []byte(`\u003e`)) {
		t.Fatalf("test input should carry Go's HTML escapes: %s", args)
	}
	result, _ := json.Marshal(map[string]any{"path": "run.sh", "before": "old\n", "after": "go test 2>&1 | tee <log>\n"})
	c := toolCard(doneCall("write_file", string(args), string(result)), nil)
	if c.Details == nil {
		t.Fatal("no details")
	}
	want := "{\n  \"content\": \"go test 2>&1 | tee <log>\\n\",\n  \"path\": \"run.sh\"\n}"
	if c.Details.Args != want {
		t.Fatalf("details args:\n%s\nwant\n%s", c.Details.Args, want)
	}
	if !strings.Contains(c.Details.Result, `"after": "go test 2>&1 | tee <log>\n"`) {
		t.Fatalf("details result: %s", c.Details.Result)
	}
	if c.Result != "" || len(c.Args) != 0 {
		t.Fatalf("body shows raw payload: result %q args %v", c.Result, c.Args)
	}
	html := renderCard(t, c)
	if strings.Contains(html, `\u003e`) || strings.Contains(html, "<log>") {
		t.Fatalf("details not escaped text: %s", html)
	}
	if !strings.Contains(html, `2&gt;&amp;1 | tee &lt;log&gt;`) {
		t.Fatalf("details text: %s", html)
	}
	_, after, ok := strings.Cut(html, `<details class="tool-details"`)
	if !ok || strings.Count(html, `&#34;before&#34;`) != 1 || !strings.Contains(after, `&#34;before&#34;`) {
		t.Fatalf("before/after JSON outside Details: %s", html)
	}
}

func TestPrettyJSONKeepsEscapesThatMatter(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"\u003c\u003e\u0026"}`:    "{\n  \"a\": \"<>&\"\n}",
		`"\\u003e"`:                     `"\\u003e"`, // an escaped backslash, not an escape
		`"\"\\\n\u0001"`:                `"\"\\\n\u0001"`,
		`"\u0022\u005c"`:                `"\u0022\u005c"`,
		`"\ud83d\ude00 \u00e9"`:         `"😀 é"`,
		`{"a": [1, 2]}`:                 "{\n  \"a\": [\n    1,\n    2\n  ]\n}",
		`not json \u003e`:               `not json \u003e`,
		``:                              ``,
		`null`:                          ``,
		`"unpaired \ud83d surrogate"`:   `"unpaired \ud83d surrogate"`,
		`"tab\tand \u2028 separator"`:   `"tab\tand \u2028 separator"`,
		`["x\u003cscript\u003ey"]`:      "[\n  \"x<script>y\"\n]",
		`{"k\u003e":"v"}`:               "{\n  \"k>\": \"v\"\n}",
		`{"a":"b"}   `:                  "{\n  \"a\": \"b\"\n}",
		`  "x"`:                         `"x"`,
		`{"n":1.5e3,"t":true,"f":null}`: "{\n  \"n\": 1.5e3,\n  \"t\": true,\n  \"f\": null\n}",
	} {
		if got := prettyJSON(json.RawMessage(in)); got != want {
			t.Errorf("prettyJSON(%s) = %q, want %q", in, got, want)
		}
	}
}

// A command's card shows its output, `2>&1` as typed.
func TestCommandCardBody(t *testing.T) {
	c := toolCard(doneCall("execute_command", `{"command":"make 2\u003e\u00261"}`, `{"command":"make 2\u003e\u00261","output":"built\n","exitCode":2}`), nil)
	if c.Result != "built\n(exit code 2)" {
		t.Fatalf("body %q", c.Result)
	}
	if c.TitleCode != "make 2>&1" {
		t.Fatalf("title code %q", c.TitleCode)
	}
	html := renderCard(t, c)
	if !strings.Contains(html, `<code class="tool-title-code">make 2&gt;&amp;1</code>`) {
		t.Fatalf("title: %s", html)
	}
}

// A task tool's card shows the list as rows, while it streams and after.
func TestTaskCardRows(t *testing.T) {
	args := `{"tasks":[{"id":"a","content":"Write tests","status":"completed","activeForm":"Writing tests"},{"id":"b","content":"Ship","status":"in_progress","activeForm":"Shipping"}]}`
	c := toolCard(doneCall("task_write", args, `{"content":"ok"}`), nil)
	if len(c.Tasks) != 2 || c.Tasks[1].ActiveForm != "Shipping" {
		t.Fatalf("tasks %+v", c.Tasks)
	}
	html := renderCard(t, c)
	if !strings.Contains(html, `<li class="task task-completed"`) || strings.Contains(strings.SplitN(html, "tool-details", 2)[0], "&#34;tasks&#34;") {
		t.Fatalf("card: %s", html)
	}

	// Streaming: the rows fill as the model types.
	part := &agentcore.ToolInvocation{ToolCallID: "c2", ToolName: "task_write", State: "partial-call", ArgsText: args[:len(args)-40]}
	var prev argPreview
	live := toolCard(part, &prev)
	if live.Title != "Updating the task list" || len(live.Tasks) != 2 || live.Tasks[0].Content != "Write tests" {
		t.Fatalf("live card: %q %+v", live.Title, live.Tasks)
	}
	if len(live.Args) != 0 || live.Details != nil {
		t.Fatalf("live card shows raw JSON: %+v %+v", live.Args, live.Details)
	}
	if h := renderCard(t, live); strings.Contains(h, "&#34;") || !strings.Contains(h, "Write tests") {
		t.Fatalf("live card: %s", h)
	}
}

// A hunk of a diff starts with a separator that says where, not a
// unified-diff header.
func TestDiffHunkSeparator(t *testing.T) {
	var a, b strings.Builder
	for i := 1; i <= 30; i++ {
		a.WriteString("line " + string(rune('a'+i%26)) + "\n")
		if i == 20 {
			b.WriteString("changed\n")
		} else {
			b.WriteString("line " + string(rune('a'+i%26)) + "\n")
		}
	}
	diff, _ := unifiedDiff(a.String(), b.String(), maxDiffLines)
	if diff[0].Kind != "hunk" || diff[0].Text != "⋯ line 17" {
		t.Fatalf("first line %+v", diff[0])
	}
	for _, l := range diff {
		if strings.Contains(l.Text, "@@") {
			t.Fatalf("unified header: %+v", l)
		}
	}
}

// A payload too big to indent each frame shows its start, unescaped, cut.
func TestPrettyJSONLargePayload(t *testing.T) {
	big, _ := json.Marshal(map[string]string{"after": strings.Repeat("a > b\n", 20000)})
	got := prettyJSON(big)
	if len(got) > detailsPreview+100 || !strings.HasPrefix(got, `{"after":"a > b\na > b`) || !strings.Contains(got, "more bytes)") {
		t.Fatalf("large payload: %d bytes, starts %q", len(got), got[:40])
	}
}
