package toolkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// numbered renders lines from..to of "line N" files the way view does.
func numbered(from, to int) string {
	var b []string
	for i := from; i <= to; i++ {
		b = append(b, fmt.Sprintf("%6d\tline %d", i, i))
	}
	return strings.Join(b, "\n")
}

func linesText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestView(t *testing.T) {
	long := strings.Repeat("x", 2500)
	wide := strings.Repeat("y", 1000)
	var wideFile strings.Builder
	for range 2000 {
		wideFile.WriteString(wide + "\n")
	}
	root := makeTree(t, map[string]string{
		"three.txt":      "one\ntwo\nthree\n",
		"noeol.txt":      "one\ntwo",
		"crlf.txt":       "a\r\nb\r\n",
		"empty.txt":      "",
		"big.txt":        linesText(2500),
		"long.txt":       "short\n" + long + "\n",
		"wide.txt":       wideFile.String(),
		"bin.dat":        "PNG\x00\x01\x02",
		"dir/b.txt":      "b",
		"dir/a.txt":      "a",
		"dir/sub/c.txt":  "c",
		"dir/.git/HEAD":  "ref",
		"dir/.hidden":    "h",
		"emptydir/":      "",
		"unicode.txt":    strings.Repeat("é", 2100) + "\n",
		"nested/x/y.txt": "y",
	})
	symlink(t, "sub", filepath.Join(root, "dir", "link"))
	tool := ViewTool(newWorkspace(t, root))

	tests := []struct {
		name      string
		input     string
		content   string // exact, when set
		contains  []string
		truncated bool
		model     string // exact model text, when set
		modelHas  []string
	}{
		{name: "happy path", input: `{"path":"three.txt"}`,
			content: "     1\tone\n     2\ttwo\n     3\tthree", model: "     1\tone\n     2\ttwo\n     3\tthree"},
		{name: "no final newline", input: `{"path":"noeol.txt"}`, content: "     1\tone\n     2\ttwo"},
		{name: "crlf", input: `{"path":"crlf.txt"}`, content: "     1\ta\n     2\tb"},
		{name: "offset", input: `{"path":"three.txt","offset":2}`, content: "     2\ttwo\n     3\tthree"},
		{name: "offset and limit", input: `{"path":"three.txt","offset":2,"limit":1}`,
			content: "     2\ttwo", truncated: true,
			model: "     2\ttwo\n\n[Showing lines 2-2 of 3; to read on, view with offset=3.]"},
		{name: "default limit", input: `{"path":"big.txt"}`,
			content: numbered(1, 2000), truncated: true,
			modelHas: []string{"[Showing lines 1-2000 of 2500; to read on, view with offset=2001.]"}},
		{name: "read on", input: `{"path":"big.txt","offset":2001}`, content: numbered(2001, 2500)},
		{name: "long line cut", input: `{"path":"long.txt"}`, truncated: true,
			contains: []string{"     2\t" + strings.Repeat("x", 2000) + "… [line cut at 2000 of 2500 characters]"},
			modelHas: []string{"[Lines longer than 2000 characters were cut.]"}},
		{name: "cut counts characters, not bytes", input: `{"path":"unicode.txt"}`, truncated: true,
			contains: []string{strings.Repeat("é", 2000) + "… [line cut at 2000 of 2100 characters]"}},
		{name: "output budget", input: `{"path":"wide.txt"}`, truncated: true,
			modelHas: []string{"; to read on, view with offset="}},
		{name: "empty file", input: `{"path":"empty.txt"}`, content: "", model: "[The file is empty.]"},
		{name: "directory", input: `{"path":"dir"}`,
			content: ".hidden\na.txt\nb.txt\nlink/\nsub/",
			model:   "dir/ (5 entries):\n.hidden\na.txt\nb.txt\nlink/\nsub/"},
		{name: "directory paged", input: `{"path":"dir","offset":2,"limit":2}`, content: "a.txt\nb.txt", truncated: true,
			modelHas: []string{"[Showing entries 2-3 of 5; to read on, view with offset=4.]"}},
		{name: "root", input: `{"path":"."}`, modelHas: []string{"./ (", "big.txt\n", "dir/\n", "nested/\n"}},
		{name: "empty directory", input: `{"path":"emptydir"}`, model: "[The directory is empty.]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, model, err := runTool(context.Background(), t, tool, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			out := raw.(ViewOutput)
			if tt.content != "" && out.Content != tt.content {
				t.Errorf("content = %q, want %q", clip(out.Content), clip(tt.content))
			}
			for _, c := range tt.contains {
				if !strings.Contains(out.Content, c) {
					t.Errorf("content lacks %q", clip(c))
				}
			}
			if out.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v (note %q)", out.Truncated, tt.truncated, out.Note)
			}
			if tt.model != "" && model != tt.model {
				t.Errorf("model text = %q, want %q", clip(model), clip(tt.model))
			}
			for _, m := range tt.modelHas {
				if !strings.Contains(model, m) {
					t.Errorf("model text lacks %q:\n%s", m, clip(model))
				}
			}
			if len(model) > maxOutputBytes+1000 {
				t.Errorf("model text is %d bytes, over the budget", len(model))
			}
		})
	}
}

