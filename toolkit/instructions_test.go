package toolkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AGENTS.md is read, then CLAUDE.md when there is none; a change is read
// on the next call; what is not text, too long or outside the workspace is
// named, not given to the model.
func TestProjectInstructions(t *testing.T) {
	root := t.TempDir()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() ProjectInstructions { return ReadProjectInstructions(t.Context(), ws) }

	if pi := read(); pi.File != "" || pi.SystemText() != "" {
		t.Fatalf("no file: %+v", pi)
	}
	write("CLAUDE.md", "Use tabs.")
	if pi := read(); pi.File != "CLAUDE.md" || pi.Text != "Use tabs." {
		t.Fatalf("CLAUDE.md alone: %+v", pi)
	}
	write("AGENTS.md", "Run go test before you finish. <script>alert(1)</script>")
	pi := read()
	if pi.File != "AGENTS.md" || !strings.Contains(pi.SystemText(), "Instructions from AGENTS.md at the root of the workspace") || !strings.HasSuffix(pi.SystemText(), "<script>alert(1)</script>") {
		t.Fatalf("AGENTS.md first: %+v", pi)
	}
	write("AGENTS.md", "Changed rules.")
	if pi := read(); pi.Text != "Changed rules." {
		t.Fatalf("after a change: %+v", pi)
	}

	// Too long: cut on a character, and the model is told.
	write("AGENTS.md", strings.Repeat("é", MaxInstructionBytes))
	pi = read()
	if !pi.Truncated || len(pi.Text) > MaxInstructionBytes || !strings.HasSuffix(pi.SystemText(), "it is longer than 32 KiB.]") || strings.ContainsRune(pi.Text, '\uFFFD') {
		t.Fatalf("a long file: truncated=%v, %d bytes", pi.Truncated, len(pi.Text))
	}
	for content, problem := range map[string]string{
		"bin\x00ary":        "it is not text",
		"bad \xff\xfe utf8": "it is not UTF-8 text",
	} {
		write("AGENTS.md", content)
		if pi := read(); pi.Problem != problem || pi.SystemText() != "" {
			t.Fatalf("%q: %+v", content, pi)
		}
	}
	// A link out of the workspace is not followed.
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("the secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "AGENTS.md"))
	if err := os.Symlink(outside, filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if pi := read(); pi.Problem == "" || strings.Contains(pi.Text, "secret") || !strings.Contains(pi.Problem, "outside the workspace") {
		t.Fatalf("a link out: %+v", pi)
	}
	// A folder of that name: named, not read.
	os.Remove(filepath.Join(root, "AGENTS.md"))
	if err := os.Mkdir(filepath.Join(root, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if pi := read(); pi.Problem == "" || pi.Text != "" {
		t.Fatalf("a folder: %+v", pi)
	}
	// Removed: CLAUDE.md again.
	os.Remove(filepath.Join(root, "AGENTS.md"))
	if pi := read(); pi.File != "CLAUDE.md" {
		t.Fatalf("after removing AGENTS.md: %+v", pi)
	}
}
