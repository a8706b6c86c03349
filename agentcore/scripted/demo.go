package scripted

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

const (
	demoDelay     = 25 * time.Millisecond // ~80 tokens/s: fast enough to read along, slow enough to see streaming
	demoChunkSize = 2
	quoteLimit    = 80 // runes of the user's message echoed back
)

var (
	wantsLong     = regexp.MustCompile(`(?i)\blong\b`)
	wantsMath     = regexp.MustCompile(`(?i)\b(math|maths|formulas?|equations?)\b`)
	wantsFiles    = regexp.MustCompile(`(?i)\b(files?|workspace|folder)\b`)
	wantsQuestion = regexp.MustCompile(`(?i)\b(question|ask me)\b`)
	wantsPlan     = regexp.MustCompile(`(?i)\bplan\b`)
	wantsTasks    = regexp.MustCompile(`(?i)\b(tasks?|todo)\b`)
	wantsEdit     = regexp.MustCompile(`(?i)\b(edit|write)\b`)
)

// demoPlan is the plan the demo writes in Plan mode.
const demoPlan = "# Add a dark theme\n\n" +
	"1. **Palette**: define the dark colours as CSS variables next to the light ones.\n" +
	"2. **Switch**: follow the OS with `prefers-color-scheme`, plus a toggle in Settings.\n" +
	"3. **Code blocks**: load a dark highlighting style for fenced code.\n" +
	"4. **Check**: screenshot every screen in both themes.\n"

// demoCode is the file the demo writes when asked to edit or write.
const demoCode = "package main\n\nimport \"fmt\"\n\n// main greets the world from Parley's demo.\nfunc main() {\n" +
	"\tfor i, name := range []string{\"world\", \"Parley\", \"you\"} {\n\t\tfmt.Printf(\"%d: hello, %s!\\n\", i+1, name)\n\t}\n}\n"

const demoTasks = `{"tasks":[` +
	`{"content":"Read the request","status":"completed","activeForm":"Reading the request"},` +
	`{"content":"Write the code","status":"in_progress","activeForm":"Writing the code"},` +
	`{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]}`

// demoAction shows one human-in-the-loop feature when asked for it and the
// request offers its tool. text is the user's own last message.
func demoAction(req Request, text string) (Reply, bool) {
	pace := func(r Reply) Reply { r.ChunkSize, r.Delay = demoChunkSize, demoDelay; return r }
	switch {
	case wantsPlan.MatchString(text) && planMode(req) && req.HasTool("write_file"):
		planJSON, _ := json.Marshal(map[string]string{"path": demoPlanPath, "content": demoPlan})
		return pace(Reply{Text: "I'll write the plan to a file first.", ToolCalls: []ToolCall{{Name: "write_file", Args: string(planJSON)}}}), true
	case wantsPlan.MatchString(text):
		return pace(Reply{Text: "To see a plan for approval, switch the composer to **Plan** (bottom left) and ask again: in Plan mode I explore read-only, write the plan to `.parley/plans/`, and submit it for your approval."}), true
	case wantsQuestion.MatchString(text) && req.HasTool("ask_user"):
		return pace(Reply{Text: "Sure — here is a question for you.", ToolCalls: []ToolCall{{Name: "ask_user",
			Args: `{"question":"Which theme should the demo use?","options":[{"label":"Light","description":"dark text on white"},{"label":"Dark","description":"light text on near-black"},{"label":"Follow the OS"}]}`}}}), true
	case wantsEdit.MatchString(text) && canWrite(req):
		return demoWrite("I'll write a small Go file; watch the card fill in as I type it."), true
	case wantsTasks.MatchString(text) && req.HasTool("task_write"):
		return Reply{Text: "Here is how I would split the work.", ToolCalls: []ToolCall{{Name: "task_write", Args: demoTasks}}, ChunkSize: 8, Delay: 30 * time.Millisecond}, true
	}
	return Reply{}, false
}

// demoPlanPath is where the demo writes its plan in Plan mode.
const demoPlanPath = ".parley/plans/dark-theme.md"

