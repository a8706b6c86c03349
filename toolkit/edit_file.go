package toolkit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"parley/agentcore"
)

//go:embed edit_file.md
var editFileDescription string

const (
	// editMaxListedLines caps the line numbers an ambiguity error lists:
	// past a handful, replace_all or a longer old_str is the answer anyway.
	editMaxListedLines = 20
	// editQuoteBytes cuts the lines an error quotes back to the model.
	editQuoteBytes = 200
	// editMinSimilarity is the least likeness (Dice coefficient over byte
	// pairs) for a line to be offered as the one old_str probably meant;
	// below it the suggestion is noise.
	editMinSimilarity = 0.5
)

// EditInput is edit_file's input (Mastra Code's string_replace).
type EditInput struct {
	Path       string `json:"path" desc:"File to edit, relative to the workspace root"`
	OldStr     string `json:"old_str" desc:"Exact text to replace, copied from the file with all its whitespace and without view's line numbers; it must occur exactly once unless replace_all is set. Empty: create the file with new_str (only if it does not exist or is empty)"`
	NewStr     string `json:"new_str" desc:"Text to put in place of old_str; it must differ from old_str"`
	ReplaceAll bool   `json:"replace_all,omitempty" desc:"Replace every occurrence of old_str (default false: it must occur exactly once)"`
}

// EditOutput is what edit_file returns. Before and After are the whole
// file texts for the UI's diff; the model sees one line (editModelOutput).
type EditOutput struct {
	Path            string `json:"path"`
	Replacements    int    `json:"replacements"`
	Created         bool   `json:"created,omitempty" desc:"The file did not exist or was empty, and now holds new_str"`
	Before          string `json:"before" desc:"The file before the edit, cut at 1 MiB"`
	After           string `json:"after" desc:"The file after the edit, cut at 1 MiB"`
	BeforeTruncated bool   `json:"beforeTruncated,omitempty" desc:"Before was cut at 1 MiB"`
	AfterTruncated  bool   `json:"afterTruncated,omitempty" desc:"After was cut at 1 MiB"`
}

// EditFileTool is Mastra Code's string_replace: it replaces exact text in
// a workspace file and writes the result atomically. A mistake — old_str
// missing or ambiguous — changes nothing and comes back as an error that
// points the model at the lines to look at.
func EditFileTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("edit_file", editFileDescription, func(ctx context.Context, in EditInput, _ *agentcore.ToolContext) (EditOutput, error) {
		return editFile(ctx, ws, in)
	})
	t.ToModelOutput = editModelOutput
	return t
}

func editFile(ctx context.Context, ws *Workspace, in EditInput) (EditOutput, error) {
	abs, err := ws.Resolve(in.Path)
	if err != nil {
		return EditOutput{}, err
	}
	rel := ws.Rel(abs)
	if in.OldStr == in.NewStr {
		return EditOutput{}, fmt.Errorf("old_str and new_str are the same, so the edit would change nothing in %s; put the replacement text in new_str", rel)
	}
	var data []byte
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if in.OldStr != "" {
			return EditOutput{}, fmt.Errorf("path %q does not exist in the workspace (root %s); to create it, call edit_file with an empty old_str and the content as new_str, or use find_files to look for the file you meant", in.Path, ws.root)
		}
	case err != nil:
		return EditOutput{}, fmt.Errorf("stat %s: %w", rel, err)
	case fi.IsDir():
		return EditOutput{}, fmt.Errorf("%s is a directory; edit_file edits files", rel)
	case !fi.Mode().IsRegular():
		return EditOutput{}, fmt.Errorf("path %q %v; edit_file edits regular files only", in.Path, notRegularError{fi.Mode()})
	default:
		var whole bool
		if data, whole, err = readHead(ctx, abs); err != nil {
			return EditOutput{}, readError(in.Path, err)
		}
		if !whole {
			return EditOutput{}, fmt.Errorf("%s is larger than 10 MB, more than edit_file edits", rel)
		}
		if isBinary(data) {
			return EditOutput{}, fmt.Errorf("%s is a binary file; edit_file edits text files only", rel)
		}
	}
	if err := ctx.Err(); err != nil {
		return EditOutput{}, err
	}

	content := string(data)
	var after string
	n := 1
	switch {
	case in.OldStr == "" && content != "":
		return EditOutput{}, fmt.Errorf("old_str is empty, but %s already has content (%d bytes); an empty old_str only creates a file. Give the exact text to replace as old_str, or use write_file to replace the whole file", rel, len(content))
	case in.OldStr == "":
		after = in.NewStr
	default:
		old, repl := in.OldStr, in.NewStr
		n = strings.Count(content, old)
		if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r") {
			// The model writes plain newlines; the file has Windows ones.
			old, repl = toCRLF(old), toCRLF(repl)
			n = strings.Count(content, old)
		}
		switch {
		case n == 0:
			return EditOutput{}, notFoundError(rel, content, in.OldStr)
		case n > 1 && !in.ReplaceAll:
			return EditOutput{}, ambiguousError(rel, content, old, n)
		case in.ReplaceAll:
			after = strings.ReplaceAll(content, old, repl)
		default:
			after = strings.Replace(content, old, repl, 1)
		}
	}
	if err := writeAtomic(abs, after); err != nil {
		return EditOutput{}, fmt.Errorf("write %s: %w", rel, err)
	}
	out := EditOutput{Path: rel, Replacements: n, Created: content == ""}
	out.Before, out.BeforeTruncated = diffText(data)
	out.After, out.AfterTruncated = diffText(after)
	return out, nil
}

