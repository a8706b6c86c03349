package scripted

import (
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
	plan.Messages = append(plan.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "w", Name: "write_file"}}}, Message{Role: "tool", ToolCallID: "w", Content: "{}"})
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
	r.Messages = append(r.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "w", Name: "write_file"}}}, Message{Role: "tool", ToolCallID: "w", Content: "Wrote"})
	if after := Demo(r); len(after.ToolCalls) != 0 || !strings.Contains(after.Text, "diff") {
		t.Fatalf("after the write: %+v", after)
	}
}