func TestViewOutputFields(t *testing.T) {
	root := makeTree(t, map[string]string{"big.txt": linesText(10)})
	raw, _, err := runTool(context.Background(), t, ViewTool(newWorkspace(t, root)), `{"path":"big.txt","offset":3,"limit":4}`)
	if err != nil {
		t.Fatal(err)
	}
	out := raw.(ViewOutput)
	want := ViewOutput{Path: "big.txt", Kind: "file", Content: numbered(3, 6), StartLine: 3, EndLine: 6, TotalLines: 10, Truncated: true,
		Note: "Showing lines 3-6 of 10; to read on, view with offset=7."}
	if out != want {
		t.Fatalf("got %+v\nwant %+v", out, want)
	}
}

func TestViewLargeFile(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("z", 99) + "\n"
	data := strings.Repeat(line, maxFileBytes/len(line)+1000)
	if err := os.WriteFile(filepath.Join(root, "huge.txt"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := ViewTool(newWorkspace(t, root))
	raw, model, err := runTool(context.Background(), t, tool, `{"path":"huge.txt","offset":100000,"limit":5}`)
	if err != nil {
		t.Fatal(err)
	}
	out := raw.(ViewOutput)
	wantTotal := maxFileBytes / len(line)
	if out.TotalLines != wantTotal || !out.Truncated {
		t.Fatalf("totalLines = %d (want %d), truncated = %v", out.TotalLines, wantTotal, out.Truncated)
	}
	if !strings.Contains(model, fmt.Sprintf("The file is %d bytes; only its first 10 MB (%d lines) can be viewed.", len(data), wantTotal)) {
		t.Fatalf("model text lacks the size note:\n%s", clip(model))
	}
}

func TestViewErrors(t *testing.T) {
	outside := makeTree(t, map[string]string{"secret.txt": "s"})
	root := makeTree(t, map[string]string{"three.txt": "1\n2\n3\n", "bin.dat": "ab\x00cd", ".git/config": "x", "dir/a": "a"})
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "out.txt"))
	ws := newWorkspace(t, root)
	tool := ViewTool(ws)
	tests := []struct{ input, want string }{
		{`{"path":"bin.dat"}`, `path "bin.dat" is a binary file (5 bytes); view shows text files only`},
		{`{"path":"three.txt","offset":4}`, `offset 4 is past the end of "three.txt", which has 3 lines`},
		{`{"path":"dir","offset":9}`, `offset 9 is past the end of directory "dir", which has 1 entries`},
		{`{"path":"nope.txt"}`, `path "nope.txt" does not exist in the workspace (root ` + ws.Root() + `); use find_files to look for it`},
		{`{"path":"../x"}`, `path "../x" leaves the workspace root ` + ws.Root()},
		{`{"path":"` + filepath.Join(outside, "secret.txt") + `"}`, "is outside the workspace root " + ws.Root()},
		{`{"path":"out.txt"}`, "outside the workspace root " + ws.Root()},
		{`{"path":".git/config"}`, "inside a .git directory"},
	}
	for _, tt := range tests {
		_, _, err := runTool(context.Background(), t, tool, tt.input)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.input, err, tt.want)
		}
	}
}

func TestViewCancelled(t *testing.T) {
	root := makeTree(t, map[string]string{"a.txt": "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := runTool(ctx, t, ViewTool(newWorkspace(t, root)), `{"path":"a.txt"}`); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// clip keeps failure messages readable.
func clip(s string) string {
	if len(s) > 300 {
		return s[:150] + fmt.Sprintf("…(%d bytes)…", len(s)) + s[len(s)-150:]
	}
	return s
}
