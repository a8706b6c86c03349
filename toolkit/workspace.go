package toolkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

const (
	// maxFileBytes caps what one tool call reads of one file: beyond it a
	// file is data, not something a model reads whole, and it bounds memory.
	maxFileBytes = 10 << 20
	// maxOutputBytes caps one tool result (~50k tokens), so a single call
	// cannot crowd out the rest of the model's context.
	maxOutputBytes = 200 << 10
	// binarySniffBytes is git's heuristic: a NUL byte in the first 8 KB
	// means the file is binary.
	binarySniffBytes = 8 << 10
	// maxWalkEntries bounds the time a walk spends on a huge tree.
	maxWalkEntries = 200_000
	// maxLinkHops bounds the symbolic links followed while resolving one
	// path, as the kernel's ELOOP limit does.
	maxLinkHops = 40
	// maxNameBytes is the longest file name common file systems (ext4,
	// APFS, NTFS) hold; a longer one can only fail, later and less clearly.
	maxNameBytes = 255
)

// skippedDirs are never walked into: version-control internals and
// dependency trees that would drown every listing and search.
var skippedDirs = map[string]bool{".git": true, "node_modules": true}

// Workspace confines model-given paths to one root directory. Every path a
// tool touches goes through Resolve, which refuses escapes and .git
// internals, so a tool cannot read outside the root by any spelling.
type Workspace struct {
	root  string // absolute, clean, symbolic links resolved
	given string // absolute and clean as given; differs from root when it went through a link
}

// NewWorkspace returns a workspace rooted at root, which must be an
// existing directory.
func NewWorkspace(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", root)
	}
	return &Workspace{root: real, given: abs}, nil
}

// Root is the workspace's root directory, absolute with links resolved.
func (w *Workspace) Root() string { return w.root }

// Resolve turns a model-given path into an absolute path inside the root
// with every symbolic link resolved. A relative path is taken from the
// root; "" and "." are the root itself. The path need not exist (links
// along the part that exists are still followed), so a missing file is
// reported by whoever opens it.
//
// Refused, with an error naming the path and the root: paths that leave
// the root lexically (../x, an absolute path elsewhere) or through a
// symbolic link, paths into a .git directory, and paths no file system
// holds (a NUL byte, a name longer than 255 bytes).
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		p = "."
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte, which no file name can hold", p)
	}
	for _, name := range strings.Split(filepath.ToSlash(p), "/") {
		if len(name) > maxNameBytes {
			return "", fmt.Errorf("path %q has a name of %d bytes; file names are limited to %d bytes", shorten(p, 80), len(name), maxNameBytes)
		}
	}
	var lexical string
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		switch {
		case within(w.root, c):
			lexical = c
		case within(w.given, c):
			lexical = filepath.Join(w.root, mustRel(w.given, c))
		default:
			return "", fmt.Errorf("path %q is outside the workspace root %s; only files under the root can be used — use a path relative to the root, like %q",
				p, w.root, strings.TrimLeft(filepath.ToSlash(p), "/"))
		}
	} else {
		lexical = filepath.Join(w.root, p)
		if !within(w.root, lexical) {
			return "", fmt.Errorf("path %q leaves the workspace root %s; only files under the root can be used", p, w.root)
		}
	}
	if err := w.checkGit(p, lexical); err != nil {
		return "", err
	}
	real, err := evalLinks(lexical, 0)
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", p, err)
	}
	if !within(w.root, real) {
		return "", fmt.Errorf("path %q is a symbolic link (or goes through one) to %s, which is outside the workspace root %s; only files under the root can be used", p, real, w.root)
	}
	if err := w.checkGit(p, real); err != nil {
		return "", err
	}
	return real, nil
}

// Rel is abs (inside the root) as a slash-separated path relative to the
// root: the form tools show the model and accept back.
func (w *Workspace) Rel(abs string) string {
	return filepath.ToSlash(mustRel(w.root, abs))
}

