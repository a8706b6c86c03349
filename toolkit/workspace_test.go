package toolkit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
)

// makeTree writes files (slash paths → content; a path ending in "/" is
// an empty directory) under a new temporary directory and returns it.
func makeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("this OS account cannot create symlinks (Windows without developer mode): %v", err)
	}
}

func newWorkspace(t *testing.T, root string) *Workspace {
	t.Helper()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// runTool runs a tool the way the agent loop does: validated input,
// Execute, output checked against the output schema, then the model's
// view of it.
func runTool(ctx context.Context, t *testing.T, tool *agentcore.Tool, input string) (any, string, error) {
	t.Helper()
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("input %s rejected by the schema: %v", input, err)
	}
	out, err := tool.Execute(ctx, json.RawMessage(input), &agentcore.ToolContext{})
	if err != nil {
		return nil, "", err
	}
	if err := tool.ValidateOutput(out); err != nil {
		t.Fatalf("output does not match the output schema: %v", err)
	}
	mo := tool.ToModelOutput(out)
	if mo.Type != "text" {
		t.Fatalf("model output type = %q, want text", mo.Type)
	}
	return out, mo.Value.(string), nil
}

func TestResolve(t *testing.T) {
	outside := makeTree(t, map[string]string{"secret.txt": "s", "dir/f.txt": "f"})
	root := makeTree(t, map[string]string{
		"a.txt":           "a",
		"sub/b.txt":       "b",
		".git/config":     "[core]",
		"sub/.git/HEAD":   "ref",
		".gitignore":      "x",
		"sub/.gitkeep":    "",
		"inner/real.txt":  "r",
		"inner/deep/d.go": "d",
	})
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "link-file-out"))
	symlink(t, filepath.Join(outside, "dir"), filepath.Join(root, "link-dir-out"))
	symlink(t, filepath.Join(outside, "missing.txt"), filepath.Join(root, "dangling-out"))
	symlink(t, "../../"+filepath.Base(outside), filepath.Join(root, "sub", "rel-out"))
	symlink(t, "inner", filepath.Join(root, "link-in"))
	symlink(t, ".git", filepath.Join(root, "link-git"))
	symlink(t, "../missing-in.txt", filepath.Join(root, "sub", "dangling-in"))
	symlink(t, "../../nowhere", filepath.Join(root, "sub", "dangling-rel-out"))
	symlink(t, "loop2", filepath.Join(root, "loop1"))
	symlink(t, "loop1", filepath.Join(root, "loop2"))
	ws := newWorkspace(t, root)
	real := ws.Root()

	tests := []struct {
		path    string
		want    string // root-relative, when allowed
		wantErr string // substring, when refused
	}{
		{path: "", want: "."},
		{path: ".", want: "."},
		{path: "a.txt", want: "a.txt"},
		{path: "./sub/../a.txt", want: "a.txt"},
		{path: "sub/b.txt", want: "sub/b.txt"},
		{path: filepath.Join(real, "sub", "b.txt"), want: "sub/b.txt"},
		{path: "missing/new.txt", want: "missing/new.txt"},
		{path: ".gitignore", want: ".gitignore"},
		{path: "sub/.gitkeep", want: "sub/.gitkeep"},
		{path: "link-in/real.txt", want: "inner/real.txt"},
		{path: "link-in/deep/d.go", want: "inner/deep/d.go"},
		{path: "sub/dangling-in", want: "missing-in.txt"},
		{path: "../x", wantErr: `path "../x" leaves the workspace root ` + real},
		{path: "sub/../../x", wantErr: "leaves the workspace root"},
		{path: "/etc/passwd", wantErr: `path "/etc/passwd" is outside the workspace root ` + real},
		{path: filepath.Join(outside, "secret.txt"), wantErr: "is outside the workspace root"},
		{path: "link-file-out", wantErr: `path "link-file-out" is a symbolic link (or goes through one) to ` + filepath.Join(outside, "secret.txt")},
		{path: "link-dir-out/f.txt", wantErr: "outside the workspace root " + real},
		{path: "dangling-out", wantErr: "outside the workspace root"},
		{path: "sub/rel-out/secret.txt", wantErr: "outside the workspace root"},
		{path: "sub/dangling-rel-out", wantErr: "outside the workspace root"},
		{path: "loop1/x", wantErr: `resolve path "loop1/x": too many levels of symbolic links`},
		{path: ".git/config", wantErr: `path ".git/config" is inside a .git directory, which tools may not access (workspace root ` + real},
		{path: ".git", wantErr: "inside a .git directory"},
		{path: "sub/.git/HEAD", wantErr: "inside a .git directory"},
		{path: ".GIT/config", wantErr: "inside a .git directory"},
		{path: "link-git/config", wantErr: "inside a .git directory"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := ws.Resolve(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) = %q, %v; want error containing %q", tt.path, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			if rel := ws.Rel(got); rel != tt.want {
				t.Fatalf("Resolve(%q) = %q (rel %q), want rel %q", tt.path, got, rel, tt.want)
			}
		})
	}
}

