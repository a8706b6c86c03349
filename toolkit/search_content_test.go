package toolkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func searchTree(t *testing.T) (*Workspace, string) {
	t.Helper()
	outside := makeTree(t, map[string]string{"secret.go": "func Secret() {}\n"})
	root := makeTree(t, map[string]string{
		".gitignore":          "gen/\n*.min.js\n",
		"a.go":                "package a\n\nfunc Alpha() {}\n\n// TODO: beta\nfunc Beta() {}\n",
		"b/c.go":              "package b\n\nfunc gamma() {}\n",
		"ctx.txt":             "1\n2\nhit\n4\n5\n6\n7\nhit\n9\nhit\n11\n12\n13\n14\n15\nhit\n",
		"img.png":             "\x89PNG\x00\x00func Fake()",
		"gen/z.go":            "func Generated() {}\n",
		"app.min.js":          "func Minified() {}\n",
		"node_modules/m/i.go": "func Vendored() {}\n",
		".git/hooks/x":        "func Hook() {}\n",
	})
	symlink(t, filepath.Join(outside, "secret.go"), filepath.Join(root, "secret.go"))
	symlink(t, "a.go", filepath.Join(root, "alias.go"))
	return newWorkspace(t, root), outside
}

func TestSearchContent(t *testing.T) {
	ws, _ := searchTree(t)
	tool := SearchContentTool(ws)
	tests := []struct {
		name      string
		input     string
		content   string
		matches   int
		files     int
		truncated bool
		model     string
	}{
		{name: "happy path", input: `{"pattern":"^func [A-Z]"}`,
			content: "a.go:3: func Alpha() {}\na.go:6: func Beta() {}\nalias.go:3: func Alpha() {}\nalias.go:6: func Beta() {}",
			matches: 4, files: 2},
		{name: "one file", input: `{"pattern":"func","path":"b/c.go"}`, content: "b/c.go:3: func gamma() {}", matches: 1, files: 1,
			model: "1 match in 1 file:\nb/c.go:3: func gamma() {}"},
		{name: "directory", input: `{"pattern":"func","path":"b"}`, content: "b/c.go:3: func gamma() {}", matches: 1, files: 1},
		{name: "case-insensitive", input: `{"pattern":"todo","caseSensitive":false,"path":"a.go"}`,
			content: "a.go:5: // TODO: beta", matches: 1, files: 1},
		{name: "case-sensitive by default", input: `{"pattern":"todo","path":"a.go"}`, content: "",
			model: `[No matches for "todo" in "a.go" (binary files, .git, node_modules and .gitignored paths are skipped).]`},
		{name: "adjacent groups merge, others are separated", input: `{"pattern":"hit","path":"ctx.txt","contextLines":2}`,
			content: strings.Join([]string{
				"ctx.txt-1- 1", "ctx.txt-2- 2", "ctx.txt:3: hit", "ctx.txt-4- 4", "ctx.txt-5- 5",
				"ctx.txt-6- 6", "ctx.txt-7- 7", "ctx.txt:8: hit", "ctx.txt-9- 9", "ctx.txt:10: hit", "ctx.txt-11- 11", "ctx.txt-12- 12",
				"--",
				"ctx.txt-14- 14", "ctx.txt-15- 15", "ctx.txt:16: hit",
			}, "\n"),
			matches: 4, files: 1},
		{name: "context across files", input: `{"pattern":"Beta|gamma","contextLines":1}`,
			content: "a.go-5- // TODO: beta\na.go:6: func Beta() {}\n--\nalias.go-5- // TODO: beta\nalias.go:6: func Beta() {}\n--\nb/c.go-2- \nb/c.go:3: func gamma() {}",
			matches: 3, files: 3},
		{name: "maxCount", input: `{"pattern":"hit","path":"ctx.txt","maxCount":2}`,
			content: "ctx.txt:3: hit\nctx.txt:8: hit", matches: 2, files: 1, truncated: true,
			model: "2 matches in 1 file:\nctx.txt:3: hit\nctx.txt:8: hit\n\n[Stopped at maxCount=2 matches; there may be more. Narrow pattern or path, or raise maxCount (at most 1000).]"},
		{name: "skips binary, ignored and outside", input: `{"pattern":"Fake|Generated|Minified|Vendored|Hook|Secret"}`, content: ""},
		{name: "ignored dir asked for by name", input: `{"pattern":"func","path":"gen"}`, content: "gen/z.go:1: func Generated() {}", matches: 1, files: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, model, err := runTool(context.Background(), t, tool, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			out := raw.(SearchContentOutput)
			if out.Content != tt.content {
				t.Errorf("content:\n%s\nwant:\n%s", out.Content, tt.content)
			}
			if out.Matches != tt.matches || out.Files != tt.files || out.Truncated != tt.truncated {
				t.Errorf("matches, files, truncated = %d, %d, %v; want %d, %d, %v", out.Matches, out.Files, out.Truncated, tt.matches, tt.files, tt.truncated)
			}
			if tt.model != "" && model != tt.model {
				t.Errorf("model text = %q, want %q", model, tt.model)
			}
		})
	}
}