func (w *Workspace) checkGit(given, abs string) error {
	for _, part := range strings.Split(filepath.ToSlash(mustRel(w.root, abs)), "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("path %q is inside a .git directory, which tools may not access (workspace root %s); read repository state with git commands instead", given, w.root)
		}
	}
	return nil
}

// shorten cuts s to about n bytes (on a rune boundary) for an error
// message, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// within reports whether p (absolute, clean) is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func mustRel(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return rel
}

// evalLinks resolves the symbolic links in p (absolute, clean) as far as p
// exists, then appends the missing rest. Unlike filepath.EvalSymlinks it
// also follows a dangling link, so a link to a missing file outside the
// root is seen as outside.
func evalLinks(p string, hops int) (string, error) {
	if hops > maxLinkHops {
		return "", errors.New("too many levels of symbolic links")
	}
	var rest []string
	cur := p
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				parent, err := evalLinks(filepath.Dir(cur), hops+1)
				if err != nil {
					return "", err
				}
				target = filepath.Join(parent, target)
			}
			return evalLinks(filepath.Join(append([]string{filepath.Clean(target)}, rest...)...), hops+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// stat is os.Stat of a resolved path, with the model-facing error for a
// missing one.
func (w *Workspace) stat(given, abs string) (fs.FileInfo, error) {
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("path %q does not exist in the workspace (root %s); use find_files to look for it", given, w.root)
	}
	if err != nil {
		return nil, fmt.Errorf("stat %q: %w", given, err)
	}
	return fi, nil
}

// readHead reads at most maxFileBytes of the regular file abs; whole
// reports whether that was all of it. Anything else (a FIFO, a device, a
// socket, a directory) is refused unopened, or at the open if it was
// swapped in after the check. It returns when ctx ends even if the read
// itself hangs (a stalled network or FUSE file system): the read goes on
// alone and closes its file when it ends.
func readHead(ctx context.Context, abs string) (data []byte, whole bool, err error) {
	return withContext(ctx, func() ([]byte, bool, error) {
		f, _, err := openRegularNow(abs)
		if err != nil {
			return nil, false, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
		if err != nil {
			return nil, false, err
		}
		if len(data) > maxFileBytes {
			return data[:maxFileBytes], false, nil
		}
		return data, true, nil
	})
}

// withContext runs read, returning its result or, if ctx ends first,
// ctx's error.
func withContext(ctx context.Context, read func() ([]byte, bool, error)) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	type result struct {
		data  []byte
		whole bool
		err   error
	}
	done := make(chan result, 1) // buffered: an abandoned read does not leak its goroutine for ever
	go func() {
		data, whole, err := read()
		done <- result{data, whole, err}
	}()
	select {
	case r := <-done:
		return r.data, r.whole, r.err
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// notRegularError says what a file is that tools do not open.
type notRegularError struct{ mode fs.FileMode }

func (e notRegularError) Error() string {
	kind := "special file"
	switch t := e.mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case t&fs.ModeSocket != 0:
		kind = "socket"
	case t&fs.ModeCharDevice != 0:
		kind = "character device"
	case t&fs.ModeDevice != 0:
		kind = "device"
	case t&fs.ModeDir != 0:
		kind = "directory"
	case t&fs.ModeSymlink != 0:
		kind = "symbolic link"
	}
	return fmt.Sprintf("is not a regular file (a %s)", kind)
}

// readError is the error of reading the file given as given: what it is
// when it is not a regular file, else what failed.
func readError(given string, err error) error {
	if isNotRegular(err) {
		return fmt.Errorf("path %q %w; only regular files can be read", given, err)
	}
	return fmt.Errorf("read %q: %w", given, err)
}

// isNotRegular reports whether err is a notRegularError.
func isNotRegular(err error) bool {
	var nr notRegularError
	return errors.As(err, &nr)
}

// openRegularNow opens abs (resolved, inside the root) for reading if it
// is a regular file: checked with Lstat before the open, and with fstat
// after it, since the file may be swapped between the two. The open itself
// never waits (openNoWait).
func openRegularNow(abs string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegularError{fi.Mode()}
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegularError{fi.Mode()}
	}
	return f, fi, nil
}

