package scripted

import (
	"regexp"
	"strings"
	"time"
)

const (
	demoDelay     = 25 * time.Millisecond // ~80 tokens/s: fast enough to read along, slow enough to see streaming
	demoChunkSize = 2
	quoteLimit    = 80 // runes of the user's message echoed back
)

var wantsLong = regexp.MustCompile(`(?i)\blong\b`)

// Demo answers in demo mode (model demo/scripted). It says plainly that the
// replies are scripted and how to connect a real model, quotes the user's
// last message, and shows off markdown rendering. A message containing the
// word "long" gets a long answer, to try scrolling.
func Demo(req Request) Reply {
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
	"2. Or pick a model yourself: `parley --model anthropic/claude-sonnet-4-5`, or a local one with `--model ollama/llama3.2`.\n" +
	"3. Or add a key in **Settings**.\n\n" +
	"### Meanwhile, look around\n\n" +
	"| Try | To see |\n" +
	"|---|---|\n" +
	"| any message | a reply streamed token by token |\n" +
	"| a message with the word *long* | a long answer, for scrolling |\n" +
	"| the thread list | rename, pin, search and export |\n\n" +
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
	"## Tools, questions and plans\n\n" +
	"A real model can call tools. You see each call as a card while the model is still writing it:\n\n" +
	"- the **path** of the file it is about to touch appears first;\n" +
	"- an edit shows as a **live diff** that grows with the arguments;\n" +
	"- the **result** lands in the same card when the tool is done.\n\n" +
	"When the agent needs you, it stops and asks. A question can offer choices or take free text, and a plan can be approved, " +
	"rejected or sent back with changes while it stays on screen. Anything waiting for you is also collected in the **inbox**, " +
	"so it survives a restart and can be answered from there.\n\n" +
	"## Keeping track\n\n" +
	"Longer jobs keep a task list pinned above the conversation, such as `Tasks [2/5]`, with the item in progress spelled out. " +
	"Token usage is shown per reply, and a thread can be exported to Markdown or JSON:\n\n" +
	"```go\n" +
	"// Export writes a thread as Markdown.\n" +
	"func Export(w io.Writer, t Thread) error {\n" +
	"\tfor _, m := range t.Messages {\n" +
	"\t\tif _, err := fmt.Fprintf(w, \"**%s:** %s\\n\\n\", m.Role, m.Text); err != nil {\n" +
	"\t\t\treturn err\n" +
	"\t\t}\n" +
	"\t}\n" +
	"\treturn nil\n" +
	"}\n" +
	"```\n\n" +
	"## Where it is kept\n\n" +
	"Everything lives in one SQLite file on your machine: threads, messages, answers and settings. " +
	"Search covers every message and jumps to the one that matched, even in a long thread.\n\n" +
	"| Feature | Where |\n" +
	"|---|---|\n" +
	"| threads and search | the sidebar |\n" +
	"| questions, plans, approvals | the inbox |\n" +
	"| tasks | pinned above the chat |\n" +
	"| theme and keys | Settings |\n\n" +
	"That is the tour. Send another message to see the short reply again, or add a key and ask something real.\n"