func TestSearchContentBudget(t *testing.T) {
	line := "match " + strings.Repeat("w", 700) + "\n"
	root := makeTree(t, map[string]string{"wide.txt": strings.Repeat(line, 1000)})
	raw, model, err := runTool(context.Background(), t, SearchContentTool(newWorkspace(t, root)), `{"pattern":"match","maxCount":1000}`)
	if err != nil {
		t.Fatal(err)
	}
	out := raw.(SearchContentOutput)
	if !out.Truncated || out.Matches == 0 || out.Matches >= 1000 || len(out.Content) > maxOutputBytes {
		t.Fatalf("truncated = %v, matches = %d, content bytes = %d", out.Truncated, out.Matches, len(out.Content))
	}
	if !strings.Contains(out.Content, "wide.txt:1: match "+strings.Repeat("w", 494)+"… [line cut at 500 of 706 characters]") {
		t.Errorf("lines are not cut at 500 characters:\n%s", clip(out.Content))
	}
	if !strings.Contains(model, "[Stopped at 200 KB of output; there may be more matches. Narrow pattern or path, or lower contextLines.]") {
		t.Errorf("model text lacks the budget note:\n%s", clip(model))
	}
}

func TestSearchContentErrors(t *testing.T) {
	ws, outside := searchTree(t)
	tool := SearchContentTool(ws)
	tests := []struct{ input, want string }{
		{`{"pattern":"foo("}`, "invalid regular expression \"foo(\": error parsing regexp: missing closing ): `foo(` (the syntax is Go's RE2: no lookaround, no backreferences)"},
		{`{"pattern":"(?=x)"}`, `invalid regular expression "(?=x)": error parsing regexp: invalid or unsupported Perl syntax`},
		{`{"pattern":"x","path":"img.png"}`, `path "img.png" is a binary file; search_content searches text files only`},
		{`{"pattern":"x","path":"../"}`, `path "../" leaves the workspace root ` + ws.Root()},
		{`{"pattern":"x","path":"` + outside + `"}`, "is outside the workspace root " + ws.Root()},
		{`{"pattern":"x","path":"secret.go"}`, "outside the workspace root " + ws.Root()},
		{`{"pattern":"x","path":".git/hooks"}`, "inside a .git directory"},
		{`{"pattern":"x","path":"missing"}`, `path "missing" does not exist in the workspace`},
	}
	for _, tt := range tests {
		_, _, err := runTool(context.Background(), t, tool, tt.input)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.input, err, tt.want)
		}
	}
}

func TestSearchContentCancelled(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = "needle\n"
	}
	ws := newWorkspace(t, makeTree(t, files))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, path := range []string{".", "f01.txt"} {
		_, _, err := runTool(ctx, t, SearchContentTool(ws), `{"pattern":"needle","path":"`+path+`"}`)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("path %s: err = %v, want context.Canceled", path, err)
		}
	}
}
