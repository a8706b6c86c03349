package toolkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeleteFile(t *testing.T) {
	root := makeTree(t, map[string]string{
		"a.txt":          "a",
		"d/x.txt":        "x",
		"d/sub/y.txt":    "y",
		"d2/z.txt":       "z",
		"empty/":         "",
		"keep/k.txt":     "k",
		"target/t.txt":   "t",
		"repo/.git/HEAD": "ref",
		"repo/main.go":   "package main",
	})
	symlink(t, "target", filepath.Join(root, "dirlink"))
	symlink(t, "keep/k.txt", filepath.Join(root, "filelink"))
	ws := newWorkspace(t, root)
	tool := DeleteFileTool(ws)
	gone := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(root, rel))
		return os.IsNotExist(err)
	}

	for _, tt := range []struct {
		input, want string
		wantGone    []string
		wantKept    []string
	}{
		{`{"path":"a.txt"}`, "Deleted a.txt", []string{"a.txt"}, nil},
		{`{"path":"d","recursive":true}`, "Deleted directory d and the 3 entries in it", []string{"d"}, nil},
		{`{"path":"dirlink"}`, "Deleted symbolic link dirlink", []string{"dirlink"}, []string{"target/t.txt"}},
		{`{"path":"empty","recursive":true}`, "Deleted empty directory empty", []string{"empty"}, nil},
		{`{"path":"filelink","recursive":true}`, "Deleted symbolic link filelink", []string{"filelink"}, []string{"keep/k.txt"}},
	} {
		_, model, err := runTool(t.Context(), t, tool, tt.input)
		if err != nil {
			t.Fatalf("%s: %v", tt.input, err)
		}
		if model != tt.want {
			t.Errorf("%s: model sees %q, want %q", tt.input, model, tt.want)
		}
		for _, g := range tt.wantGone {
			if !gone(g) {
				t.Errorf("%s: %s still there", tt.input, g)
			}
		}
		for _, k := range tt.wantKept {
			if gone(k) {
				t.Errorf("%s: %s deleted too", tt.input, k)
			}
		}
	}
	out, _, err := runTool(t.Context(), t, tool, `{"path":"keep/k.txt"}`)
	if err != nil || out.(DeleteOutput) != (DeleteOutput{Path: "keep/k.txt", Kind: "file"}) {
		t.Fatalf("delete keep/k.txt: %+v %v", out, err)
	}
	if gone("keep") {
		t.Fatal("deleting a file took its directory")
	}

	for _, tt := range []struct{ input, want string }{
		{`{"path":"keep"}`, "keep is a directory (empty); to delete it with everything in it, call delete_file again with recursive set to true"},
		{`{"path":"d2"}`, "d2 is a directory (1 entry in it); to delete it"},
		{`{"path":"missing.txt"}`, `path "missing.txt" does not exist in the workspace (root ` + ws.Root() + `), so there is nothing to delete; use find_files to look for it`},
		{`{"path":"repo","recursive":true}`, "repo holds a git repository (repo/.git), which tools may not change; nothing was deleted"},
		{`{"path":"","recursive":true}`, `path "" is the workspace root (` + ws.Root() + `), which cannot be deleted; name a file or directory inside it`},
		{`{"path":".","recursive":true}`, "is the workspace root"},
		{`{"path":"keep/..","recursive":true}`, "is the workspace root"},
		{`{"path":"` + ws.Root() + `","recursive":true}`, "is the workspace root"},
		{`{"path":"` + ws.Root() + `/","recursive":true}`, "is the workspace root"},
		{`{"path":".git","recursive":true}`, "inside a .git directory"},
	} {
		_, _, err := runTool(t.Context(), t, tool, tt.input)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.input, err, tt.want)
		}
	}
	for _, k := range []string{"keep", "d2/z.txt", "repo/.git/HEAD", "repo/main.go", "target/t.txt"} {
		if gone(k) {
			t.Errorf("%s deleted by a refused call", k)
		}
	}
}
