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
	if err != nil || out.(WriteOutput) != (WriteOutput{Path: ".parley/plans/x.md", Bytes: 4, Created: true}) {
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
