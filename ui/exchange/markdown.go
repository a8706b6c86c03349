package exchange

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"parley/agentcore"
	"parley/app/attach"
)

// Markdown is thread t as a document to read: each message under a heading
// with its author and time, replies' tool calls as collapsible blocks with
// their arguments and results, and the tokens a reply used. msgs is the
// thread's whole tree, as for JSON: the document is the branch the chat
// shows (the Active messages), and says how many other versions it leaves
// out, when there are any.
func Markdown(t agentcore.Thread, msgs []agentcore.Message, exportedAt time.Time) []byte {
	var b bytes.Buffer
	title := t.Title
	if title == "" {
		title = "New chat"
	}
	branch := make([]agentcore.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Active {
			branch = append(branch, m)
		}
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	fmt.Fprintf(&b, "*Exported from Parley on %s · %d messages · thread `%s`*\n",
		exportedAt.UTC().Format("2 Jan 2006 15:04 UTC"), len(branch), t.ID)
	if n := len(msgs) - len(branch); n > 0 {
		what := "other versions of messages"
		if n == 1 {
			what = "other version of a message"
		}
		fmt.Fprintf(&b, "\n*This chat has %d %s not shown here; Parley's JSON export keeps them all.*\n", n, what)
	}
	for _, m := range branch {
		b.WriteString("\n---\n\n")
		writeMessage(&b, m)
	}
	return b.Bytes()
}

func writeMessage(b *bytes.Buffer, m agentcore.Message) {
	who := "You"
	switch m.Role {
	case agentcore.RoleAssistant:
		who = "Parley"
		if model, _ := m.Content.Metadata["model"].(string); model != "" {
			who += " · " + model
		}
	case agentcore.RoleSystem:
		who = "System"
	case agentcore.RoleSignal:
		who = "Signal"
		if m.Type != "" {
			who += " · " + m.Type
		}
	}
	fmt.Fprintf(b, "### %s\n\n", who)
	fmt.Fprintf(b, "*%s*\n\n", m.CreatedAt.UTC().Format("2 Jan 2006 15:04 UTC"))
	if m.Role != agentcore.RoleAssistant {
		b.WriteString(strings.TrimSpace(m.Content.Text()))
		b.WriteString("\n")
		for _, p := range m.Content.Parts {
			if p.Type == "file" {
				fmt.Fprintf(b, "\n- Attached: %s (%s, %s)", inline(p.Filename), oneLine(p.MimeType), attach.Size(p.Size))
			}
		}
		return
	}
	for _, p := range m.Content.Parts {
		switch p.Type {
		case "text":
			if s := strings.TrimSpace(p.Text); s != "" {
				b.WriteString(s + "\n\n")
			}
		case "reasoning":
			if s := strings.TrimSpace(p.Text); s != "" {
				b.WriteString("<details><summary>Reasoning</summary>\n\n" + quote(s) + "\n\n</details>\n\n")
			}
		case "source":
			if p.Source != nil {
				fmt.Fprintf(b, "- Source: <%s>%s\n\n", p.Source.URL, titled(p.Source.Title))
			}
		case "tool-invocation":
			if p.ToolInvocation != nil {
				writeTool(b, *p.ToolInvocation)
			}
		}
	}
	switch m.Status {
	case agentcore.StatusInterrupted:
		b.WriteString("*(stopped before the reply was finished)*\n\n")
	case agentcore.StatusError:
		e, _ := m.Content.Metadata["error"].(string)
		fmt.Fprintf(b, "*(the model could not answer: %s)*\n\n", oneLine(e))
	}
	if u, ok := agentcore.MessageUsage(m.Content); ok {
		fmt.Fprintf(b, "*%s tokens in · %s out*\n", grouped(u.InputTokens+u.CachedTokens), grouped(u.OutputTokens))
	}
}

func writeTool(b *bytes.Buffer, ti agentcore.ToolInvocation) {
	state := ti.State
	switch {
	case ti.State == "result" && ti.IsError:
		state = "failed"
	case ti.State == "result":
		state = "done"
	case ti.State == "suspended":
		state = "waiting for the user"
	}
	fmt.Fprintf(b, "<details><summary>Tool call: <code>%s</code> (%s)</summary>\n\n", ti.ToolName, state)
	args := ti.Args
	if len(args) == 0 && ti.ArgsText != "" {
		args = json.RawMessage(ti.ArgsText)
	}
	if len(args) > 0 {
		b.WriteString("Arguments:\n\n" + fence("json", pretty(args)) + "\n")
	}
	if len(ti.ResumeData) > 0 {
		b.WriteString("Answer:\n\n" + fence("json", pretty(ti.ResumeData)) + "\n")
	}
	if len(ti.Result) > 0 {
		label := "Result"
		if ti.IsError {
			label = "Error"
		}
		b.WriteString(label + ":\n\n" + fence("", resultText(ti.Result)) + "\n")
	}
	b.WriteString("</details>\n\n")
}

// pretty indents JSON; text that is not JSON stays as it is.
func pretty(raw json.RawMessage) string {
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return string(raw)
	}
	return out.String()
}

// resultText is a JSON string result as its text, anything else indented.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return pretty(raw)
}

// fence wraps s in a code fence longer than any backtick run inside it.
func fence(lang, s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}

func titled(t string) string {
	if t == "" {
		return ""
	}
	return " — " + oneLine(t)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// grouped writes n with thousands separators: 12,345.
func grouped(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// inline is s as a Markdown code span, so nothing in it is markup: fenced
// by one more backtick than its longest run, padded when it starts or ends
// with one.
func inline(s string) string {
	s = oneLine(s)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