// editModelOutput tells the model what changed, not the file texts: it
// knows what it sent, and the texts would double the context.
func editModelOutput(out any) agentcore.ModelOutput {
	o, ok := out.(EditOutput)
	if !ok {
		return agentcore.ModelOutput{Type: "json", Value: out}
	}
	if o.Created {
		return agentcore.ModelOutput{Type: "text", Value: "Created " + o.Path}
	}
	return agentcore.ModelOutput{Type: "text", Value: fmt.Sprintf("Edited %s: %s", o.Path, plural(o.Replacements, "replacement", "replacements"))}
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// ambiguousError names how often old occurs in content and where.
func ambiguousError(rel, content, old string, n int) error {
	lines := matchLines(content, old, editMaxListedLines)
	list := make([]string, len(lines))
	for i, l := range lines {
		list[i] = fmt.Sprint(l)
	}
	where := strings.Join(list, ", ")
	if n > len(lines) {
		where += fmt.Sprintf(" and %d more", n-len(lines))
	} else if len(list) > 1 {
		where = strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
	}
	return fmt.Errorf("old_str occurs %d times in %s (at lines %s), so nothing was changed: it must occur exactly once. Include more of the surrounding lines in old_str to pick one occurrence, or set replace_all to replace all %d", n, rel, where, n)
}

// matchLines gives the line numbers where the first limit occurrences of
// old (not overlapping, as strings.Count counts them) start.
func matchLines(content, old string, limit int) []int {
	var lines []int
	line, last := 1, 0
	for i := 0; len(lines) < limit; {
		j := strings.Index(content[i:], old)
		if j < 0 {
			break
		}
		line += strings.Count(content[last:i+j], "\n")
		last = i + j
		lines = append(lines, line)
		i += j + len(old)
	}
	return lines
}

// viewLineNumber is the prefix view puts before each line ("%6d\t").
var viewLineNumber = regexp.MustCompile(`(?m)^ *\d+\t`)

// notFoundError says old is not in content and, where it can tell, why:
// line numbers copied from view, whitespace that differs, or the line
// where old starts to differ from the file.
func notFoundError(rel, content, old string) error {
	if content == "" {
		return fmt.Errorf("old_str was not found in %s: the file is empty. To fill it, call edit_file with an empty old_str, or use write_file", rel)
	}
	msg := fmt.Sprintf("old_str was not found in %s, so nothing was changed.", rel)
	const tail = " view the file and copy old_str from its current text exactly, with its whitespace and without line numbers."
	if hasViewLineNumbers(old) {
		hint := " old_str starts its lines with line numbers as view shows them (like \"    12\\t\"); they are not part of the file, leave them out."
		if stripped := viewLineNumber.ReplaceAllString(old, ""); strings.Contains(content, stripped) {
			hint += fmt.Sprintf(" Without them old_str matches at line %d.", lineAt(content, strings.Index(content, stripped)))
		}
		return errors.New(msg + hint)
	}
	if start, end, ok := squeezedMatch(content, old); ok {
		first, last := lineAt(content, start), lineAt(content, end)
		where := fmt.Sprintf("line %d", first)
		if last > first {
			where = fmt.Sprintf("lines %d-%d", first, last)
		}
		return fmt.Errorf("%s It matches %s if whitespace is ignored, so spaces, tabs, indentation or line breaks differ.%s", msg, where, tail)
	}
	if hint := prefixHint(content, old); hint != "" {
		return errors.New(msg + " " + hint + tail)
	}
	return errors.New(msg + " " + similarLineHint(rel, content, old) + tail)
}

// hasViewLineNumbers reports whether every non-blank line of s starts
// with view's line-number prefix.
func hasViewLineNumbers(s string) bool {
	seen := false
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !viewLineNumber.MatchString(line) {
			return false
		}
		seen = true
	}
	return seen
}

