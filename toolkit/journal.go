package toolkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"parley/agentcore"
)

// The file journal: what write_file, edit_file and delete_file change in
// a workspace is recorded per tool call (agentcore.FileJournal), so that
// leaving a branch of a chat can put the files back as they were before
// it (PlanRewind, ApplyRewind). Commands run by execute_command are not
// journaled, and a rewind does not undo them.

// JournalFileLimit is the largest file whose content the journal keeps.
const JournalFileLimit = 8 << 20

// Journaled returns t recording each change it makes in j. A failed call
// changed nothing (the tools write atomically) and is not recorded; a
// change that cannot be recorded is logged, and the call's result stands.
func Journaled(wss *Workspaces, j agentcore.FileJournal, log *slog.Logger, t *agentcore.Tool) *agentcore.Tool {
	run := t.Execute
	return t.WithExecute(func(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(input, &in) != nil || in.Path == "" || tc == nil || tc.ThreadID == "" {
			return run(ctx, input, tc)
		}
		ws, err := wss.For(tc)
		if err != nil {
			return run(ctx, input, tc)
		}
		abs, err := ws.Resolve(in.Path)
		if err != nil {
			return run(ctx, input, tc) // the tool refuses it the same way
		}
		w := agentcore.FileWrite{ThreadID: tc.ThreadID, ToolCallID: tc.ToolCallID, Workspace: ws.Root(), Path: filepath.ToSlash(ws.Rel(abs))}
		priorState(ctx, ws, in.Path, abs, &w)
		out, err := run(ctx, input, tc)
		if err != nil {
			return out, err
		}
		w.AfterHash, _ = fileHash(abs)
		if err := j.RecordFileWrite(context.WithoutCancel(ctx), w); err != nil && log != nil {
			log.Warn("a file change was made but not journaled: leaving its branch cannot restore it", "path", w.Path, "call", w.ToolCallID, "err", err)
		}
		return out, nil
	})
}

// priorState fills in what w's file is before the call: absent, or its
// content, or why that is not kept.
func priorState(ctx context.Context, ws *Workspace, given, abs string, w *agentcore.FileWrite) {
	// The name itself, not what a link points to: delete_file removes a
	// link, not its target.
	name := filepath.FromSlash(given)
	if !filepath.IsAbs(name) {
		name = filepath.Join(ws.Root(), name)
	}
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		w.Existed, w.NotKept = true, "a symbolic link"
		return
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		w.Existed, w.NotKept = true, "it could not be read: "+err.Error()
	case fi.IsDir():
		w.Existed, w.NotKept = true, "a folder: the files in it are not kept"
	case !fi.Mode().IsRegular():
		w.Existed, w.NotKept = true, "not a regular file"
	case fi.Size() > JournalFileLimit:
		w.Existed, w.NotKept = true, fmt.Sprintf("too big to keep (%d MiB, the limit is %d MiB)", fi.Size()>>20, JournalFileLimit>>20)
	default:
		data, err := readPrefix(ctx, abs, JournalFileLimit+1)
		w.Existed = true
		switch {
		case err != nil:
			w.NotKept = "it could not be read: " + err.Error()
		case len(data) > JournalFileLimit:
			w.NotKept = fmt.Sprintf("too big to keep (the limit is %d MiB)", JournalFileLimit>>20)
		default:
			w.Before = data
		}
	}
}

// fileHash is the hex SHA-256 of the regular file abs; "" when there is
// none (or it is not a regular file, which no restore overwrites).
func fileHash(abs string) (string, error) {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case fi.IsDir():
		return "folder", nil
	}
	f, _, err := openRegularNow(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RewindFile is what leaving a branch would do to one file: put back the
// content it had before the branch's first change to it (or remove it,
// when it did not exist), unless something stands in the way.
type RewindFile struct {
	Workspace string
	Path      string
	// Remove: the file did not exist before the branch; it is deleted.
	Remove bool
	// Blocked: it cannot be put back (the content was not kept); Changed:
	// it changed outside Parley since the branch last wrote it, and is
	// put back only when the user says so. Why says which, in words.
	Blocked, Changed bool
	Why              string

	before []byte
}

// PlanRewind turns a branch's writes, in the order they were made, into
// one RewindFile per file, checked against the files as they are now.
func PlanRewind(writes []agentcore.FileWrite) []RewindFile {
	type key struct{ ws, path string }
	var order []key
	first := map[key]agentcore.FileWrite{}
	last := map[key]agentcore.FileWrite{}
	for _, w := range writes {
		k := key{w.Workspace, w.Path}
		if _, ok := first[k]; !ok {
			first[k] = w
			order = append(order, k)
		}
		last[k] = w
	}
	var out []RewindFile
	for _, k := range order {
		f, l := first[k], last[k]
		rf := RewindFile{Workspace: k.ws, Path: k.path, Remove: !f.Existed, before: f.Before}
		switch {
		case f.Existed && f.NotKept != "":
			rf.Blocked, rf.Why = true, "its earlier content was not kept: "+f.NotKept
		case f.Existed && f.BeforeHash == "":
			rf.Blocked, rf.Why = true, "its earlier content was not kept"
		}
		if !rf.Blocked {
			now, err := currentHash(k.ws, k.path)
			switch {
			case err != nil:
				rf.Blocked, rf.Why = true, err.Error()
			case now != l.AfterHash:
				rf.Changed, rf.Why = true, changedWhy(now, l.AfterHash)
			}
		}
		out = append(out, rf)
	}
	return out
}

// changedWhy words how a file differs from what Parley left.
func changedWhy(now, left string) string {
	switch {
	case now == "" && left != "":
		return "deleted outside Parley since"
	case now != "" && left == "":
		return "created outside Parley since"
	case now == "folder":
		return "a folder now"
	}
	return "changed outside Parley since"
}

// currentHash is the hash of path in the workspace root as it is now,
// through the workspace's resolver (a link planted since cannot lead a
// restore out of it).
func currentHash(root, path string) (string, error) {
	abs, err := resolveIn(root, path)
	if err != nil {
		return "", err
	}
	return fileHash(abs)
}

func resolveIn(root, path string) (string, error) {
	ws, err := NewWorkspace(root)
	if err != nil {
		return "", fmt.Errorf("the workspace %s is not there any more: %w", root, err)
	}
	return ws.Resolve(path)
}

// ErrRewindChanged refuses a rewind that would overwrite files changed
// outside Parley, unless the user confirms.
var ErrRewindChanged = errors.New("files changed outside Parley since")

// ApplyRewind puts the files back. Files changed outside Parley since are
// overwritten only with overwrite; without it nothing is done and the
// error names them. Blocked files are left as they are.
func ApplyRewind(files []RewindFile, overwrite bool) (restored int, err error) {
	if !overwrite {
		var changed []string
		for _, f := range files {
			if f.Changed && !f.Blocked {
				changed = append(changed, f.Path+" ("+f.Why+")")
			}
		}
		if len(changed) > 0 {
			return 0, fmt.Errorf("%w: %s", ErrRewindChanged, strings.Join(changed, ", "))
		}
	}
	var errs []error
	for _, f := range files {
		if f.Blocked {
			continue
		}
		abs, err := resolveIn(f.Workspace, f.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.Path, err))
			continue
		}
		if f.Remove {
			if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", f.Path, err))
				continue
			}
		} else if err := writeAtomic(abs, f.before); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", f.Path, err))
			continue
		}
		restored++
	}
	return restored, errors.Join(errs...)
}