// isBinary applies git's heuristic: a NUL in the first 8 KB.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0
}

// errWalkLimit stops a walk that visited maxWalkEntries entries.
var errWalkLimit = errors.New("walk limit reached")

// walk calls visit for every non-directory entry under dir (absolute,
// resolved, inside the root), in lexical order, with its root-relative
// slash path. It skips skippedDirs and what the root .gitignore excludes —
// unless dir itself is excluded, since then the model asked for it by
// name. Symbolic links are reported, never followed. complete is false
// when the walk stopped at maxWalkEntries; an error from visit, or the
// context's, ends the walk and is returned.
func (w *Workspace) walk(ctx context.Context, dir string, visit func(rel string, d fs.DirEntry) error) (complete bool, err error) {
	ign, err := w.gitignore(ctx)
	if err != nil {
		return false, err
	}
	if ign.covers(w.Rel(dir)) {
		ign = nil
	}
	seen := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable entry is skipped, not fatal
		}
		if p == dir {
			return nil
		}
		if seen++; seen > maxWalkEntries {
			return errWalkLimit
		}
		rel := w.Rel(p)
		if d.IsDir() {
			if skippedDirs[d.Name()] || ign.ignored(rel, true) {
				return filepath.SkipDir
			}
			return nil
		}
		if skippedDirs[d.Name()] || ign.ignored(rel, false) {
			return nil
		}
		return visit(rel, d)
	})
	if errors.Is(err, errWalkLimit) {
		return false, nil
	}
	return err == nil, err
}

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	alts     []string // compiled glob: slash-separated, no leading or trailing slash
	anchored bool     // matched against the root-relative path, not the name
	dirOnly  bool     // trailing slash: matches directories only
	negate   bool     // leading "!": re-includes
}

// ignoreRules is a parsed .gitignore; the last matching rule wins.
type ignoreRules []ignoreRule

// gitignore reads the root .gitignore, resolved like any path a tool
// reads: one that is linked out of the root, or is not a regular file (a
// FIFO would block the walk for ever), is an error; a missing one has no
// rules. It supports the common forms — names, globs (with **), "dir/", a
// leading "/" or a middle slash to anchor at the root, "!" to re-include —
// not escapes or nested .gitignore files.
func (w *Workspace) gitignore(ctx context.Context) (ignoreRules, error) {
	abs, err := w.Resolve(".gitignore")
	if err != nil {
		return nil, fmt.Errorf("the workspace's .gitignore cannot be used, so ignored files cannot be told apart: %w", err)
	}
	data, _, err := readHead(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case isNotRegular(err):
		return nil, fmt.Errorf("the workspace's .gitignore %s; it cannot be read, so ignored files cannot be told apart — ask the user to make it a regular file", err)
	case err != nil:
		return nil, fmt.Errorf("read the workspace's .gitignore: %w", err)
	}
	var rules ignoreRules
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.HasPrefix(line, "/") {
			r.anchored, line = true, strings.TrimLeft(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
		}
		alts, err := compileGlob(line)
		if line == "" || err != nil {
			continue // git ignores what it cannot parse; so do we
		}
		r.alts = alts
		rules = append(rules, r)
	}
	return rules, nil
}

// ignored reports whether the entry at rel (root-relative, slash) is
// excluded. Entries under an excluded directory are never asked about: the
// walk does not enter it.
func (rs ignoreRules) ignored(rel string, isDir bool) bool {
	ignored := false
	for _, r := range rs {
		if r.dirOnly && !isDir {
			continue
		}
		subject := path.Base(rel)
		if r.anchored {
			subject = rel
		}
		if matchAny(r.alts, subject) {
			ignored = !r.negate
		}
	}
	return ignored
}

// covers reports whether rel (a directory) or one of its ancestors is
// excluded.
func (rs ignoreRules) covers(rel string) bool {
	if len(rs) == 0 || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		if rs.ignored(strings.Join(parts[:i+1], "/"), true) {
			return true
		}
	}
	return false
}
