package toolkit

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"parley/agentcore"
)

//go:embed search_content.md
var searchContentDescription string

const (
	// searchDefaultCount is enough matches to see where something is used
	// without flooding the context.
	searchDefaultCount = 100
	// searchMaxCount is the most a model may ask for.
	searchMaxCount = 1000
	// searchMaxContext keeps context lines to what a match needs; to read
	// more, view the file.
	searchMaxContext = 10
	// searchMaxLineChars is shorter than view's: a search shows where, view
	// shows what.
	searchMaxLineChars = 500
	// searchCancelEvery is how many lines pass between context checks.
	searchCancelEvery = 4096
)

// SearchContentInput is the input of the search_content tool.
type SearchContentInput struct {
	Pattern       string `json:"pattern" minLength:"1" desc:"Go (RE2) regular expression matched against each line"`
	Path          string `json:"path,omitempty" desc:"File or directory to search, relative to the workspace root (default: the root)"`
	ContextLines  int    `json:"contextLines,omitempty" minimum:"0" maximum:"10" desc:"Lines of context before and after each match (default 0, at most 10)"`
	CaseSensitive *bool  `json:"caseSensitive,omitempty" desc:"Match letter case exactly (default true)"`
	MaxCount      int    `json:"maxCount,omitempty" minimum:"0" maximum:"1000" desc:"Most matching lines to return, over all files (default 100, at most 1000)"`
}

// SearchContentOutput is what search_content returns.
type SearchContentOutput struct {
	Content   string `json:"content" desc:"Matches as path:line: text, context lines as path-line- text, groups divided by --"`
	Matches   int    `json:"matches" desc:"Matching lines returned"`
	Files     int    `json:"files" desc:"Files with a returned match"`
	Truncated bool   `json:"truncated" desc:"The search stopped early; Note says why"`
	Note      string `json:"note,omitempty"`
}

// SearchContentTool is Mastra Code's search_content (grep): a regular
// expression over the workspace's text files.
func SearchContentTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("search_content", searchContentDescription, func(ctx context.Context, in SearchContentInput, _ *agentcore.ToolContext) (SearchContentOutput, error) {
		return searchContent(ctx, ws, in)
	})
	t.ToModelOutput = searchContentModelOutput
	return t
}

// searcher accumulates the output of one search.
type searcher struct {
	re       *regexp.Regexp
	context  int
	maxCount int
	b        strings.Builder
	matches  int
	files    int
	full     bool // output budget or maxCount reached: stop
	cutBytes bool // stopped for the output budget
}

func searchContent(ctx context.Context, ws *Workspace, in SearchContentInput) (SearchContentOutput, error) {
	if in.Pattern == "" {
		return SearchContentOutput{}, fmt.Errorf("pattern is empty; give a regular expression to search for")
	}
	if in.ContextLines < 0 {
		return SearchContentOutput{}, fmt.Errorf("contextLines must be 0 or more, got %d", in.ContextLines)
	}
	if in.MaxCount < 0 {
		return SearchContentOutput{}, fmt.Errorf("maxCount must be 1 or more, got %d", in.MaxCount)
	}
	expr := in.Pattern
	if in.CaseSensitive != nil && !*in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return SearchContentOutput{}, fmt.Errorf("invalid regular expression %q: %v (the syntax is Go's RE2: no lookaround, no backreferences)", in.Pattern, err)
	}
	s := &searcher{re: re, context: min(in.ContextLines, searchMaxContext), maxCount: in.MaxCount}
	if s.maxCount == 0 {
		s.maxCount = searchDefaultCount
	}
	s.maxCount = min(s.maxCount, searchMaxCount)

	abs, err := ws.Resolve(in.Path)
	if err != nil {
		return SearchContentOutput{}, err
	}
	fi, err := ws.stat(in.Path, abs)
	if err != nil {
		return SearchContentOutput{}, err
	}

	complete := true
	switch {
	case fi.Mode().IsRegular():
		data, whole, err := readHead(ctx, abs)
		if err != nil {
			return SearchContentOutput{}, readError(in.Path, err)
		}
		if isBinary(data) {
			return SearchContentOutput{}, fmt.Errorf("path %q is a binary file; search_content searches text files only", in.Path)
		}
		if err := s.search(ctx, ws.Rel(abs), data, whole); err != nil {
			return SearchContentOutput{}, err
		}
	case fi.IsDir():
		complete, err = ws.walk(ctx, abs, func(rel string, d fs.DirEntry) error {
			if s.full {
				return fs.SkipAll
			}
			file := filepath.Join(ws.root, filepath.FromSlash(rel))
			if d.Type()&fs.ModeSymlink != 0 {
				// Follow a link only to a file inside the root.
				target, err := ws.Resolve(rel)
				if err != nil {
					return nil
				}
				file = target
			} else if !d.Type().IsRegular() {
				return nil
			}
			if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
			data, whole, err := readHead(ctx, file)
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil || isBinary(data) {
				return nil // unreadable and binary files are not searched
			}
			return s.search(ctx, rel, data, whole)
		})
		if err != nil {
			return SearchContentOutput{}, fmt.Errorf("search %q: %w", in.Path, err)
		}
	default:
		return SearchContentOutput{}, fmt.Errorf("path %q %v; search_content searches regular files and directories only", in.Path, notRegularError{fi.Mode()})
	}

	out := SearchContentOutput{Content: strings.TrimSuffix(s.b.String(), "\n"), Matches: s.matches, Files: s.files}
	var notes []string
	switch {
	case s.matches == 0:
		notes = append(notes, fmt.Sprintf("No matches for %q in %s (binary files, .git, node_modules and .gitignored paths are skipped).", in.Pattern, describeDir(ws.Rel(abs))))
	case s.cutBytes:
		notes = append(notes, fmt.Sprintf("Stopped at %d KB of output; there may be more matches. Narrow pattern or path, or lower contextLines.", maxOutputBytes>>10))
	case s.full:
		notes = append(notes, fmt.Sprintf("Stopped at maxCount=%d matches; there may be more. Narrow pattern or path, or raise maxCount (at most %d).", s.maxCount, searchMaxCount))
	}
	if !complete {
		notes = append(notes, fmt.Sprintf("The search stopped after %d entries, so there may be more matches; narrow path.", maxWalkEntries))
	}
	out.Truncated = s.full || !complete
	out.Note = strings.Join(notes, " ")
	return out, nil
}

