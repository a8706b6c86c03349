package ui

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"parley/agentcore"
	"parley/components"
	"parley/ui/markdown"
)

const (
	// previewTail is how many lines of a file being written the card shows:
	// the newest lines, which scroll as the content streams.
	previewTail = 20
	// liveDiffLines is how many lines of a diff being typed the card shows
	// (the last ones, Mastra Code shows 15).
	liveDiffLines = 15
	// diffContext is the context lines around each change of a final diff.
	diffContext = 3
	// maxDiffLines bounds a final diff in a card.
	maxDiffLines = 400
)

// previewKeys are the arguments a preview shows itself; the generic
// argument list leaves them out.
var previewKeys = map[string]bool{"path": true, "old_str": true, "new_str": true, "content": true, "command": true, "pattern": true}

// args reads a call's arguments: from the live parser while the call is
// written, else from its final JSON.
type args interface {
	str(key string) (string, bool)
}

type finalArgs map[string]any

func (f finalArgs) str(key string) (string, bool) {
	s, ok := f[key].(string)
	return s, ok
}

type liveArgs struct{ st *argParser }

func (l liveArgs) str(key string) (string, bool) { return l.st.p.String(key) }

// preview builds the live or final preview of a workspace tool's call; nil
// for other tools.
func preview(ti *agentcore.ToolInvocation, st *argParser) *components.Preview {
	switch ti.ToolName {
	case "view", "find_files", "search_content", "write_file", "edit_file", "delete_file", "mkdir", "execute_command":
	default:
		return nil
	}
	var a args
	if ti.State == "partial-call" {
		if st == nil {
			return nil
		}
		a = liveArgs{st}
	} else {
		var f finalArgs
		_ = json.Unmarshal(ti.Args, &f)
		a = f
	}
	p := &components.Preview{}
	if v, ok := a.str("path"); ok && v != "" {
		p.Path, p.Ext = v, fileExt(v)
	}
	if v, ok := a.str("command"); ok {
		p.Command = v
	}
	if v, ok := a.str("pattern"); ok {
		p.Pattern = v
	}
	final := ti.State == "result" && !ti.IsError
	switch ti.ToolName {
	case "edit_file":
		if final {
			finalDiff(p, ti.Result)
		} else if old, ok := a.str("old_str"); ok {
			neu, _ := a.str("new_str")
			liveDiff(p, old, neu)
		}
	case "write_file":
		if final {
			finalDiff(p, ti.Result)
		} else if content, ok := a.str("content"); ok {
			writing(p, content, st)
		}
	}
	return p
}

// fileExt is the badge of a file type.
func fileExt(name string) string {
	ext := strings.TrimPrefix(path.Ext(name), ".")
	if ext == "" || len(ext) > 5 {
		return "file"
	}
	return strings.ToLower(ext)
}

// liveDiff is Mastra Code's diff of an edit being typed: lines compared by
// position, a changed line as removed then added, the last lines shown.
func liveDiff(p *components.Preview, old, neu string) {
	ol, nl := splitLines(old), splitLines(neu)
	var out []components.DiffLine
	for i := 0; i < max(len(ol), len(nl)); i++ {
		switch {
		case i < len(ol) && i < len(nl) && ol[i] == nl[i]:
			out = append(out, components.DiffLine{Kind: "ctx", Text: ol[i]})
		default:
			if i < len(ol) {
				out = append(out, components.DiffLine{Kind: "del", Text: ol[i]})
			}
			if i < len(nl) {
				out = append(out, components.DiffLine{Kind: "add", Text: nl[i]})
			}
		}
	}
	if len(out) > liveDiffLines {
		p.DiffNote = fmt.Sprintf("… %d lines above", len(out)-liveDiffLines)
		out = out[len(out)-liveDiffLines:]
	}
	p.Diff = out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// writing shows the newest lines of content being written, highlighted,
// with the line count. Its cost does not grow with what was written
// before: lines are counted over the new bytes only, and only the tail is
// highlighted.
func writing(p *components.Preview, content string, st *argParser) {
	lines := 0
	if st != nil {
		if len(content) < st.counted {
			st.counted, st.lines = 0, 0
		}
		st.lines += strings.Count(content[st.counted:], "\n")
		st.counted = len(content)
		lines = st.lines
	} else {
		lines = strings.Count(content, "\n")
	}
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	start := len(content)
	for n := 0; start > 0 && n <= previewTail; {
		start--
		if content[start] == '\n' {
			n++
			if n > previewTail {
				start++
				break
			}
		}
	}
	tail := content[start:]
	p.Lines = lines
	p.Above = max(0, lines-strings.Count(strings.TrimSuffix(tail, "\n"), "\n")-1)
	p.Code = markdown.HighlightFile(p.Path, tail)
}

// finalDiff is the real diff of the file, before → after, from the tool's
// result, with context around each change.
func finalDiff(p *components.Preview, result json.RawMessage) {
	var r struct {
		Before *string `json:"before"`
		After  *string `json:"after"`
	}
	if json.Unmarshal(result, &r) != nil || r.Before == nil || r.After == nil {
		return
	}
	p.Diff, p.DiffNote = unifiedDiff(*r.Before, *r.After)
}

// unifiedDiff is a line diff of a and b with diffContext lines of context
// around changes and a hunk line between far-apart changes.
func unifiedDiff(a, b string) ([]components.DiffLine, string) {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var all []components.DiffLine
	o, n := 1, 1
	for _, d := range diffs {
		for _, l := range splitLines(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				all = append(all, components.DiffLine{Kind: "ctx", Old: o, New: n, Text: l})
				o, n = o+1, n+1
			case diffmatchpatch.DiffDelete:
				all = append(all, components.DiffLine{Kind: "del", Old: o, Text: l})
				o++
			case diffmatchpatch.DiffInsert:
				all = append(all, components.DiffLine{Kind: "add", New: n, Text: l})
				n++
			}
		}
	}
	keep := make([]bool, len(all))
	changes := 0
	for i, l := range all {
		if l.Kind == "ctx" {
			continue
		}
		changes++
		for j := max(0, i-diffContext); j <= min(len(all)-1, i+diffContext); j++ {
			keep[j] = true
		}
	}
	if changes == 0 {
		return nil, "no changes"
	}
	var out []components.DiffLine
	last := -1
	for i, l := range all {
		if !keep[i] {
			continue
		}
		if last >= 0 && i != last+1 || last < 0 && i > 0 {
			out = append(out, components.DiffLine{Kind: "hunk", Text: fmt.Sprintf("@@ -%d +%d @@", l.Old, l.New)})
		}
		out = append(out, l)
		last = i
	}
	note := ""
	if len(out) > maxDiffLines {
		note = fmt.Sprintf("first %d of %d diff lines", maxDiffLines, len(out))
		out = out[:maxDiffLines]
	}
	return out, note
}
