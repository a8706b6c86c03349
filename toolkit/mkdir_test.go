package toolkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMkdir(t *testing.T) {
	root := makeTree(t, map[string]string{"f.txt": "f", "real/": ""})
	symlink(t, "real", filepath.Join(root, "link"))
	ws := newWorkspace(t, root)
	tool := MkdirTool(ws)
	for _, tt := range []struct {
		path, want string
		out        MkdirOutput
	}{
		{"a/b/c", "Created directory a/b/c", MkdirOutput{Path: "a/b/c", Created: true}},
		{"a/b/c", "Directory a/b/c already exists", MkdirOutput{Path: "a/b/c"}},
		{"a/b", "Directory a/b already exists", MkdirOutput{Path: "a/b"}},
		{"link/sub", "Created directory real/sub", MkdirOutput{Path: "real/sub", Created: true}},
		{"", "Directory . already exists", MkdirOutput{Path: "."}},
	} {
		out, model, err := runTool(t.Context(), t, tool, `{"path":"`+tt.path+`"}`)
		if err != nil {
			t.Fatalf("mkdir %s: %v", tt.path, err)
		}
		if out.(MkdirOutput) != tt.out || model != tt.want {
			t.Errorf("mkdir %s: %+v, model %q; want %+v, %q", tt.path, out, model, tt.out, tt.want)
		}
		if fi, err := os.Stat(filepath.Join(root, tt.out.Path)); err != nil || !fi.IsDir() {
			t.Errorf("mkdir %s: no directory at %s", tt.path, tt.out.Path)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{"f.txt", "f.txt already exists and is a file, not a directory"},
		{"f.txt/sub", "cannot create directory f.txt/sub: a file is in the way of one of its parent directories"},
		{".git/hooks", "inside a .git directory"},
	} {
		_, _, err := runTool(t.Context(), t, tool, `{"path":"`+tt.path+`"}`)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("mkdir %s: error %v, want %q", tt.path, err, tt.want)
		}
	}
	if readFile(t, filepath.Join(root, "f.txt")) != "f" {
		t.Error("f.txt changed")
	}
}
