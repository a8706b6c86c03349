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

func TestWriteFilePlanMode(t *testing.T) {
	root := t.TempDir()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tool := WriteFileTool(ws, PlanFilesOnly)
	run := func(path, content string) (any, error) {
		in, _ := json.Marshal(WriteInput{Path: path, Content: content})
		return tool.Execute(context.Background(), in, &agentcore.ToolContext{})
	}
	out, err := run(".parley/plans/x.md", "# X\n")
	if err != nil || out.(WriteOutput) != (WriteOutput{Path: ".parley/plans/x.md", Bytes: 4, Created: true, After: "# X\n"}) {
		t.Fatalf("plan write: %+v %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".parley/plans/x.md")); string(b) != "# X\n" {
		t.Fatalf("file holds %q", b)
	}
	if out, err := run(".parley/plans/x.md", "# X2\n"); err != nil || out.(WriteOutput).Created {
		t.Fatalf("overwrite: %+v %v", out, err)
	}
	for _, bad := range []string{"main.go", ".parley/plans/x.txt", ".parley/plans/a/b.md", "../x.md", "/etc/passwd", ".parley/plans/../../x.md"} {
		if _, err := run(bad, "x"); err == nil {
			t.Errorf("%s: written in plan mode", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "main.go")); !os.IsNotExist(err) {
		t.Error("a refused write left a file")
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".parley/plans"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".parley-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestWriteFileDiff(t *testing.T) {
	root := makeTree(t, map[string]string{"a.txt": "old\n"})
	ws := newWorkspace(t, root)
	tool := WriteFileTool(ws, nil)
	out, model, err := runTool(t.Context(), t, tool, `{"path":"a.txt","content":"new\n"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (WriteOutput{Path: "a.txt", Bytes: 4, Before: "old\n", After: "new\n"}); out.(WriteOutput) != want {
		t.Errorf("replace: %+v, want %+v", out, want)
	}
	if model != "Wrote a.txt (4 bytes, replaced)" {
		t.Errorf("model sees %q", model)
	}
	out, model, err = runTool(t.Context(), t, tool, `{"path":"sub/b.txt","content":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (WriteOutput{Path: "sub/b.txt", Bytes: 2, Created: true, After: "hi"}); out.(WriteOutput) != want {
		t.Errorf("create: %+v, want %+v", out, want)
	}
	if model != "Wrote sub/b.txt (2 bytes, created)" {
		t.Errorf("model sees %q", model)
	}

	big := strings.Repeat("x", maxDiffBytes+10)
	in, _ := json.Marshal(WriteInput{Path: "a.txt", Content: big})
	out, _, err = runTool(t.Context(), t, tool, string(in))
	if err != nil {
		t.Fatal(err)
	}
	if o := out.(WriteOutput); !o.AfterTruncated || o.BeforeTruncated || len(o.After) != maxDiffBytes || o.Before != "new\n" || o.Bytes != len(big) {
		t.Errorf("big write: after %d bytes (cut %v), before %q (cut %v), bytes %d", len(o.After), o.AfterTruncated, o.Before, o.BeforeTruncated, o.Bytes)
	}
	out, _, err = runTool(t.Context(), t, tool, `{"path":"a.txt","content":""}`)
	if err != nil {
		t.Fatal(err)
	}
	if o := out.(WriteOutput); !o.BeforeTruncated || len(o.Before) != maxDiffBytes || o.After != "" {
		t.Errorf("write over a big file: before %d bytes (cut %v), after %q", len(o.Before), o.BeforeTruncated, o.After)
	}
	if _, _, err := runTool(t.Context(), t, tool, `{"path":"sub","content":"x"}`); err == nil || err.Error() != "sub is a directory, not a file" {
		t.Errorf("write over a directory: %v", err)
	}
	assertNoTemp(t, root)
}
