package toolkit

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"parley/agentcore"
)

//go:embed view.md
var viewDescription string

const (
	// viewDefaultLimit shows a whole typical source file in one call.
	viewDefaultLimit = 2000
	// viewMaxLineChars cuts minified and generated lines, which say nothing
	// useful past this and would eat the output budget.
	viewMaxLineChars = 2000
)

// ViewInput is the input of the view tool. Its schema's maximum for offset
// and limit is maxFileBytes: a file view reads has no more lines than that
// (TestToolSchemaLimits keeps them equal).
type ViewInput struct {
	Path   string `json:"path" desc:"File or directory to view, relative to the workspace root"`
	Offset int    `json:"offset,omitempty" minimum:"0" maximum:"10485760" desc:"1-based line number to start at (default 1); for a directory, the first entry"`
	Limit  int    `json:"limit,omitempty" minimum:"0" maximum:"10485760" desc:"Number of lines to return (default 2000); for a directory, of entries"`
}

// ViewOutput is what view returns; the model sees only Content and Note.
type ViewOutput struct {
	Path       string `json:"path" desc:"Path relative to the workspace root"`
	Kind       string `json:"kind" enum:"file,directory"`
	Content    string `json:"content" desc:"Numbered lines (cat -n style), or the directory listing"`
	StartLine  int    `json:"startLine" desc:"First line (or entry) shown, 1-based; 0 when nothing is shown"`
	EndLine    int    `json:"endLine" desc:"Last line (or entry) shown"`
	TotalLines int    `json:"totalLines" desc:"Lines in the file, or entries in the directory"`
	Truncated  bool   `json:"truncated" desc:"Lines, characters or bytes were left out; Note says which"`
	Note       string `json:"note,omitempty"`
}

// ViewTool is Mastra Code's view (read_file): a text file with line
// numbers, or a directory listing.
func ViewTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("view", viewDescription, func(ctx context.Context, in ViewInput, _ *agentcore.ToolContext) (ViewOutput, error) {
		return view(ctx, ws, in)
	})
	t.ToModelOutput = viewModelOutput
	return t
}

func view(ctx context.Context, ws *Workspace, in ViewInput) (ViewOutput, error) {
	if in.Offset < 0 {
		return ViewOutput{}, fmt.Errorf("offset must be a 1-based line number (1 or more), got %d", in.Offset)
	}
	if in.Limit < 0 {
		return ViewOutput{}, fmt.Errorf("limit must be a number of lines (1 or more), got %d", in.Limit)
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = viewDefaultLimit
	}
	abs, err := ws.Resolve(in.Path)
	if err != nil {
		return ViewOutput{}, err
	}
	fi, err := ws.stat(in.Path, abs)
	if err != nil {
		return ViewOutput{}, err
	}
	if err := ctx.Err(); err != nil {
		return ViewOutput{}, err
	}
	out := ViewOutput{Path: ws.Rel(abs)}
	if fi.IsDir() {
		return viewDir(in.Path, abs, out, offset, limit)
	}
	if !fi.Mode().IsRegular() {
		return ViewOutput{}, fmt.Errorf("path %q %v; view reads files and directories only", in.Path, notRegularError{fi.Mode()})
	}
	data, whole, err := readHead(ctx, abs)
	if err != nil {
		return ViewOutput{}, readError(in.Path, err)
	}
	if isBinary(data) {
		return ViewOutput{}, fmt.Errorf("path %q is a binary file (%d bytes); view shows text files only", in.Path, fi.Size())
	}
	out.Kind = "file"
	lines := splitLines(data, whole)
	out.TotalLines = len(lines)
	if len(lines) == 0 {
		out.Note = "The file is empty."
		return out, nil
	}
	if offset > len(lines) {
		return ViewOutput{}, fmt.Errorf("offset %d is past the end of %q, which has %d lines", offset, in.Path, len(lines))
	}

	end := min(len(lines), offset-1+limit)
	var b strings.Builder
	cutLines := false
	shown := offset - 1
	for i := offset - 1; i < end; i++ {
		line, cut := cutLine(lines[i], viewMaxLineChars)
		entry := fmt.Sprintf("%6d\t%s\n", i+1, line)
		if b.Len()+len(entry) > maxOutputBytes && i > offset-1 {
			break
		}
		cutLines = cutLines || cut
		b.WriteString(entry)
		shown = i + 1
	}
	out.Content = strings.TrimSuffix(b.String(), "\n")
	out.StartLine, out.EndLine = offset, shown

	var notes []string
	if shown < len(lines) {
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d of %d; to read on, view with offset=%d.", offset, shown, len(lines), shown+1))
	}
	if !whole {
		notes = append(notes, fmt.Sprintf("The file is %d bytes; only its first %d MB (%d lines) can be viewed.", fi.Size(), maxFileBytes>>20, len(lines)))
	}
	if cutLines {
		notes = append(notes, fmt.Sprintf("Lines longer than %d characters were cut.", viewMaxLineChars))
	}
	out.Truncated = len(notes) > 0
	out.Note = strings.Join(notes, " ")
	return out, nil
}

