package scripted

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func demoRequest(text string) Request {
	return Request{Model: "scripted", Stream: true, Messages: []Message{
		{Role: "system", Content: "You are Parley."},
		{Role: "user", Content: text},
	}}
}

func TestDemo(t *testing.T) {
	r := Demo(demoRequest("How do I\nrename a thread?"))
	for _, want := range []string{
		"scripted", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "--model", // says what it is and how to leave
		"> How do I rename a thread?",             // quotes the user on one line
		"**", "### ", "\n1. ", "|---|", "```go\n", // shows off markdown
	} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("demo reply lacks %q:\n%s", want, r.Text)
		}
	}
	if r.Delay <= 0 || r.ChunkSize < 1 || r.ChunkSize > 2 {
		t.Errorf("pace: delay %v, chunk size %d", r.Delay, r.ChunkSize)
	}
	if strings.Count(r.Text, "```")%2 != 0 {
		t.Error("unbalanced code fence")
	}
}

func TestDemoLong(t *testing.T) {
	for _, msg := range []string{"give me a LONG answer", "long"} {
		r := Demo(demoRequest(msg))
		n := len(split(r.Text))
		if n < 500 || n > 800 {
			t.Errorf("%q: %d tokens, want about 600", msg, n)
		}
		if !strings.Contains(r.Text, "scripted") || strings.Count(r.Text, "\n\n") < 8 {
			t.Errorf("%q: not a multi-paragraph scripted reply:\n%s", msg, r.Text)
		}
	}
	if text := Demo(demoRequest("belong to longer")).Text; strings.Contains(text, "# A longer answer") {
		t.Error(`"long" inside other words gave the long reply`)
	}
}

func TestDemoQuote(t *testing.T) {
	long := strings.Repeat("word ", 40)
	r := Demo(demoRequest(long))
	line := ""
	for l := range strings.Lines(r.Text) {
		if strings.HasPrefix(l, "> ") {
			line = strings.TrimSpace(strings.TrimPrefix(l, "> "))
		}
	}
	if !strings.HasSuffix(line, "…") || utf8.RuneCountInString(line) > quoteLimit {
		t.Errorf("quote = %q", line)
	}
	if r := Demo(Request{}); strings.Contains(r.Text, "You wrote") || strings.Contains(r.Text, "{quote}") {
		t.Errorf("empty request quoted something:\n%s", r.Text)
	}
}

func TestDemoToolCall(t *testing.T) {
	req := demoRequest("which files are here?")
	if r := Demo(req); len(r.ToolCalls) != 0 {
		t.Fatal("called find_files although the request offers no such tool")
	}
	req.Tools = []Tool{{Type: "function", Function: Function{Name: "find_files"}}}
	r := Demo(req)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "find_files" || !strings.Contains(r.ToolCalls[0].Args, "pattern") {
		t.Fatalf("tool calls %+v", r.ToolCalls)
	}
	req.Messages = append(req.Messages,
		Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "find_files", Args: "{}"}}},
		Message{Role: "tool", ToolCallID: "c1", Content: "README.md\nmain.go"})
	r = Demo(req)
	if len(r.ToolCalls) != 0 || !strings.Contains(r.Text, "README.md\nmain.go") {
		t.Fatalf("answer from the tool result: %+v", r)
	}
}

func TestDemoHumanInTheLoop(t *testing.T) {
	offer := func(text string, tools ...string) Request {
		r := demoRequest(text)
		for _, n := range tools {
			r.Tools = append(r.Tools, Tool{Type: "function", Function: Function{Name: n}})
		}
		return r
	}
	if r := Demo(offer("ask me a question", "ask_user")); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "ask_user" {
		t.Errorf("question: %+v", r.ToolCalls)
	}
	if r := Demo(offer("show me tasks", "task_write")); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "task_write" {
		t.Errorf("tasks: %+v", r.ToolCalls)
	}
	if r := Demo(offer("make a plan", "ask_user")); len(r.ToolCalls) != 0 || !strings.Contains(r.Text, "Plan") {
		t.Errorf("plan outside plan mode: %+v", r)
	}
	plan := offer("make a plan", "write_file", "submit_plan")
	r := Demo(plan)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "write_file" || !strings.Contains(r.ToolCalls[0].Args, ".parley/plans/dark-theme.md") {
		t.Fatalf("plan: %+v", r.ToolCalls)
	}
	plan.Messages = append(plan.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "w", Name: "write_file"}}}, Message{Role: "tool", ToolCallID: "w", Content: "Wrote .parley/plans/dark-theme.md (300 bytes, created)"})
	if r := Demo(plan); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "submit_plan" {
		t.Errorf("after writing the plan: %+v", r.ToolCalls)
	}
}

