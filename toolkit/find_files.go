package toolkit

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"parley/agentcore"
)

//go:embed find_files.md
var findFilesDescription string

const (
	// findDefaultResults is enough to see a package or a file type at a
	// glance without flooding the context.
	findDefaultResults = 200
	// findMaxResults is the most a model may ask for; past it a narrower
	// pattern serves it better.
	findMaxResults = 5000
)

// FindFilesInput is the input of the find_files tool.
type FindFilesInput struct {
	Pattern    string `json:"pattern,omitempty" desc:"Glob matched against each file's path relative to path: * and ? within a segment, ** for any number of directories, [abc], {ts,tsx}. Default: every file"`
	Path       string `json:"path,omitempty" desc:"Directory to search in, relative to the workspace root (default: the root)"`
	MaxResults int    `json:"maxResults,omitempty" minimum:"0" maximum:"5000" desc:"Most paths to return (default 200, at most 5000)"`
}

// FindFilesOutput is what find_files returns.
type FindFilesOutput struct {
	Files     []string `json:"files" desc:"Matching paths relative to the workspace root, sorted"`
	Total     int      `json:"total" desc:"Matching files found; more than len(files) when the list was cut"`
	Truncated bool     `json:"truncated" desc:"The list was cut or the walk stopped early; Note says which"`
	Note      string   `json:"note,omitempty"`
}

// FindFilesTool is Mastra Code's find_files (list_files): workspace files
// by glob, gitignore-aware.
func FindFilesTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("find_files", findFilesDescription, func(ctx context.Context, in FindFilesInput, _ *agentcore.ToolContext) (FindFilesOutput, error) {
		return findFiles(ctx, ws, in)
	})
	t.ToModelOutput = findFilesModelOutput
	return t
}

func findFiles(ctx context.Context, ws *Workspace, in FindFilesInput) (FindFilesOutput, error) {
	if in.MaxResults < 0 {
		return FindFilesOutput{}, fmt.Errorf("maxResults must be 1 or more, got %d", in.MaxResults)
	}
	limit := in.MaxResults
	if limit == 0 {
		limit = findDefaultResults
	}
	limit = min(limit, findMaxResults)

	pattern := strings.TrimLeft(strings.TrimPrefix(in.Pattern, "./"), "/")
	var alts []string
	if pattern != "" {
		var err error
		if alts, err = compileGlob(pattern); err != nil {
			return FindFilesOutput{}, fmt.Errorf("invalid glob pattern %q: %v", in.Pattern, err)
		}
	}
	dir, err := ws.Resolve(in.Path)
	if err != nil {
		return FindFilesOutput{}, err
	}
	fi, err := ws.stat(in.Path, dir)
	if err != nil {
		return FindFilesOutput{}, err
	}
	if !fi.IsDir() {
		return FindFilesOutput{}, fmt.Errorf("path %q is a file, not a directory; find_files searches directories (use view to read a file)", in.Path)
	}

	base := ws.Rel(dir)
	var found []string
	complete, err := ws.walk(ctx, dir, func(rel string, _ fs.DirEntry) error {
		sub := rel
		if base != "." {
			sub = strings.TrimPrefix(rel, base+"/")
		}
		if alts == nil || matchAny(alts, sub) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		return FindFilesOutput{}, fmt.Errorf("find files in %q: %w", in.Path, err)
	}
	slices.Sort(found)

	out := FindFilesOutput{Files: []string{}, Total: len(found)}
	size := 0
	for _, f := range found {
		if len(out.Files) == limit || size+len(f)+1 > maxOutputBytes {
			break
		}
		out.Files = append(out.Files, f)
		size += len(f) + 1
	}

	var notes []string
	if len(found) == 0 {
		notes = append(notes, fmt.Sprintf("No files match %s in %s (.git, node_modules and .gitignored paths are skipped).", describePattern(in.Pattern), describeDir(base)))
	}
	if len(out.Files) < len(found) {
		notes = append(notes, fmt.Sprintf("Showing %d of %d matching files; narrow pattern or path to see the rest.", len(out.Files), len(found)))
	}
	if !complete {
		notes = append(notes, fmt.Sprintf("The search stopped after %d entries, so there may be more matches; narrow path.", maxWalkEntries))
	}
	out.Truncated = len(out.Files) < len(found) || !complete
	out.Note = strings.Join(notes, " ")
	return out, nil
}

func describePattern(p string) string {
	if p == "" {
		return "any pattern"
	}
	return fmt.Sprintf("pattern %q", p)
}

func describeDir(rel string) string {
	if rel == "." {
		return "the workspace root"
	}
	return fmt.Sprintf("%q", rel)
}

// findFilesModelOutput gives the model one path per line and a note when
// the list is empty or incomplete.
func findFilesModelOutput(output any) agentcore.ModelOutput {
	var o FindFilesOutput
	switch v := output.(type) {
	case FindFilesOutput:
		o = v
	case *FindFilesOutput:
		o = *v
	default:
		return agentcore.ModelOutput{Type: "json", Value: output}
	}
	text := strings.Join(o.Files, "\n")
	if o.Note != "" {
		if text != "" {
			text += "\n\n"
		}
		text += "[" + o.Note + "]"
	}
	return agentcore.ModelOutput{Type: "text", Value: text}
}
