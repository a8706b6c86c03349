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
	`{"content":"Sketch the change","status":"in_progress","activeForm":"Sketching the change"},` +
	`{"content":"Write the code","status":"pending","activeForm":"Writing the code"},` +
	`{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]}`

// demoAction shows one human-in-the-loop feature when asked for it and the
// request offers its tool.
func demoAction(req Request) (Reply, bool) {
	text := req.LastUserText()
	pace := func(r Reply) Reply { r.ChunkSize, r.Delay = demoChunkSize, demoDelay; return r }
	switch {
	case wantsPlan.MatchString(text) && req.HasTool("submit_plan") && req.HasTool("write_file"):
		planJSON, _ := json.Marshal(map[string]string{"path": ".parley/plans/dark-theme.md", "content": demoPlan})
		return pace(Reply{Text: "I'll write the plan to a file first.", ToolCalls: []ToolCall{{Name: "write_file", Args: string(planJSON)}}}), true
	case wantsPlan.MatchString(text):
		return pace(Reply{Text: "To see a plan for approval, switch the composer to **Plan** (bottom left) and ask again: in Plan mode I explore read-only, write the plan to `.parley/plans/`, and submit it for your approval."}), true
	case wantsQuestion.MatchString(text) && req.HasTool("ask_user"):
		return pace(Reply{Text: "Sure — here is a question for you.", ToolCalls: []ToolCall{{Name: "ask_user",
			Args: `{"question":"Which theme should the demo use?","options":[{"label":"Light","description":"dark text on white"},{"label":"Dark","description":"light text on near-black"},{"label":"Follow the OS"}]}`}}}), true
	case wantsEdit.MatchString(text) && req.HasTool("write_file") && !req.HasTool("submit_plan"):
		args, _ := json.Marshal(map[string]string{"path": "parley-demo/hello.go", "content": demoCode})
		return Reply{Text: "I'll write a small Go file; watch the card fill in as I type it.", ToolCalls: []ToolCall{{Name: "write_file", Args: string(args)}}, ChunkSize: 12, Delay: 40 * time.Millisecond}, true
	case wantsTasks.MatchString(text) && req.HasTool("task_write"):
		return Reply{Text: "Here is how I would split the work.", ToolCalls: []ToolCall{{Name: "task_write", Args: demoTasks}}, ChunkSize: 8, Delay: 30 * time.Millisecond}, true
	}
	return Reply{}, false
}

// lastToolName is the tool whose result ends the request.
func (r Request) lastToolName() string {
	n := len(r.Messages)
	if n == 0 || r.Messages[n-1].Role != "tool" {
		return ""
	}
	id := r.Messages[n-1].ToolCallID
	for i := n - 1; i >= 0; i-- {
		for _, c := range r.Messages[i].ToolCalls {
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
func Demo(req Request) Reply {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		result := req.Messages[n-1].Content
		switch req.lastToolName() {
		case "write_file":
			if req.HasTool("submit_plan") { // Plan mode: the plan is written, submit it
				return Reply{ToolCalls: []ToolCall{{Name: "submit_plan", Args: `{"path":".parley/plans/dark-theme.md"}`}}, ChunkSize: demoChunkSize, Delay: demoDelay}
			}
			return Reply{Text: "Written. The card above now shows the real diff of the file. A real model would go on to build and run it.", ChunkSize: demoChunkSize, Delay: demoDelay}
		case "submit_plan", "ask_user", "task_write", "edit_file", "execute_command":
			return Reply{Text: "The tool answered: *" + strings.TrimSpace(result) + "* — a real model would carry on from here. Add a provider key to try it.", ChunkSize: demoChunkSize, Delay: demoDelay}
		}
		return demoToolAnswer(result)
	}
	if r, ok := demoAction(req); ok {
		return r
	}
	if wantsFiles.MatchString(req.LastUserText()) && req.HasTool("find_files") {
		return Reply{
			Text:      "Let me look at the workspace.",
			ToolCalls: []ToolCall{{Name: "find_files", Args: `{"pattern":"**/*","maxResults":50}`}},
			ChunkSize: demoChunkSize,
			Delay:     demoDelay,
		}
	}
	text := demoReply
	if wantsLong.MatchString(req.LastUserText()) {
		text = demoLong
	}
	quote := ""
	if q := quoteOf(req.LastUserText()); q != "" {
		quote = "You wrote:\n\n> " + q + "\n\n"
	}
	return Reply{
		Text:      strings.Replace(text, "{quote}", quote, 1),
		ChunkSize: demoChunkSize,
		Delay:     demoDelay,
	}
}

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
	"| the thread list | rename, pin and delete (hover a chat) |\n" +
	"| **Stop** while a reply streams | the partial reply is kept, marked stopped |\n" +
	"| a message with the word *files* | a tool call that lists your workspace, streamed into a card |\n" +
	"| a message with the word *question* | a question to answer (`ask_user`) |\n" +
	"| a message with the word *tasks* | a task list pinned above the composer |\n" +
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