func TestDemoLiveEdit(t *testing.T) {
	r := demoRequest("write something")
	r.Tools = []Tool{{Type: "function", Function: Function{Name: "write_file"}}}
	reply := Demo(r)
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Name != "write_file" || !strings.Contains(reply.ToolCalls[0].Args, "parley-demo/hello.go") || reply.Delay == 0 {
		t.Fatalf("edit demo: %+v", reply)
	}
	r.Messages = append(r.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "w", Name: "write_file"}}}, Message{Role: "tool", ToolCallID: "w", Content: "Wrote parley-demo/hello.go (190 bytes, created)"})
	if after := Demo(r); len(after.ToolCalls) != 0 || !strings.Contains(after.Text, "diff") {
		t.Fatalf("after the write: %+v", after)
	}
}

// offer is a demo request for text that offers tools.
func offer(text string, tools ...string) Request {
	r := demoRequest(text)
	for _, n := range tools {
		r.Tools = append(r.Tools, Tool{Type: "function", Function: Function{Name: n}})
	}
	return r
}

// taskList is the task lane as the runtime appends it after every step: a
// user message, the list's text naming what to write.
const taskList = "<current-task-list version=\"1\">\n  ✓ [completed] {id: read} Read the request\n" +
	"  ▸ [in_progress] {id: write} Write the code\n  ○ [pending] {id: test} Run the tests\n</current-task-list>"

func TestInjected(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{taskList, true},
		{`<task-list-update version="2">  + {id: x} [pending] Write a file</task-list-update>`, true},
		{`<notification id="n1" kind="build" priority="high">Build failed: write error</notification>`, true},
		{`<state id="file" />`, true},
		{"  <system-reminder>Write less.</system-reminder>\n", true},
		{"please write a file", false},
		{"<b>write</b> it", false},
		{"<b>write</i>", false},
		{"<a><b>nested</b></a>", false}, // contents are escaped in what the runtime adds
		{"x < y and y > z", false},
		{"", false},
	} {
		if got := (Message{Role: "user", Content: tc.text}).Injected(); got != tc.want {
			t.Errorf("Injected(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if (Message{Role: "tool", Content: taskList}).Injected() {
		t.Error("a tool result counted as injected")
	}
}

// The demo acts on the user's own words, never on the task list, a signal
// or a notification the runtime added after them.
func TestDemoReadsOnlyTheUsersWords(t *testing.T) {
	req := offer("hello there", "write_file", "task_write", "ask_user")
	req.Messages = append(req.Messages, Message{Role: "user", Content: taskList},
		Message{Role: "user", Content: `<system-reminder>Ask the user a question.</system-reminder>`})
	if got := req.LastUserText(); got != "hello there" {
		t.Fatalf("LastUserText = %q", got)
	}
	r := Demo(req)
	if len(r.ToolCalls) != 0 || !strings.Contains(r.Text, "> hello there") || strings.Contains(r.Text, "current-task-list") {
		t.Fatalf("reply to the user's words: %+v", r)
	}

	// A notification wakes the run after the demo's last reply: nothing of
	// the user's is new, and neither the old words nor the tag are acted on.
	req = offer("ask me a question", "ask_user")
	req.Messages = append(req.Messages,
		Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "q", Name: "ask_user"}}},
		Message{Role: "tool", ToolCallID: "q", Content: "User answered: Dark"},
		Message{Role: "assistant", Content: "The tool answered: *User answered: Dark*."},
		Message{Role: "user", Content: `<notification id="n1" kind="build">Build &lt;main&gt; failed</notification>`},
		Message{Role: "user", Content: taskList})
	r = Demo(req)
	if len(r.ToolCalls) != 0 || !strings.Contains(r.Text, "Build <main> failed") || strings.Contains(r.Text, "<notification") {
		t.Fatalf("reply to a notification: %+v", r)
	}
}

