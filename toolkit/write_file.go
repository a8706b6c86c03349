package toolkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"parley/agentcore"
)

// WriteInput is write_file's input.
type WriteInput struct {
	Path    string `json:"path" desc:"File to write, relative to the workspace root"`
	Content string `json:"content" desc:"The whole new content of the file"`
}

// WriteOutput is what write_file returns.
type WriteOutput struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

// PlanFilesOnly allows writes only to markdown files directly in
// .parley/plans: what plan mode may change.
func PlanFilesOnly(rel string) error {
	dir, name := filepath.Split(filepath.ToSlash(rel))
	if strings.TrimSuffix(dir, "/") != PlansDir || !strings.EqualFold(filepath.Ext(name), ".md") || name == "" {
		return fmt.Errorf("in Plan mode only the plan can be written: use a path like %s/<name>.md (got %q)", PlansDir, rel)
	}
	return nil
}

// WriteFileTool writes whole files in the workspace, atomically (a
// temporary file renamed over the target), creating parent folders. allow
// (nil: everything) restricts which workspace paths may be written.
func WriteFileTool(ws *Workspace, allow func(rel string) error) *agentcore.Tool {
	return agentcore.NewTool("write_file",
		"Write a file in the workspace, replacing its whole content (parent folders are created). Give the complete content: nothing of the old file is kept.",
		func(ctx context.Context, in WriteInput, tc *agentcore.ToolContext) (WriteOutput, error) {
			abs, err := ws.Resolve(in.Path)
			if err != nil {
				return WriteOutput{}, err
			}
			rel := ws.Rel(abs)
			if allow != nil {
				if err := allow(rel); err != nil {
					return WriteOutput{}, err
				}
			}
			if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
				return WriteOutput{}, fmt.Errorf("%s is a directory, not a file", rel)
			}
			_, statErr := os.Stat(abs)
			if err := writeAtomic(abs, []byte(in.Content)); err != nil {
				return WriteOutput{}, fmt.Errorf("write %s: %w", rel, err)
			}
			return WriteOutput{Path: rel, Bytes: len(in.Content), Created: os.IsNotExist(statErr)}, nil
		})
}

// writeAtomic writes data to a temporary file beside abs and renames it
// over abs: a reader (or a crash) never sees half a file.
func writeAtomic(abs string, data []byte) error {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".parley-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, abs)
}