// planMode: the request is Plan mode's, which offers submit_plan and no
// command (Build offers every tool).
func planMode(req Request) bool { return req.HasTool("submit_plan") && !req.HasTool("execute_command") }

// canWrite: the request offers write_file outside Plan mode (where it
// writes only the plan).
func canWrite(req Request) bool { return req.HasTool("write_file") && !planMode(req) }

// demoWrite writes demoCode, slowly enough to watch its card fill in.
func demoWrite(text string) Reply {
	args, _ := json.Marshal(map[string]string{"path": "parley-demo/hello.go", "content": demoCode})
	return Reply{Text: text, ToolCalls: []ToolCall{{Name: "write_file", Args: string(args)}}, ChunkSize: 12, Delay: 40 * time.Millisecond}
}

// toolNameOf is the name of the call the tool message at i answers.
func (r Request) toolNameOf(i int) string {
	id := r.Messages[i].ToolCallID
	for j := i - 1; j >= 0; j-- {
		for _, c := range r.Messages[j].ToolCalls {
			if c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// Demo answers in demo mode (model demo/scripted). It says plainly that the
// replies are scripted and how to connect a real model, quotes the user's
// last message, and shows off markdown rendering. A message containing the
// word "long" gets a long answer, to try scrolling.
//
// It reads only the user's own words: the task list, signals and
// notifications the runtime adds to the prompt as user messages are not
// requests (Message.Injected). Each showcase (question, tasks, write, plan)
// runs once: after the result of its own call the demo either makes the
// showcase's one next call (tasks: write the file; plan: submit it) or ends
// with a closing sentence, whatever the result says (allowed, denied,
// answered), so no answer brings the same call back.
func Demo(req Request) Reply {
	switch i := req.LastSaid(); {
	case i >= 0 && req.Messages[i].Role == "tool":
		return demoAfter(req, req.toolNameOf(i), req.Messages[i].Content)
	case i >= 0 && req.Messages[i].Role == "assistant":
		return demoNoticed(req.Messages[i+1:])
	}
	text := req.LastUserText()
	if r, ok := demoAction(req, text); ok {
		return r
	}
	if wantsFiles.MatchString(text) && req.HasTool("find_files") {
		return Reply{
			Text:      "Let me look at the workspace.",
			ToolCalls: []ToolCall{{Name: "find_files", Args: `{"pattern":"**/*","maxResults":50}`}},
			ChunkSize: demoChunkSize,
			Delay:     demoDelay,
		}
	}
	reply := demoReply
	switch {
	case wantsLong.MatchString(text):
		reply = demoLong
	case wantsMath.MatchString(text):
		reply = demoMath
	}
	quote := ""
	if q := quoteOf(text); q != "" {
		quote = "You wrote:\n\n> " + q + "\n\n"
	}
	return Reply{
		Text:      strings.Replace(reply, "{quote}", quote, 1),
		ChunkSize: demoChunkSize,
		Delay:     demoDelay,
	}
}

// demoAfter answers the result of the demo's own call to tool: the
// showcase's next call, or its closing sentence.
func demoAfter(req Request, tool, result string) Reply {
	pace := func(text string) Reply { return Reply{Text: text, ChunkSize: demoChunkSize, Delay: demoDelay} }
	result = strings.TrimSpace(resultText(result))
	wrote := strings.HasPrefix(result, "Wrote ") // write_file's own success line
	switch tool {
	case "write_file":
		switch {
		case wrote && planMode(req): // the plan is written: submit it
			return Reply{ToolCalls: []ToolCall{{Name: "submit_plan", Args: `{"path":"` + demoPlanPath + `"}`}}, ChunkSize: demoChunkSize, Delay: demoDelay}
		case wrote:
			return pace("Written. The card above now shows the real diff of the file. A real model would go on to build and run it.")
		}
		return pace("Nothing was written. The tool answered: *" + oneLine(result) + "* — a real model would take that into account and try another way. That is the end of this demo; add a provider key to try a real one.")
	case "task_write":
		if canWrite(req) {
			return demoWrite("The list is pinned above the composer. Now the task in progress: I'll write the code, a small Go file; watch the card fill in as I type it.")
		}
		return pace("The list is pinned above the composer. A real model would now work through it, ticking tasks off as it goes. Add a provider key to try it.")
	case "submit_plan", "ask_user", "task_update", "task_complete", "task_check", "edit_file", "execute_command":
		return pace("The tool answered: *" + oneLine(result) + "* — a real model would carry on from here. Add a provider key to try it.")
	}
	return demoToolAnswer(result)
}

// resultText is what a tool result says: the content of a built-in's JSON
// result ({"content": …, "isError": …}, as Mastra's are), else the result.
func resultText(result string) string {
	var r struct {
		Content *string `json:"content"`
	}
	if strings.HasPrefix(result, "{") && json.Unmarshal([]byte(result), &r) == nil && r.Content != nil {
		return *r.Content
	}
	return result
}

// demoNoticed answers a turn in which only the runtime spoke (a
// notification or a state change woke the run): there is nothing of the
// user's to act on, and the markup is not shown as if the user had written
// it.
func demoNoticed(injected []Message) Reply {
	tag, contents := "", ""
	for _, m := range injected {
		if t, c, ok := m.element(); ok && tag != "notification" {
			tag, contents = t, c // a notification says most; the task list comes on every call
		}
	}
	text := "Something changed in this chat while I waited. The demo acts only on your own messages; a real model would take it into account."
	if tag == "notification" {
		text = "A notification arrived in this chat"
		if q := quoteOf(contents); q != "" {
			text += ":\n\n> " + q + "\n\n"
		} else {
			text += ". "
		}
		text += "A real model would read it and decide whether it needs you; the demo acts only on your own messages."
	}
	return Reply{Text: text, ChunkSize: demoChunkSize, Delay: demoDelay}
}

// oneLine keeps a tool's answer on one line, for quoting it in emphasis.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// demoToolAnswer answers from a tool result, as a real model would.
func demoToolAnswer(result string) Reply {
	lines := strings.Split(strings.TrimSpace(result), "\n")
	if len(lines) > 12 {
		lines = append(lines[:12], "…")
	}
	return Reply{
		Text: "That was a real tool call: `find_files` ran on your workspace, and its card above shows the arguments and the result. " +
			"Here is the start of what it found:\n\n```text\n" + strings.Join(lines, "\n") + "\n```\n\n" +
			"A real model decides on its own when to call a tool. Add a provider key to try it.",
		ChunkSize: demoChunkSize,
		Delay:     demoDelay,
	}
}

// quoteOf shortens text to one line of at most quoteLimit runes.
func quoteOf(text string) string {
	q := []rune(strings.Join(strings.Fields(text), " "))
	if len(q) > quoteLimit {
		return strings.TrimSpace(string(q[:quoteLimit-1])) + "…"
	}
	return string(q)
}

const demoReply = "**Hello! This is Parley's demo mode.** The replies here are scripted: no AI model has read your message yet.\n\n" +
	"{quote}" +
	"### Connect a real model\n\n" +
	"1. Set a provider key and start Parley again: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_API_KEY` or `OPENROUTER_API_KEY`.\n" +
	"2. Or pick a model yourself: `parley serve --model anthropic/claude-sonnet-4-5`, or a local one with `--model ollama/llama3.2`.\n\n" +
	"### Meanwhile, look around\n\n" +
	"| Try | To see |\n" +
	"|---|---|\n" +
	"| any message | a reply streamed token by token |\n" +
	"| a message with the word *long* | a long answer, for scrolling |\n" +
	"| a message with the word *math* | formulas typeset from TeX |\n" +
	"| the thread list | rename, pin and delete (hover a chat) |\n" +
	"| **Stop** while a reply streams | the partial reply is kept, marked stopped |\n" +
	"| a message with the word *files* | a tool call that lists your workspace, streamed into a card |\n" +
	"| a message with the word *question* | a question to answer (`ask_user`) |\n" +
	"| a message with the word *tasks* | a task list pinned above the composer, then a file written for its task |\n" +
	"| the word *plan*, in **Plan** mode | a plan for your approval (`submit_plan`) |\n" +
	"| a message with the word *write* | a file written live into its card, after your approval |\n\n" +
	"Code is highlighted and has a copy button:\n\n" +
	"```go\n" +
	"func greet(name string) string {\n" +
	"\treturn fmt.Sprintf(\"Hello, %s!\", name)\n" +
	"}\n" +
	"```\n"

const demoLong = "# A longer answer\n\n" +
	"{quote}" +
	"This reply is scripted too, and deliberately long, so you can watch the view follow the stream and then scroll back through it. " +
	"Add a provider key (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …) or start Parley with `--model` to talk to a real model.\n\n" +
	"## What happens when you send a message\n\n" +
	"Your message is saved first, before any model sees it, so nothing you type is lost if the app closes. " +
	"Then a *run* starts: Parley sends the conversation to the model and reads the answer as it arrives, a few characters at a time. " +
	"Every piece is published to the thread, and every open window or tab that shows the thread draws it. " +
	"Closing a tab never stops a run; open the thread again and it is still there, still streaming.\n\n" +
	"## Stopping and coming back\n\n" +
	"Press **Stop** (or Esc) and the run ends where it is: the partial reply stays, marked *stopped*, and you can write again at once. " +
	"If Parley itself is closed in the middle of a reply, what had arrived is kept and marked *interrupted* at the next start.\n\n" +
	"- a reply is written to the database about every 50 ms while it streams;\n" +
	"- every open tab subscribes to the thread, none of them owns the run;\n" +
	"- the model picker above the chat switches the model for this thread.\n\n" +
	"## Why local-first\n\n" +
	"Your conversations never leave this machine except as the prompt you send to the model you chose. " +
	"There is no account, no sync service and no telemetry; back up the one file and you have backed up everything. " +
	"Open the same data folder from the desktop window or from a browser tab and you see the same threads, live.\n\n" +
	"## Markdown, safely\n\n" +
	"Replies are rendered as Markdown on the server and sanitised before they reach the page, so a model cannot run script in it. " +
	"Code is highlighted and each block has a copy button:\n\n" +
	"```go\n" +
	"// Count the words of a reply.\n" +
	"func Count(reply string) int {\n" +
	"\treturn len(strings.Fields(reply))\n" +
	"}\n" +
	"```\n\n" +
	"## Where it is kept\n\n" +
	"Everything lives in one SQLite file on your machine: threads, messages and runs.\n\n" +
	"| What | Where |\n" +
	"|---|---|\n" +
	"| threads | the sidebar, pinned ones first |\n" +
	"| the conversation | this column, newest at the bottom |\n" +
	"| the data file | `~/.local/share/parley/parley.db` on Linux, or `--data` |\n\n" +
	"That is the tour. Send another message to see the short reply again, or add a key and ask something real.\n"

// DemoTitle names a demo chat as a model would: the first words of what
// the user wrote first, capitalised, without a full stop.
func DemoTitle(req Request) string {
	first, _, _ := strings.Cut(strings.TrimSpace(req.LastUserText()), "\n")
	words := strings.Fields(first)
	if len(words) > 6 {
		words = words[:6]
	}
	title := strings.TrimRight(strings.Join(words, " "), ".!?,;:")
	if title == "" {
		return ""
	}
	r := []rune(title)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// demoMath shows math as models write it: inline, display and a fence.
const demoMath = "{quote}Math in a reply is TeX, typeset by your browser: Euler's identity $e^{i\\pi} + 1 = 0$, " +
	"or the mean $\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$ inline, and on a line of its own:\n\n" +
	"$$\n\\int_{-\\infty}^{\\infty} e^{-x^2}\\,dx = \\sqrt{\\pi}\n$$\n\n" +
	"```math\n\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}^{-1} = \\frac{1}{ad - bc} \\begin{pmatrix} d & -b \\\\ -c & a \\end{pmatrix}\n```\n\n" +
	"A price is not math: this costs $5, that $10.\n"
