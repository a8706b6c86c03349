package toolkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"parley/agentcore"
)

// WriteInput is write_file's input.
type WriteInput struct {
	Path    string `json:"path" desc:"File to write, relative to the workspace root"`
	Content string `json:"content" desc:"The whole new content of the file"`
}

// WriteOutput is what write_file returns. Before and After are for the
// UI's diff; the model sees one line (writeModelOutput).
type WriteOutput struct {
	Path            string `json:"path"`
	Bytes           int    `json:"bytes"`
	Created         bool   `json:"created"`
	Before          string `json:"before" desc:"The file before the write (empty when created), cut at 1 MiB"`
	After           string `json:"after" desc:"The file after the write, cut at 1 MiB"`
	BeforeTruncated bool   `json:"beforeTruncated,omitempty" desc:"Before was cut at 1 MiB"`
	AfterTruncated  bool   `json:"afterTruncated,omitempty" desc:"After was cut at 1 MiB"`
}

// maxDiffBytes caps each of the before and after texts a file tool returns
// for the UI's diff: past 1 MiB a diff is unreadable, and every byte of a
// result is stored with the thread.
const maxDiffBytes = 1 << 20

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
	t := agentcore.NewTool("write_file",
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
			var before []byte
			fi, err := os.Stat(abs)
			switch {
			case err == nil && fi.IsDir():
				return WriteOutput{}, fmt.Errorf("%s is a directory, not a file", rel)
			case err == nil && !fi.Mode().IsRegular():
				return WriteOutput{}, fmt.Errorf("path %q %v; write_file writes regular files only", in.Path, notRegularError{fi.Mode()})
			case err == nil:
				if before, err = readPrefix(ctx, abs, maxDiffBytes+1); err != nil {
					return WriteOutput{}, readError(in.Path, err)
				}
			case !errors.Is(err, fs.ErrNotExist):
				return WriteOutput{}, fmt.Errorf("stat %s: %w", rel, err)
			}
			if err := writeAtomic(abs, in.Content); err != nil { // not a []byte of it: a copy of the whole content
				return WriteOutput{}, fmt.Errorf("write %s: %w", rel, err)
			}
			out := WriteOutput{Path: rel, Bytes: len(in.Content), Created: fi == nil}
			out.Before, out.BeforeTruncated = diffText(before)
			out.After, out.AfterTruncated = diffText(in.Content)
			return out, nil
		})
	t.ToModelOutput = writeModelOutput
	return t
}

// writeModelOutput tells the model what happened, not the texts it sent.
func writeModelOutput(out any) agentcore.ModelOutput {
	o, ok := out.(WriteOutput)
	if !ok {
		return agentcore.ModelOutput{Type: "json", Value: out}
	}
	how := "replaced"
	if o.Created {
		how = "created"
	}
	return agentcore.ModelOutput{Type: "text", Value: fmt.Sprintf("Wrote %s (%d bytes, %s)", o.Path, o.Bytes, how)}
}

// diffText is data as text for the UI's diff, cut at maxDiffBytes on a
// rune boundary; cut reports whether it was.
func diffText[T string | []byte](data T) (text string, cut bool) {
	n := len(data)
	if n > maxDiffBytes {
		n, cut = maxDiffBytes, true
		for n > 0 && !utf8.RuneStart(data[n]) {
			n--
		}
	}
	// A copy: the result outlives the call, and a string's text may be
	// a whole file's content, which the result must not hold on to.
	switch d := any(data[:n]).(type) {
	case string:
		return strings.Clone(d), cut
	case []byte:
		return string(d), cut
	}
	return "", cut
}

// readPrefix reads at most n bytes of the regular file abs, as readHead
// does: refusing anything else, and returning when ctx ends.
func readPrefix(ctx context.Context, abs string, n int64) ([]byte, error) {
	data, _, err := withContext(ctx, func() ([]byte, bool, error) {
		f, _, err := openRegularNow(abs)
		if err != nil {
			return nil, false, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, n))
		return data, true, err
	})
	return data, err
}

// writeAtomic writes data to a temporary file beside abs and renames it
// over abs: a reader (or a crash) never sees half a file.
func writeAtomic[T string | []byte](abs string, data T) error {
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
	if err := writeAll(f, data); err != nil {
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

// writeAll writes data to f; a string is written as it is (os.File's
// WriteString), not copied into a []byte first.
func writeAll[T string | []byte](f *os.File, data T) error {
	var err error
	switch d := any(data).(type) {
	case string:
		_, err = f.WriteString(d)
	case []byte:
		_, err = f.Write(d)
	}
	return err
}
