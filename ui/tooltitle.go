package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"parley/app/chat"
	"parley/components"
)

const (
	// titleCode bounds the path, command or pattern in a card's title; the
	// body and Details show it whole.
	titleCode = 120
	// detailsPreview bounds each of Details' arguments and result: a write's
	// result holds the whole file twice.
	detailsPreview = 16000
	// detailsIndentMax is the largest payload Details indents whole; past
	// it (a write's result can hold 2 MiB) only the start is shown, as it
	// came: a card is rebuilt every frame of a reply being written.
	detailsIndentMax = 64 << 10
)

// builtinTools are the tools Parley ships (toolkit, app): their cards have a
// title and a body of their own, so the generic argument list is left out.
var builtinTools = map[string]bool{
	"view": true, "find_files": true, "search_content": true,
	"write_file": true, "edit_file": true, "delete_file": true, "mkdir": true,
	"execute_command": true, "web_fetch": true, "web_search": true,
	"ask_user": true, "submit_plan": true,
	"task_write": true, "task_update": true, "task_complete": true, "task_check": true,
}

// cardTitle is what a call does, in words, and the path, command or pattern
// it acts on (shown as code). state is the card's; a reads the arguments as
// the page may show them (nil: hidden or not yet written); result is the
// call's output when it has one.
func cardTitle(name, state string, a args, result json.RawMessage) (title, code string) {
	str := func(k string) string {
		if a == nil {
			return ""
		}
		s, _ := a.str(k)
		return firstLine(s, titleCode)
	}
	done := state == "done" || state == "error"
	tense := func(past, present string) string {
		if done {
			return past
		}
		return present
	}
	switch name {
	case "write_file":
		return "Write", str("path")
	case "edit_file":
		return "Edit", str("path")
	case "delete_file":
		return "Delete", str("path")
	case "mkdir":
		return "Create folder", str("path")
	case "view":
		var out struct{ Kind, Path string }
		_ = json.Unmarshal(result, &out)
		p := str("path")
		if out.Kind == "directory" {
			if p == "" || p == "." {
				return "Listed the workspace", ""
			}
			return "Listed", p
		}
		return "Read", p
	case "execute_command":
		verb := "Running"
		switch {
		case done:
			verb = "Ran"
		case state == "suspended":
			verb = "Run"
		}
		return verb, str("command")
	case "search_content":
		return tense("Searched for", "Searching for"), str("pattern")
	case "find_files":
		if p := str("pattern"); p != "" {
			return tense("Listed files matching", "Listing files matching"), p
		}
		if p := str("path"); p != "" {
			return tense("Listed files in", "Listing files in"), p
		}
		return tense("Listed files", "Listing files"), ""
	case "web_fetch":
		u := str("url")
		if parsed, err := url.Parse(u); err == nil && parsed.Host != "" {
			u = parsed.Host
		}
		if u == "" {
			u = "a page"
		}
		if state == "suspended" {
			return "Fetch " + u, "" // waiting for the user's approval
		}
		return tense("Fetched "+u, "Fetching "+u), ""
	case "web_search":
		if q := str("query"); q != "" {
			return tense("Searched the web for “"+q+"”", "Searching the web for “"+q+"”"), ""
		}
		return tense("Searched the web", "Searching the web"), ""
	case "ask_user":
		return "Asked:", ""
	case "submit_plan":
		if state == "input-streaming" {
			return "Proposing a plan:", ""
		}
		return "Proposed a plan:", ""
	case "task_write":
		return tense("Updated the task list", "Updating the task list"), ""
	case "task_update":
		return tense("Updated a task", "Updating a task"), ""
	case "task_complete":
		return tense("Completed a task", "Completing a task"), ""
	case "task_check":
		return tense("Checked the task list", "Checking the task list"), ""
	}
	return prettyName(name), ""
}

// prettyName is a tool's name as a title: "docs_lookup" reads "Docs
// lookup". It stays text: the page escapes it.
func prettyName(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '_' || r == '-':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, firstLine(name, titleCode))
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return "Tool"
	}
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[n:]
}