// squeezedMatch finds old in content with every run of white space taken
// as one space; start and end are the byte offsets in content of the
// first and last byte of the match.
func squeezedMatch(content, old string) (start, end int, ok bool) {
	want := strings.Join(strings.Fields(old), " ")
	if want == "" {
		return 0, 0, false
	}
	i := strings.Index(squeezeSpace(content), want)
	if i < 0 {
		return 0, 0, false
	}
	return squeezedOffset(content, i), squeezedOffset(content, i+len(want)-1), true
}

// squeezeSpace replaces each run of white space in s by one space.
func squeezeSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// squeezedOffset is the offset in s of byte k of squeezeSpace(s).
func squeezedOffset(s string, k int) int {
	n := 0 // bytes of squeezeSpace(s) so far
	space := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if space {
				continue
			}
			space = true
			if n == k {
				return i
			}
			n++
			continue
		}
		space = false
		size := utf8.RuneLen(r) // an invalid byte comes as U+FFFD, written as 3 bytes
		if k < n+size {
			return i
		}
		n += size
	}
	return len(s) - 1
}

// prefixHint finds the longest start of old that is in content; when it
// spans at least one whole line, it says where old stops matching.
func prefixHint(content, old string) string {
	lo, hi := 0, len(old) // content holds old[:lo], not old[:hi]
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if strings.Contains(content, old[:mid]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	k := strings.Count(old[:lo], "\n") // whole lines of old matched
	if k == 0 {
		return ""
	}
	first := lineAt(content, strings.Index(content, old[:lo]))
	oldLine := strings.Split(old, "\n")[k]
	matched := fmt.Sprintf("Its first %d lines match", k)
	if k == 1 {
		matched = "Its first line matches"
	}
	fileLine, ok := lineText(content, first+k)
	if !ok {
		return fmt.Sprintf("%s at line %d, but the file ends there, where old_str goes on with %s.", matched, first, quote(oldLine))
	}
	return fmt.Sprintf("%s at line %d, but the next differs: line %d of the file is %s, where old_str has %s.", matched, first, first+k, quote(fileLine), quote(oldLine))
}

// similarLineHint offers the file line most like old's first non-blank
// line.
func similarLineHint(rel, content, old string) string {
	want := ""
	for _, l := range strings.Split(old, "\n") {
		if want = strings.TrimSpace(l); want != "" {
			break
		}
	}
	if want == "" {
		return "old_str is only white space."
	}
	best, bestLine, bestText := 0.0, 0, ""
	for i, l := range strings.Split(content, "\n") {
		t := strings.TrimSpace(l)
		if len(t) == 0 || len(t) > 3*len(want) || 3*len(t) < len(want) {
			continue
		}
		if s := similarity(want, t); s > best {
			best, bestLine, bestText = s, i+1, l
		}
	}
	if best < editMinSimilarity {
		return fmt.Sprintf("No line of the file resembles old_str's first line %s; check that %s is the file you meant.", quote(want), rel)
	}
	return fmt.Sprintf("The line most like old_str's first line is line %d: %s.", bestLine, quote(bestText))
}

// similarity is the Dice coefficient of the byte pairs of a and b: 1 for
// equal strings, 0 for strings with no pair in common.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	pairs := make(map[string]int, len(a))
	for i := 0; i+1 < len(a); i++ {
		pairs[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+1 < len(b); i++ {
		if pairs[b[i:i+2]] > 0 {
			pairs[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)-1+len(b)-1)
}

// lineAt is the 1-based line number of byte offset off in s.
func lineAt(s string, off int) int {
	return strings.Count(s[:off], "\n") + 1
}

// lineText is line n (1-based) of s, without its line ending.
func lineText(s string, n int) (string, bool) {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) < n || len(lines) == n && lines[n-1] == "" {
		return "", false // past the last line (or the empty rest after the final newline)
	}
	return strings.TrimRight(lines[n-1], "\r"), true
}

func quote(line string) string {
	return fmt.Sprintf("%q", shorten(strings.TrimRight(line, "\r"), editQuoteBytes))
}
