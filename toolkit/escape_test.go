package toolkit

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"parley/agentcore"
)

// snapshot records every entry under dir: a file's mode and content, a
// link's target, a directory's mode. Links are not followed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rec := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			rec += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			rec += " " + string(b)
		}
		snap[p] = rec
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestEscapeCorpus runs every path-taking tool on paths that leave the
// workspace or reach what no tool may touch: each is refused with an
// error saying why, and nothing inside or outside the workspace changes.
func TestEscapeCorpus(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows: the corpus is written in Unix paths (/etc/passwd, symlinks); Parley's CI runs it on Linux")
	}
	outside := makeTree(t, map[string]string{"secret.txt": "secret", "dir/f.txt": "f"})
	root := makeTree(t, map[string]string{"a/f.txt": "a", ".git/config": "[core]\n", "root.txt": "root"})
	symlink(t, outside, filepath.Join(root, "link-out"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "file-out"))
	symlink(t, "loop2", filepath.Join(root, "loop1"))
	symlink(t, "loop1", filepath.Join(root, "loop2"))
	ws := newWorkspace(t, root)

	corpus := []struct{ path, want string }{
		{"../x", `path "../x" leaves the workspace root ` + ws.Root()},
		{"../" + filepath.Base(outside) + "/secret.txt", "leaves the workspace root"},
		{"/etc/passwd", `path "/etc/passwd" is outside the workspace root ` + ws.Root()},
		{filepath.Join(outside, "secret.txt"), "is outside the workspace root"},
		{"link-out", `path "link-out" is a symbolic link (or goes through one) to ` + outside},
		{"link-out/secret.txt", "is a symbolic link (or goes through one) to " + filepath.Join(outside, "secret.txt")},
		{"link-out/new/deep.txt", "is a symbolic link (or goes through one)"},
		{"file-out", "which is outside the workspace root"},
		{"loop1", `resolve path "loop1": too many levels of symbolic links`},
		{"loop1/x", "too many levels of symbolic links"},
		{"a/../../b", `path "a/../../b" leaves the workspace root`},
		{"a\x00b", `path "a\x00b" contains a NUL byte, which no file name can hold`},
		{strings.Repeat("n", 5000), "has a name of 5000 bytes; file names are limited to 255 bytes"},
		{"a/" + strings.Repeat("n", 256) + "/f", "has a name of 256 bytes"},
		{".git/config", `path ".git/config" is inside a .git directory, which tools may not access`},
		{".git", "inside a .git directory"},
		{"a/../.git/hooks/pre-commit", "inside a .git directory"},
	}
	// Resolve itself must refuse every one: were it to let one through,
	// the destructive tools below would act on it.
	for _, c := range corpus {
		if got, err := ws.Resolve(c.path); err == nil {
			t.Fatalf("Resolve(%q) = %q; the corpus must be refused before any tool runs", c.path, got)
		}
	}

	tools := Edit(ws)
	for name, tool := range ReadOnly(ws) {
		tools[name] = tool
	}
	inputs := map[string]func(p string) any{
		"view":           func(p string) any { return ViewInput{Path: p} },
		"find_files":     func(p string) any { return FindFilesInput{Path: p} },
		"search_content": func(p string) any { return SearchContentInput{Pattern: "s", Path: p} },
		"write_file":     func(p string) any { return WriteInput{Path: p, Content: "pwned"} },
		"edit_file":      func(p string) any { return EditInput{Path: p, OldStr: "", NewStr: "pwned"} },
		"delete_file":    func(p string) any { return DeleteInput{Path: p, Recursive: true} },
		"mkdir":          func(p string) any { return MkdirInput{Path: p} },
		"execute_command": func(p string) any {
			return ExecInput{Command: "echo pwned > pwned.txt; rm -f secret.txt f.txt", Cwd: p}
		},
	}
	if len(inputs) != len(tools) {
		t.Fatalf("the corpus covers %d tools, there are %d", len(inputs), len(tools))
	}
	etcPasswd, _ := os.ReadFile("/etc/passwd")
	before, beforeOut := snapshot(t, root), snapshot(t, outside)
	for name, input := range inputs {
		for _, c := range corpus {
			in, err := json.Marshal(input(c.path))
			if err != nil {
				t.Fatal(err)
			}
			_, err = tools[name].Execute(t.Context(), in, &agentcore.ToolContext{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %q: error %v\nwant it to contain %q", name, shorten(c.path, 40), err, c.want)
			}
		}
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
	}
	if after := snapshot(t, outside); !equalMaps(beforeOut, after) {
		t.Errorf("the directory outside changed:\nbefore %v\nafter  %v", beforeOut, after)
	}
	if now, _ := os.ReadFile("/etc/passwd"); string(now) != string(etcPasswd) {
		t.Error("/etc/passwd changed")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