// Every showcase runs once and ends, whatever the user answers: the loop
// plays the runtime (each call's result, then the task list appended as a
// user message, as on every model call) until the demo stops calling tools.
func TestDemoShowcasesEndAfterOnePass(t *testing.T) {
	build := []string{"write_file", "task_write", "ask_user", "find_files"}
	plan := []string{"write_file", "submit_plan", "ask_user", "task_write"}
	allow := func(c ToolCall) string {
		switch c.Name {
		case "write_file":
			return "Wrote parley-demo/hello.go (190 bytes, created)"
		case "task_write":
			return "Tasks updated: 3 tasks."
		case "submit_plan":
			return "Plan approved. Proceed with implementation following the approved plan."
		}
		return "User answered: Dark"
	}
	deny := func(c ToolCall) string {
		switch c.Name {
		case "write_file":
			return "The user denied this tool call; write_file was not run. Their reason: please write it elsewhere"
		}
		return allow(c)
	}
	changes := func(c ToolCall) string {
		if c.Name == "submit_plan" {
			return "Plan was not approved. The user wants revisions.\n\nUser feedback: write more tasks"
		}
		return allow(c)
	}
	for _, tc := range []struct {
		name, words string
		tools       []string
		answer      func(ToolCall) string
		want        []string // the calls, in order
		closing     string
	}{
		{"tasks, allowed", "Break this into tasks please", build, allow, []string{"task_write", "write_file"}, "Written."},
		{"tasks, denied", "Break this into tasks please", build, deny, []string{"task_write", "write_file"}, "Nothing was written"},
		{"write, allowed", "write me a file", build, allow, []string{"write_file"}, "Written."},
		{"write, denied", "write me a file", build, deny, []string{"write_file"}, "Nothing was written"},
		{"question", "ask me a question about tasks", build, allow, []string{"ask_user"}, "User answered: Dark"},
		{"plan, approved", "make a plan", plan, allow, []string{"write_file", "submit_plan"}, "Plan approved"},
		{"plan, not written", "make a plan", plan, deny, []string{"write_file"}, "Nothing was written"},
		{"plan, changes requested", "make a plan", plan, changes, []string{"write_file", "submit_plan"}, "write more tasks"},
		{"tasks without write_file", "list the tasks", []string{"task_write"}, allow, []string{"task_write"}, "pinned above the composer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			history := offer(tc.words, tc.tools...)
			var calls []string
			for step := 0; ; step++ {
				if step > 5 {
					t.Fatalf("no end after %d calls: %v", step, calls)
				}
				req := history
				req.Messages = append(append([]Message(nil), history.Messages...), Message{Role: "user", Content: taskList})
				r := Demo(req)
				if len(r.ToolCalls) == 0 {
					if !strings.Contains(r.Text, tc.closing) {
						t.Errorf("closing %q lacks %q", r.Text, tc.closing)
					}
					break
				}
				c := r.ToolCalls[0]
				c.ID = fmt.Sprintf("call%d", step)
				calls = append(calls, c.Name)
				history.Messages = append(history.Messages,
					Message{Role: "assistant", Content: r.Text, ToolCalls: []ToolCall{c}},
					Message{Role: "tool", ToolCallID: c.ID, Content: tc.answer(c)})
			}
			if !slices.Equal(calls, tc.want) {
				t.Errorf("calls %v, want %v", calls, tc.want)
			}
		})
	}
}

// The demo names a chat from the first words the user wrote.
func TestDemoTitle(t *testing.T) {
	for in, want := range map[string]string{
		"break this into tasks please.":                        "Break this into tasks please",
		"Add a dark theme to the settings page, with a toggle": "Add a dark theme to the",
		"  ": "",
	} {
		req := Request{Messages: []Message{{Role: "system", Content: TitleMarker}, {Role: "user", Content: in}}}
		if got := DemoTitle(req); got != want {
			t.Errorf("DemoTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// The word math gets formulas in each of the ways models write them, and a
// price that must stay text.
func TestDemoMath(t *testing.T) {
	r := Demo(offer("show me some math please"))
	for _, want := range []string{`$e^{i\pi} + 1 = 0$`, "$$\n", "```math\n", "costs $5, that $10."} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the math showcase lacks %q:\n%s", want, r.Text)
		}
	}
	if len(r.ToolCalls) != 0 {
		t.Errorf("the math showcase calls %v", r.ToolCalls)
	}
	if !strings.Contains(Demo(offer("hi")).Text, "the word *math*") {
		t.Error("the demo's table does not offer the math showcase")
	}
}