// viewDir lists one level of the directory abs, subdirectories with a
// trailing slash; .git is left out, since it cannot be viewed.
func viewDir(given, abs string, out ViewOutput, offset, limit int) (ViewOutput, error) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return ViewOutput{}, fmt.Errorf("list directory %q: %w", given, err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.EqualFold(name, ".git") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(abs, name)); err == nil {
				isDir = fi.IsDir()
			}
		}
		if isDir {
			name += "/"
		}
		names = append(names, name)
	}
	out.Kind = "directory"
	out.TotalLines = len(names)
	if len(names) == 0 {
		out.Note = "The directory is empty."
		return out, nil
	}
	if offset > len(names) {
		return ViewOutput{}, fmt.Errorf("offset %d is past the end of directory %q, which has %d entries", offset, given, len(names))
	}
	end := min(len(names), offset-1+limit)
	var b strings.Builder
	shown := offset - 1
	for i := offset - 1; i < end; i++ {
		if b.Len()+len(names[i])+1 > maxOutputBytes && i > offset-1 {
			break
		}
		b.WriteString(names[i])
		b.WriteByte('\n')
		shown = i + 1
	}
	out.Content = strings.TrimSuffix(b.String(), "\n")
	out.StartLine, out.EndLine = offset, shown
	if shown < len(names) {
		out.Truncated = true
		out.Note = fmt.Sprintf("Showing entries %d-%d of %d; to read on, view with offset=%d.", offset, shown, len(names), shown+1)
	}
	return out, nil
}

// splitLines splits text into lines without their "\n" or "\r\n". When
// the text is only the head of a file, its last, partial line is dropped
// (unless it is the only one).
func splitLines(data []byte, whole bool) []string {
	text := string(data)
	if !whole {
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		}
	}
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// cutLine shortens line to limit characters with a marker saying how long
// it was; cut reports whether it did.
func cutLine(line string, limit int) (s string, cut bool) {
	if len(line) <= limit { // bytes ≤ limit, so characters too
		return line, false
	}
	n := 0
	for i := range line {
		if n == limit {
			return fmt.Sprintf("%s… [line cut at %d of %d characters]", line[:i], limit, utf8.RuneCountInString(line)), true
		}
		n++
	}
	return line, false
}

// viewModelOutput gives the model the numbered text (or the listing) and,
// when something was left out or there is nothing to show, a note.
func viewModelOutput(output any) agentcore.ModelOutput {
	var o ViewOutput
	switch v := output.(type) {
	case ViewOutput:
		o = v
	case *ViewOutput:
		o = *v
	default:
		return agentcore.ModelOutput{Type: "json", Value: output}
	}
	text := o.Content
	if o.Kind == "directory" && text != "" {
		text = fmt.Sprintf("%s/ (%d entries):\n%s", strings.TrimSuffix(o.Path, "/"), o.TotalLines, text)
	}
	if o.Note != "" {
		if text != "" {
			text += "\n\n"
		}
		text += "[" + o.Note + "]"
	}
	return agentcore.ModelOutput{Type: "text", Value: text}
}