// resultBody is what a finished call's card shows of its result: the
// output, the content, the list, in words; ok is false when the tool has no
// reading of its own (the result is then shown generically).
func resultBody(name string, payload json.RawMessage) (text string, ok bool) {
	switch name {
	case "write_file", "edit_file", "delete_file", "mkdir", "ask_user", "submit_plan",
		"task_write", "task_update", "task_complete", "task_check":
		return "", true // the diff, the title, the answer, the plan, the rows say it
	case "execute_command":
		var out struct {
			Output   *string
			ExitCode int
			TimedOut bool
		}
		if json.Unmarshal(payload, &out) != nil || out.Output == nil {
			return "", false
		}
		text = tail(strings.TrimRight(*out.Output, "\n"), resultPreview)
		switch {
		case out.TimedOut:
			text = joinLines(text, "(timed out)")
		case out.ExitCode != 0:
			text = joinLines(text, "(exit code "+strconv.Itoa(out.ExitCode)+")")
		case text == "":
			text = "(no output)"
		}
		return text, true
	case "view", "search_content", "web_fetch":
		var out struct {
			Content *string
			Note    string
		}
		if json.Unmarshal(payload, &out) != nil || out.Content == nil {
			return "", false
		}
		text = *out.Content
		if text == "" && name == "search_content" {
			text = "No matches."
		}
		return clip(joinLines(strings.TrimRight(text, "\n"), out.Note), resultPreview), true
	case "find_files":
		var out struct {
			Files *[]string
			Note  string
		}
		if json.Unmarshal(payload, &out) != nil || out.Files == nil {
			return "", false
		}
		text = strings.Join(*out.Files, "\n")
		if text == "" {
			text = "No files."
		}
		return clip(joinLines(text, out.Note), resultPreview), true
	}
	return "", false
}

// plainResult shows any other result: a string as itself, an object as its
// members one a line, else pretty JSON.
func plainResult(payload json.RawMessage) string {
	var s string
	if json.Unmarshal(payload, &s) == nil {
		return s
	}
	if fs := fields(payload); len(fs) > 0 && bytes.HasPrefix(bytes.TrimSpace(payload), []byte("{")) {
		var b strings.Builder
		for i, f := range fs {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(f.Key + ": " + f.Value)
		}
		return b.String()
	}
	return prettyJSON(payload)
}

func joinLines(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n" + b
}

// cardTasks are the rows of a task tool's card: the list it returned, else
// the list it was given.
func cardTasks(argsJSON, result json.RawMessage) []components.Task {
	for _, raw := range []json.RawMessage{result, argsJSON} {
		var in struct {
			Tasks any `json:"tasks"`
		}
		if json.Unmarshal(raw, &in) == nil && in.Tasks != nil {
			if ts := taskViews(chat.PartialTasks(in.Tasks)); len(ts) > 0 {
				return ts
			}
		}
	}
	return nil
}

// prettyJSON is raw JSON indented, with the escapes a Go encoder adds for
// HTML (\u003c, \u003e, \u0026) and any other \u escape of a printable
// character written as the character: Details shows `2>&1`, not
// `2\u003e\u00261`. The page escapes the text. Not JSON: the bytes as they
// are.
func prettyJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if len(raw) > detailsIndentMax {
		cut := detailsPreview - 100 // under details' own cut, with the note
		for cut > 0 && !utf8RuneStart(raw[cut]) {
			cut--
		}
		return unescapeJSON(raw[:cut]) + fmt.Sprintf("\n… (%d more bytes)", len(raw)-cut)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return unescapeJSON(b.Bytes())
}

// unescapeJSON writes the \u escapes (four hex digits) of printable
// characters inside the strings of valid JSON as the characters; quotes,
// backslashes and control characters stay escaped, so the text is still
// JSON.
func unescapeJSON(s []byte) string {
	var out strings.Builder
	out.Grow(len(s))
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(s):
			if s[i+1] == 'u' {
				if r, n := decodeEscape(s[i:]); n > 0 {
					out.WriteRune(r)
					i += n - 1
					continue
				}
			}
			out.WriteByte(c)
			out.WriteByte(s[i+1])
			i++
			continue
		}
		out.WriteByte(c)
	}
	return out.String()
}

// decodeEscape reads a \u escape of four hex digits (or a surrogate pair)
// at the start of s: the character and the bytes read, or n == 0 when it
// must stay escaped.
func decodeEscape(s []byte) (r rune, n int) {
	hex := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex(s)
	if !ok {
		return 0, 0
	}
	n = 6
	if r >= 0xD800 && r < 0xDC00 {
		lo, ok := hex(s[6:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		r, n = (r-0xD800)<<10+(lo-0xDC00)+0x10000, 12
	}
	if !utf8.ValidRune(r) || r == '"' || r == '\\' || !unicode.IsPrint(r) && r != ' ' {
		return 0, 0
	}
	return r, n
}

// details are a call's raw arguments and result, pretty-printed and cut.
func details(argsJSON, result json.RawMessage) *components.ToolDetails {
	d := &components.ToolDetails{Args: clip(prettyJSON(argsJSON), detailsPreview), Result: clip(prettyJSON(result), detailsPreview)}
	if d.Args == "" && d.Result == "" {
		return nil
	}
	return d
}
