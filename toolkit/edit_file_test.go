package toolkit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editJSON is edit_file's input as JSON.
func editJSON(path, old, new string, all bool) string {
	b, _ := json.Marshal(EditInput{Path: path, OldStr: old, NewStr: new, ReplaceAll: all})
	return string(b)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditFile(t *testing.T) {
	tests := []struct {
		name      string
		file      *string // nil: the file does not exist
		path      string
		old, new  string
		all       bool
		want      string // the file afterwards
		wantN     int
		wantModel string
	}{
		{name: "one", file: ptr("a\nfoo\nb\n"), old: "foo", new: "bar", want: "a\nbar\nb\n", wantN: 1, wantModel: "Edited f.txt: 1 replacement"},
		{name: "multi-line", file: ptr("a\nb\nc\n"), old: "a\nb\n", new: "x\n", want: "x\nc\n", wantN: 1, wantModel: "Edited f.txt: 1 replacement"},
		{name: "delete", file: ptr("keep drop keep"), old: " drop", new: "", want: "keep keep", wantN: 1, wantModel: "Edited f.txt: 1 replacement"},
		{name: "replace all", file: ptr("x-x-x"), old: "x", new: "yy", all: true, want: "yy-yy-yy", wantN: 3, wantModel: "Edited f.txt: 3 replacements"},
		{name: "replace all once", file: ptr("x-y"), old: "x", new: "z", all: true, want: "z-y", wantN: 1, wantModel: "Edited f.txt: 1 replacement"},
		{name: "crlf", file: ptr("a\r\nb\r\nc\r\n"), old: "a\nb\n", new: "a\nB\nb2\n", want: "a\r\nB\r\nb2\r\nc\r\n", wantN: 1, wantModel: "Edited f.txt: 1 replacement"},
		{name: "create", path: "new/dir/f.go", old: "", new: "package f\n", want: "package f\n", wantN: 1, wantModel: "Created new/dir/f.go"},
		{name: "fill empty", file: ptr(""), old: "", new: "hello", want: "hello", wantN: 1, wantModel: "Created f.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			ws := newWorkspace(t, root)
			path := tt.path
			if path == "" {
				path = "f.txt"
			}
			before := ""
			if tt.file != nil {
				before = *tt.file
				if err := os.WriteFile(filepath.Join(root, path), []byte(before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, model, err := runTool(t.Context(), t, EditFileTool(ws), editJSON(path, tt.old, tt.new, tt.all))
			if err != nil {
				t.Fatal(err)
			}
			got := out.(EditOutput)
			want := EditOutput{Path: path, Replacements: tt.wantN, Created: before == "", Before: before, After: tt.want}
			if got != want {
				t.Errorf("output = %+v\nwant %+v", got, want)
			}
			if model != tt.wantModel {
				t.Errorf("model sees %q, want %q", model, tt.wantModel)
			}
			if s := readFile(t, filepath.Join(root, path)); s != tt.want {
				t.Errorf("file holds %q, want %q", s, tt.want)
			}
			if fi, _ := os.Stat(filepath.Join(root, path)); tt.file != nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode became %v; an edit keeps it", fi.Mode().Perm())
			}
			assertNoTemp(t, root)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// assertNoTemp fails if a write left a temporary file anywhere in root.
func assertNoTemp(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".parley-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestEditFileThroughLink(t *testing.T) {
	root := makeTree(t, map[string]string{"real/f.txt": "old"})
	symlink(t, "real", filepath.Join(root, "link"))
	ws := newWorkspace(t, root)
	out, _, err := runTool(t.Context(), t, EditFileTool(ws), editJSON("link/f.txt", "old", "new", false))
	if err != nil {
		t.Fatal(err)
	}
	if out.(EditOutput).Path != "real/f.txt" || readFile(t, filepath.Join(root, "real/f.txt")) != "new" {
		t.Fatalf("edit through a link: %+v", out)
	}
	if fi, err := os.Lstat(filepath.Join(root, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
}

// TestEditFileErrors pins the errors the model gets: each says what is
// wrong and what to do, and the file is left as it was.
func TestEditFileErrors(t *testing.T) {
	var many strings.Builder
	for range 25 {
		many.WriteString("dup\n")
	}
	files := map[string]string{
		"f.txt":     "alpha\nbeta\ngamma\ndelta\n",
		"dup.txt":   "x = 1\ny = 2\nx = 1\nz\nx = 1\n",
		"many.txt":  many.String(),
		"go.go":     "func f() {\n\treturn 1\n}\n",
		"code.go":   "package main\n\nfunc main() {\n\ttotal := computeTotal(items)\n\tfmt.Println(total)\n}\n",
		"empty.txt": "",
		"bin.dat":   "a\x00b",
		"dir/x":     "x",
	}
	root := makeTree(t, files)
	ws := newWorkspace(t, root)
	tests := []struct {
		name, path, old, new string
		all                  bool
		want                 string // the whole error, or a part when wantPart
		wantPart             bool
	}{
		{name: "same", path: "f.txt", old: "beta", new: "beta",
			want: "old_str and new_str are the same, so the edit would change nothing in f.txt; put the replacement text in new_str"},
		{name: "missing file", path: "nope.txt", old: "x", new: "y", wantPart: true,
			want: `path "nope.txt" does not exist in the workspace (root ` + ws.Root() + `); to create it, call edit_file with an empty old_str and the content as new_str, or use find_files to look for the file you meant`},
		{name: "directory", path: "dir", old: "x", new: "y", want: "dir is a directory; edit_file edits files"},
		{name: "binary", path: "bin.dat", old: "a", new: "b", want: "bin.dat is a binary file; edit_file edits text files only"},
		{name: "empty old_str on content", path: "f.txt", old: "", new: "x",
			want: "old_str is empty, but f.txt already has content (23 bytes); an empty old_str only creates a file. Give the exact text to replace as old_str, or use write_file to replace the whole file"},
		{name: "ambiguous", path: "dup.txt", old: "x = 1", new: "x = 2",
			want: "old_str occurs 3 times in dup.txt (at lines 1, 3 and 5), so nothing was changed: it must occur exactly once. Include more of the surrounding lines in old_str to pick one occurrence, or set replace_all to replace all 3"},
		{name: "ambiguous many", path: "many.txt", old: "dup", new: "one", wantPart: true,
			want: "old_str occurs 25 times in many.txt (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 5 more)"},
		{name: "empty file", path: "empty.txt", old: "x", new: "y",
			want: "old_str was not found in empty.txt: the file is empty. To fill it, call edit_file with an empty old_str, or use write_file"},
		{name: "line numbers", path: "f.txt", old: "     2\tbeta\n     3\tgamma", new: "x",
			want: `old_str was not found in f.txt, so nothing was changed. old_str starts its lines with line numbers as view shows them (like "    12\t"); they are not part of the file, leave them out. Without them old_str matches at line 2.`},
		{name: "whitespace", path: "go.go", old: "func f() {\n    return 1\n}", new: "x",
			want: "old_str was not found in go.go, so nothing was changed. It matches lines 1-3 if whitespace is ignored, so spaces, tabs, indentation or line breaks differ. view the file and copy old_str from its current text exactly, with its whitespace and without line numbers."},
		{name: "whitespace one line", path: "go.go", old: "return  1", new: "x", wantPart: true,
			want: "It matches line 2 if whitespace is ignored"},
		{name: "differs after lines", path: "f.txt", old: "beta\ngamma\nepsilon\n", new: "x",
			want: `old_str was not found in f.txt, so nothing was changed. Its first 2 lines match at line 2, but the next differs: line 4 of the file is "delta", where old_str has "epsilon". view the file and copy old_str from its current text exactly, with its whitespace and without line numbers.`},
		{name: "past the end", path: "f.txt", old: "delta\nomega", new: "x", wantPart: true,
			want: `Its first line matches at line 4, but the file ends there, where old_str goes on with "omega".`},
		{name: "similar line", path: "code.go", old: "total := computeTotals(item)\nfmt.Println(total)", new: "x", wantPart: true,
			want: "The line most like old_str's first line is line 4: \"\\ttotal := computeTotal(items)\"."},
		{name: "nothing alike", path: "code.go", old: "SELECT * FROM users;", new: "x", wantPart: true,
			want: `No line of the file resembles old_str's first line "SELECT * FROM users;"; check that code.go is the file you meant.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runTool(t.Context(), t, EditFileTool(ws), editJSON(tt.path, tt.old, tt.new, tt.all))
			switch {
			case err == nil:
				t.Fatal("edit succeeded, want an error")
			case tt.wantPart && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error:\n%s\nwant it to contain:\n%s", err, tt.want)
			case !tt.wantPart && err.Error() != tt.want:
				t.Fatalf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
	for name, content := range files {
		if p := filepath.Join(root, name); readFile(t, p) != content {
			t.Errorf("%s changed by a failed edit", name)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "nope.txt")); !os.IsNotExist(err) {
		t.Error("a failed edit created nope.txt")
	}
	assertNoTemp(t, root)
}

func TestEditFileDiffCapped(t *testing.T) {
	big := strings.Repeat("é", maxDiffBytes/2) + "\nend\n" // 2-byte runes: the cut must not split one
	root := makeTree(t, map[string]string{"big.txt": big})
	ws := newWorkspace(t, root)
	out, model, err := runTool(t.Context(), t, EditFileTool(ws), editJSON("big.txt", "end", "fin", false))
	if err != nil {
		t.Fatal(err)
	}
	o := out.(EditOutput)
	if !o.BeforeTruncated || !o.AfterTruncated || len(o.Before) > maxDiffBytes || len(o.Before) < maxDiffBytes-4 {
		t.Fatalf("before %d bytes (cut %v), after cut %v; want both cut at %d", len(o.Before), o.BeforeTruncated, o.AfterTruncated, maxDiffBytes)
	}
	if !strings.HasPrefix(big, o.Before) || !strings.HasSuffix(o.Before, "é") {
		t.Fatal("before is not the file's start cut on a character")
	}
	if model != "Edited big.txt: 1 replacement" {
		t.Fatalf("model sees %q", model)
	}
	if !strings.HasSuffix(readFile(t, filepath.Join(root, "big.txt")), "\nfin\n") {
		t.Fatal("the file itself was not edited whole")
	}
}

func TestEditFileCancelled(t *testing.T) {
	root := makeTree(t, map[string]string{"f.txt": "a"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := runTool(ctx, t, EditFileTool(newWorkspace(t, root)), editJSON("f.txt", "a", "b", false)); err == nil {
		t.Fatal("a cancelled edit succeeded")
	}
	if readFile(t, filepath.Join(root, "f.txt")) != "a" {
		t.Fatal("a cancelled edit changed the file")
	}
}

func TestEditFileSimilarity(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		min  float64
		max  float64
	}{
		{"abc", "abc", 1, 1},
		{"computeTotal(items)", "computeTotals(item)", 0.8, 1},
		{"hello world", "SELECT 1", 0, 0.2},
		{"a", "b", 0, 0},
	} {
		if s := similarity(tt.a, tt.b); s < tt.min || s > tt.max {
			t.Errorf("similarity(%q, %q) = %.2f, want %.2f..%.2f", tt.a, tt.b, s, tt.min, tt.max)
		}
	}
}
