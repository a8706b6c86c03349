package toolkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func findTree(t *testing.T) *Workspace {
	t.Helper()
	root := makeTree(t, map[string]string{
		".gitignore":             "*.log\nbuild/\n/root-only.txt\n",
		"main.go":                "package main",
		"README.md":              "# x",
		"root-only.txt":          "ignored at the root",
		"debug.log":              "ignored",
		"src/a.go":               "package src",
		"src/a_test.go":          "package src",
		"src/deep/b.go":          "package deep",
		"src/deep/notes.md":      "notes",
		"src/deep/root-only.txt": "kept: the pattern is anchored",
		"build/out.go":           "ignored",
		"build/sub/x.go":         "ignored",
		"node_modules/lib/i.js":  "ignored",
		"src/node_modules/m.js":  "ignored",
		".git/HEAD":              "ref",
		".github/ci.yml":         "on: push",
	})
	return newWorkspace(t, root)
}

func TestFindFiles(t *testing.T) {
	ws := findTree(t)
	tool := FindFilesTool(ws)
	all := []string{".github/ci.yml", ".gitignore", "README.md", "main.go", "src/a.go", "src/a_test.go", "src/deep/b.go", "src/deep/notes.md", "src/deep/root-only.txt"}
	tests := []struct {
		name      string
		input     string
		want      []string
		total     int // when it differs from len(want)
		truncated bool
		model     string
	}{
		{name: "everything", input: `{}`, want: all},
		{name: "top level only", input: `{"pattern":"*.go"}`, want: []string{"main.go"}, model: "main.go"},
		{name: "any depth", input: `{"pattern":"**/*.go"}`, want: []string{"main.go", "src/a.go", "src/a_test.go", "src/deep/b.go"}},
		{name: "under a directory", input: `{"pattern":"src/**/*.go"}`, want: []string{"src/a.go", "src/a_test.go", "src/deep/b.go"}},
		{name: "alternatives", input: `{"pattern":"**/*.{md,yml}"}`, want: []string{".github/ci.yml", "README.md", "src/deep/notes.md"}},
		{name: "class", input: `{"pattern":"**/*_test.go"}`, want: []string{"src/a_test.go"}},
		{name: "relative to path", input: `{"path":"src","pattern":"*.go"}`, want: []string{"src/a.go", "src/a_test.go"}},
		{name: "leading ./", input: `{"path":"./src/","pattern":"./deep/*"}`, want: []string{"src/deep/b.go", "src/deep/notes.md", "src/deep/root-only.txt"}},
		{name: "ignored dir asked for by name", input: `{"path":"build"}`, want: []string{"build/out.go", "build/sub/x.go"}},
		{name: "cut", input: `{"pattern":"**/*.go","maxResults":2}`, want: []string{"main.go", "src/a.go"}, total: 4, truncated: true,
			model: "main.go\nsrc/a.go\n\n[Showing 2 of 4 matching files; narrow pattern or path to see the rest.]"},
		{name: "nothing", input: `{"pattern":"**/*.rs"}`, want: []string{},
			model: `[No files match pattern "**/*.rs" in the workspace root (.git, node_modules and .gitignored paths are skipped).]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, model, err := runTool(context.Background(), t, tool, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			out := raw.(FindFilesOutput)
			if !slices.Equal(out.Files, tt.want) {
				t.Errorf("files = %q, want %q", out.Files, tt.want)
			}
			total := tt.total
			if total == 0 {
				total = len(tt.want)
			}
			if out.Total != total || out.Truncated != tt.truncated {
				t.Errorf("total = %d, truncated = %v; want %d, %v", out.Total, out.Truncated, total, tt.truncated)
			}
			if tt.model != "" && model != tt.model {
				t.Errorf("model text = %q, want %q", model, tt.model)
			}
		})
	}
}

func TestFindFilesSymlinks(t *testing.T) {
	outside := makeTree(t, map[string]string{"dir/secret.go": "x"})
	root := makeTree(t, map[string]string{"a.go": "a"})
	symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "out"))
	raw, _, err := runTool(context.Background(), t, FindFilesTool(newWorkspace(t, root)), `{"pattern":"**/*.go"}`)
	if err != nil {
		t.Fatal(err)
	}
	if files := raw.(FindFilesOutput).Files; !slices.Equal(files, []string{"a.go"}) {
		t.Fatalf("files = %q: a linked directory must not be walked", files)
	}
}

func TestFindFilesBudget(t *testing.T) {
	files := map[string]string{}
	name := strings.Repeat("n", 200)
	for i := range 1500 {
		files[fmt.Sprintf("d/%s%04d", name, i)] = ""
	}
	raw, model, err := runTool(context.Background(), t, FindFilesTool(newWorkspace(t, makeTree(t, files))), `{"maxResults":5000}`)
	if err != nil {
		t.Fatal(err)
	}
	out := raw.(FindFilesOutput)
	if !out.Truncated || out.Total != 1500 || len(out.Files) >= 1500 || len(model) > maxOutputBytes+500 {
		t.Fatalf("truncated = %v, total = %d, shown = %d, model bytes = %d", out.Truncated, out.Total, len(out.Files), len(model))
	}
}

func TestFindFilesErrors(t *testing.T) {
	ws := findTree(t)
	tool := FindFilesTool(ws)
	tests := []struct{ input, want string }{
		{`{"pattern":"src/[a-"}`, `invalid glob pattern "src/[a-": segment "[a-": syntax error in pattern`},
		{`{"path":"main.go"}`, `path "main.go" is a file, not a directory; find_files searches directories (use view to read a file)`},
		{`{"path":"missing"}`, `path "missing" does not exist in the workspace`},
		{`{"path":"../"}`, `path "../" leaves the workspace root ` + ws.Root()},
		{`{"path":"/"}`, `path "/" is outside the workspace root`},
		{`{"path":".git"}`, "inside a .git directory"},
	}
	for _, tt := range tests {
		_, _, err := runTool(context.Background(), t, tool, tt.input)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.input, err, tt.want)
		}
	}
}

func TestFindFilesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := runTool(ctx, t, FindFilesTool(findTree(t)), `{}`)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