// search adds the matches in one file (rel is its root-relative path) to
// the output, each with its context lines, overlapping groups merged.
func (s *searcher) search(ctx context.Context, rel string, data []byte, whole bool) error {
	lines := splitLines(data, whole)
	var hits []int
	for i, line := range lines {
		if i%searchCancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if s.re.MatchString(line) {
			hits = append(hits, i)
			if s.matches+len(hits) == s.maxCount {
				s.full = true
				break
			}
		}
	}
	if len(hits) == 0 {
		return nil
	}
	next := 0 // first line not yet written
	for h, hit := range hits {
		from := max(hit-s.context, next)
		if s.context > 0 && s.b.Len() > 0 && (h == 0 || from > next) {
			if !s.write("--\n") {
				return nil
			}
		}
		for i := from; i < hit; i++ {
			if !s.writeLine(rel, i, "-", lines[i]) {
				return nil
			}
		}
		if !s.writeLine(rel, hit, ":", lines[hit]) {
			return nil
		}
		if h == 0 {
			s.files++
		}
		s.matches++
		next = hit + 1
		to := min(len(lines)-1, hit+s.context)
		if h+1 < len(hits) {
			to = min(to, hits[h+1]-1)
		}
		for i := next; i <= to; i++ {
			if !s.writeLine(rel, i, "-", lines[i]) {
				return nil
			}
		}
		next = max(next, to+1)
	}
	return nil
}

// writeLine writes one output line: path:N: text for a match, path-N- text
// for context.
func (s *searcher) writeLine(rel string, i int, sep, line string) bool {
	line, _ = cutLine(line, searchMaxLineChars)
	return s.write(fmt.Sprintf("%s%s%d%s %s\n", rel, sep, i+1, sep, line))
}

// write appends text unless it would pass the output budget; then the
// search is over.
func (s *searcher) write(text string) bool {
	if s.b.Len()+len(text) > maxOutputBytes {
		s.full, s.cutBytes = true, true
		return false
	}
	s.b.WriteString(text)
	return true
}

// searchContentModelOutput gives the model a count, the matches and a
// note when there are none or the search stopped early.
func searchContentModelOutput(output any) agentcore.ModelOutput {
	var o SearchContentOutput
	switch v := output.(type) {
	case SearchContentOutput:
		o = v
	case *SearchContentOutput:
		o = *v
	default:
		return agentcore.ModelOutput{Type: "json", Value: output}
	}
	var text string
	if o.Matches > 0 {
		text = fmt.Sprintf("%s in %s:\n%s", plural(o.Matches, "match", "matches"), plural(o.Files, "file", "files"), o.Content)
	}
	if o.Note != "" {
		if text != "" {
			text += "\n\n"
		}
		text += "[" + o.Note + "]"
	}
	return agentcore.ModelOutput{Type: "text", Value: text}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
