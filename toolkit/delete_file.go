package toolkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"parley/agentcore"
)

// DeleteInput is delete_file's input.
type DeleteInput struct {
	Path      string `json:"path" desc:"File or directory to delete, relative to the workspace root"`
	Recursive bool   `json:"recursive,omitempty" desc:"Delete a directory and everything in it (default false: directories are refused)"`
}

// DeleteOutput is what delete_file returns.
type DeleteOutput struct {
	Path    string `json:"path"`
	Kind    string `json:"kind" enum:"file,directory,symlink"`
	Entries int    `json:"entries,omitempty" desc:"Files and directories that were inside a deleted directory"`
}

// DeleteFileTool deletes a file, a symbolic link (not what it points to)
// or, with recursive set, a directory tree. It refuses the workspace root
// and a tree holding a .git directory, whose history no tool may touch.
func DeleteFileTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("delete_file",
		"Delete a file in the workspace. A directory is deleted only with `recursive: true`, and then with everything in it. A symbolic link is deleted itself, not what it points to. The workspace root, `.git` and directories holding a `.git` cannot be deleted.",
		func(ctx context.Context, in DeleteInput, _ *agentcore.ToolContext) (DeleteOutput, error) {
			return deleteFile(ctx, ws, in)
		})
	t.ToModelOutput = deleteModelOutput
	return t
}

func deleteFile(ctx context.Context, ws *Workspace, in DeleteInput) (DeleteOutput, error) {
	// The whole path must be allowed (no escape, no link out, not .git) …
	entry, err := ws.Resolve(in.Path)
	if err != nil {
		return DeleteOutput{}, err
	}
	// … but a link is deleted itself, not what it points to.
	clean := filepath.Clean(in.Path)
	if base := filepath.Base(clean); base != "." && base != string(filepath.Separator) {
		if parent, err := ws.Resolve(filepath.Dir(clean)); err == nil {
			if fi, err := os.Lstat(filepath.Join(parent, base)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				entry = filepath.Join(parent, base)
			}
		}
	}
	if entry == ws.root {
		return DeleteOutput{}, fmt.Errorf("path %q is the workspace root (%s), which cannot be deleted; name a file or directory inside it", in.Path, ws.root)
	}
	rel := ws.Rel(entry)
	fi, err := os.Lstat(entry)
	if errors.Is(err, fs.ErrNotExist) {
		return DeleteOutput{}, fmt.Errorf("path %q does not exist in the workspace (root %s), so there is nothing to delete; use find_files to look for it", in.Path, ws.root)
	}
	if err != nil {
		return DeleteOutput{}, fmt.Errorf("stat %s: %w", rel, err)
	}
	out := DeleteOutput{Path: rel, Kind: "file"}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		out.Kind = "symlink"
	case fi.IsDir():
		out.Kind = "directory"
		n, git, err := countTree(ctx, entry)
		if err != nil {
			return DeleteOutput{}, fmt.Errorf("list %s: %w", rel, err)
		}
		if git != "" {
			return DeleteOutput{}, fmt.Errorf("%s holds a git repository (%s), which tools may not change; nothing was deleted", rel, ws.Rel(git))
		}
		if !in.Recursive {
			what := plural(n, "entry", "entries") + " in it"
			if n == 0 {
				what = "empty"
			}
			return DeleteOutput{}, fmt.Errorf("%s is a directory (%s); to delete it with everything in it, call delete_file again with recursive set to true", rel, what)
		}
		out.Entries = n
	}
	if err := ctx.Err(); err != nil {
		return DeleteOutput{}, err
	}
	if err := os.RemoveAll(entry); err != nil {
		return DeleteOutput{}, fmt.Errorf("delete %s: %w", rel, err)
	}
	return out, nil
}

// countTree counts the entries under dir, without following links, and
// returns the first .git directory (or file) it meets.
func countTree(ctx context.Context, dir string) (n int, git string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == dir {
			return nil
		}
		if strings.EqualFold(d.Name(), ".git") {
			git = p
			return filepath.SkipAll
		}
		n++
		return nil
	})
	return n, git, err
}

func deleteModelOutput(out any) agentcore.ModelOutput {
	o, ok := out.(DeleteOutput)
	if !ok {
		return agentcore.ModelOutput{Type: "json", Value: out}
	}
	text := "Deleted " + o.Path
	switch o.Kind {
	case "directory":
		if o.Entries == 0 {
			text = "Deleted empty directory " + o.Path
			break
		}
		text = fmt.Sprintf("Deleted directory %s and the %s in it", o.Path, plural(o.Entries, "entry", "entries"))
	case "symlink":
		text = fmt.Sprintf("Deleted symbolic link %s", o.Path)
	}
	return agentcore.ModelOutput{Type: "text", Value: text}
}
