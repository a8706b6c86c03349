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
	// approvalShown is how many lines of an approval's diff show before
	// "Show all": enough for a small change whole, short enough that the
	// buttons stay near.
	approvalShown = 20
	// maxApprovalLines bounds the whole diff an approval can expand to (a
	// 256 KiB file is ~6000 lines; past that a card is no place to review).
	maxApprovalLines = 5000
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
			if st != nil {
				liveDiff(p, old, neu)
			} else {
				// The arguments are complete: the whole edit, expandable.
				splitDiff(p, positionalDiff(old, neu), "")
			}
		}
	case "write_file":
		if final {
			finalDiff(p, ti.Result)
		} else if content, ok := a.str("content"); ok {
			if f := approvalFile(ti); f != nil && st == nil {
				writeDiff(p, f, content)
			} else {
				writing(p, content, st)
			}
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
	out := positionalDiff(old, neu)
	if len(out) > liveDiffLines {
		p.DiffNote = fmt.Sprintf("… %d lines above", len(out)-liveDiffLines)
		out = out[len(out)-liveDiffLines:]
	}
	p.Diff = out
}

// positionalDiff compares old and neu line by line by position.
func positionalDiff(old, neu string) []components.DiffLine {
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
	return out
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
	p.Diff, p.DiffNote = unifiedDiff(*r.Before, *r.After, maxDiffLines)
}

// unifiedDiff is a line diff of a and b with diffContext lines of context
// around changes and a hunk line between far-apart changes.
func unifiedDiff(a, b string, limit int) ([]components.DiffLine, string) {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var all []components.DiffLine
	// newAt is each line's place in the new text, for the separator that
	// says where a hunk starts (a removed line's: where it was).
	var newAt []int
	o, n := 1, 1
	for _, d := range diffs {
		for _, l := range splitLines(d.Text) {
			newAt = append(newAt, n)
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
			out = append(out, components.DiffLine{Kind: "hunk", Text: fmt.Sprintf("⋯ line %d", newAt[i])})
		}
		out = append(out, l)
		last = i
	}
	note := ""
	if len(out) > limit {
		note = fmt.Sprintf("first %d of %d diff lines", limit, len(out))
		out = out[:limit]
	}
	return out, note
}

// fileOnDisk is what an approval of write_file carries of the file it
// replaces (app/chat's FileOnDisk, read through the workspace's resolver
// when the user was asked).
type fileOnDisk struct {
	Exists  bool   `json:"exists"`
	Text    string `json:"text"`
	Size    int64  `json:"size"`
	Unshown string `json:"unshown"`
}

// approvalFile is the file an approval of write_file replaces; nil when the
// call was not asked about.
func approvalFile(ti *agentcore.ToolInvocation) *fileOnDisk {
	if !ti.Approval || len(ti.SuspendPayload) == 0 {
		return nil
	}
	var p struct {
		Payload struct {
			File *fileOnDisk `json:"file"`
		} `json:"payload"`
	}
	if json.Unmarshal(ti.SuspendPayload, &p) != nil {
		return nil
	}
	return p.Payload.File
}

// writeDiff is what a write_file approval shows: the diff against the file
// on disk, or the whole content of a new file, the first lines at once and
// the rest behind "Show all".
func writeDiff(p *components.Preview, f *fileOnDisk, content string) {
	switch {
	case strings.HasPrefix(f.Unshown, "refused"):
		p.DiffNote = "This path cannot be written (the write will be refused): " + strings.TrimPrefix(f.Unshown, "refused: ")
		return
	case f.Unshown != "":
		splitDiff(p, addedLines(content), fmt.Sprintf("The file on disk %s: all of it is replaced by these %d lines.", unshownReason(f), countLines(content)))
		return
	case !f.Exists:
		splitDiff(p, addedLines(content), fmt.Sprintf("New file, %d lines", countLines(content)))
		return
	}
	diff, _ := unifiedDiff(f.Text, content, maxApprovalLines+1)
	if diff == nil {
		p.DiffNote = "No changes: the content is what the file already holds."
		return
	}
	add, del := 0, 0
	for _, l := range diff {
		switch l.Kind {
		case "add":
			add++
		case "del":
			del++
		}
	}
	splitDiff(p, diff, fmt.Sprintf("Replaces the file on disk: %d %s added, %d removed", add, plural(add, "line", "lines"), del))
}

// addedLines is content as the added lines of a new file's diff.
func addedLines(content string) []components.DiffLine {
	var out []components.DiffLine
	for i, l := range splitLines(content) {
		out = append(out, components.DiffLine{Kind: "add", New: i + 1, Text: l})
		if len(out) > maxApprovalLines {
			break
		}
	}
	return out
}

// splitDiff puts the first approvalShown lines of a complete diff in the
// card and the rest, up to maxApprovalLines, behind "Show all".
func splitDiff(p *components.Preview, lines []components.DiffLine, note string) {
	if note != "" {
		p.DiffNote = note
	}
	if len(lines) > maxApprovalLines {
		lines = lines[:maxApprovalLines]
		p.MoreNote = fmt.Sprintf("Only the first %d lines are shown.", maxApprovalLines)
	}
	p.Total = len(lines)
	if len(lines) > approvalShown {
		p.Diff, p.More = lines[:approvalShown], lines[approvalShown:]
		return
	}
	p.Diff = lines
}

func countLines(s string) int {
	return len(splitLines(s))
}

// unshownReason says why the file on disk is not compared.
func unshownReason(f *fileOnDisk) string {
	switch f.Unshown {
	case "too big":
		return "is " + byteSize(f.Size) + ", too big to compare here"
	case "binary":
		return "is binary"
	}
	return "could not be read (" + f.Unshown + ")"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
