package toolkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"parley/agentcore"
)

// MkdirInput is mkdir's input.
type MkdirInput struct {
	Path string `json:"path" desc:"Directory to create, with any missing parents, relative to the workspace root"`
}

// MkdirOutput is what mkdir returns.
type MkdirOutput struct {
	Path    string `json:"path"`
	Created bool   `json:"created" desc:"False when the directory already existed"`
}

// MkdirTool creates a directory and its missing parents; one that already
// exists is not an error.
func MkdirTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("mkdir",
		"Create a directory in the workspace, with any missing parent directories. A directory that already exists is left as it is. (write_file and edit_file create parent directories themselves.)",
		func(ctx context.Context, in MkdirInput, _ *agentcore.ToolContext) (MkdirOutput, error) {
			abs, err := ws.Resolve(in.Path)
			if err != nil {
				return MkdirOutput{}, err
			}
			rel := ws.Rel(abs)
			fi, err := os.Stat(abs)
			switch {
			case err == nil && fi.IsDir():
				return MkdirOutput{Path: rel}, nil
			case err == nil && fi.Mode().IsRegular():
				return MkdirOutput{}, fmt.Errorf("%s already exists and is a file, not a directory", rel)
			case err == nil:
				return MkdirOutput{}, fmt.Errorf("%s already exists and %v, not a directory", rel, notRegularError{fi.Mode()})
			case errors.Is(err, syscall.ENOTDIR):
				return MkdirOutput{}, inTheWay(rel)
			case !errors.Is(err, fs.ErrNotExist):
				return MkdirOutput{}, fmt.Errorf("stat %s: %w", rel, err)
			}
			if err := ctx.Err(); err != nil {
				return MkdirOutput{}, err
			}
			if err := os.MkdirAll(abs, 0o755); err != nil {
				if errors.Is(err, syscall.ENOTDIR) {
					return MkdirOutput{}, inTheWay(rel)
				}
				return MkdirOutput{}, fmt.Errorf("create directory %s: %w", rel, err)
			}
			return MkdirOutput{Path: rel, Created: true}, nil
		})
	t.ToModelOutput = func(out any) agentcore.ModelOutput {
		o, ok := out.(MkdirOutput)
		if !ok {
			return agentcore.ModelOutput{Type: "json", Value: out}
		}
		if !o.Created {
			return agentcore.ModelOutput{Type: "text", Value: fmt.Sprintf("Directory %s already exists", o.Path)}
		}
		return agentcore.ModelOutput{Type: "text", Value: fmt.Sprintf("Created directory %s", o.Path)}
	}
	return t
}

func inTheWay(rel string) error {
	return fmt.Errorf("cannot create directory %s: a file is in the way of one of its parent directories", rel)
}