func TestResolveRootThroughLink(t *testing.T) {
	real := makeTree(t, map[string]string{"a.txt": "a"})
	link := filepath.Join(t.TempDir(), "ws")
	symlink(t, real, link)
	ws := newWorkspace(t, link)
	got, err := ws.Resolve(filepath.Join(link, "a.txt"))
	if err != nil {
		t.Fatalf("an absolute path under the root as given: %v", err)
	}
	if ws.Rel(got) != "a.txt" {
		t.Fatalf("resolved to %q", got)
	}
}

func TestNewWorkspaceErrors(t *testing.T) {
	root := makeTree(t, map[string]string{"f": "x"})
	for _, p := range []string{filepath.Join(root, "f"), filepath.Join(root, "missing")} {
		if _, err := NewWorkspace(p); err == nil {
			t.Errorf("NewWorkspace(%q) succeeded, want an error", p)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "src/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "src/deep/a.go", true},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**/*.go", "lib/a.go", false},
		{"src/**", "src/x/y", true},
		{"**", "anything/at/all", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		{"*.{go,md}", "README.md", true},
		{"*.{go,md}", "x.txt", false},
		{"{src,lib}/**/*.ts", "lib/a/b.ts", true},
		{"*.{a,{b,c}}", "x.c", true},
		{"{x", "{x", true},
		{"file?.txt", "file1.txt", true},
		{"[ab].txt", "b.txt", true},
		{"[ab].txt", "c.txt", false},
	}
	for _, tt := range tests {
		alts, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", tt.pattern, err)
		}
		if got := matchAny(alts, tt.name); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "src/[a-", strings.Repeat("{a,b}", 9)} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compileGlob(%q) succeeded, want an error", bad)
		}
	}
}

func TestGitignore(t *testing.T) {
	root := makeTree(t, map[string]string{".gitignore": strings.Join([]string{
		"# comment",
		"*.log",
		"!keep.log",
		"build/",
		"/only-root.txt",
		"docs/generated",
		"**/tmp",
		"",
	}, "\n")})
	rules, err := newWorkspace(t, root).gitignore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"app.log", false, true},
		{"deep/app.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"src/build", true, true},
		{"build", false, false}, // "build/" matches directories only
		{"only-root.txt", false, true},
		{"sub/only-root.txt", false, false},
		{"docs/generated", true, true},
		{"x/docs/generated", true, false},
		{"a/b/tmp", true, true},
		{"main.go", false, false},
	}
	for _, tt := range tests {
		if got := rules.ignored(tt.rel, tt.isDir); got != tt.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
	if !rules.covers("build/sub") || rules.covers("src") {
		t.Error("covers: want build/sub covered (its parent is ignored) and src not")
	}
}

func TestReadOnly(t *testing.T) {
	tools := ReadOnly(newWorkspace(t, t.TempDir()))
	wantProps := map[string][]string{
		"view":           {"path", "offset", "limit"},
		"find_files":     {"pattern", "path", "maxResults"},
		"search_content": {"pattern", "path", "contextLines", "caseSensitive", "maxCount"},
	}
	if len(tools) != len(wantProps) {
		t.Fatalf("ReadOnly has %d tools, want %d", len(tools), len(wantProps))
	}
	for name, props := range wantProps {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("ReadOnly has no %s", name)
		}
		if tool.ID != name {
			t.Errorf("tool %s has id %q", name, tool.ID)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s input schema lacks %q", name, p)
			}
		}
		if len(schema.Properties) != len(props) {
			t.Errorf("%s input schema has %d properties, want %d", name, len(schema.Properties), len(props))
		}
	}
}

// TestDescriptions pins what each description must tell the model: what
// the tool does, its limits, and which tool to use instead.
func TestDescriptions(t *testing.T) {
	tools := ReadOnly(newWorkspace(t, t.TempDir()))
	want := map[string][]string{
		"view":           {"line numbers", "2000 lines", "`offset`", "`limit`", "2000 characters", "200 KB", "one-level listing", "Binary", "10 MB", "`.git`", "`find_files`", "`search_content`"},
		"find_files":     {"glob", "`**`", "`**/*.go`", "default 200", "at most 5000", "`node_modules`", "`.gitignore`", "`search_content`", "`view`"},
		"search_content": {"regular expression", "RE2", "`path:line: text`", "`path-line- text`", "`--`", "default 100", "at most 1000", "binary", "`.gitignore`", "10 MB", "`find_files`", "`view`"},
	}
	for name, phrases := range want {
		for _, p := range phrases {
			if !strings.Contains(tools[name].Description, p) {
				t.Errorf("%s description lacks %q", name, p)
			}
		}
	}
}
