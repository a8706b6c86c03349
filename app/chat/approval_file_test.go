package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A write_file approval carries the file it replaces, read through the
// workspace's resolver: nothing outside the workspace is ever read.
func TestApprovalFileOnDisk(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	must(t, os.WriteFile(secret, []byte("SECRET\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o600))
	must(t, os.Symlink(secret, filepath.Join(root, "link.txt")))
	must(t, os.Symlink(outside, filepath.Join(root, "out")))
	must(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", approvalFileBytes+1)), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "bin.dat"), []byte("a\x00b"), 0o600))
	must(t, os.Mkdir(filepath.Join(root, "dir"), 0o700))

	for _, c := range []struct {
		path, text, unshown string
		exists              bool
	}{
		{path: "a.txt", exists: true, text: "one\ntwo\n"},
		{path: "new.txt"},
		{path: "big.txt", exists: true, unshown: "too big"},
		{path: "bin.dat", exists: true, unshown: "binary"},
		{path: "dir", exists: true, unshown: "not a regular file"},
		{path: "../../etc/passwd", unshown: "refused: "},
		{path: "/etc/passwd", unshown: "refused: "},
		{path: secret, unshown: "refused: "},
		{path: "link.txt", unshown: "refused: "},
		{path: "out/secret.txt", unshown: "refused: "},
		{path: ".git/config", unshown: "refused: "},
	} {
		in, _ := json.Marshal(map[string]string{"path": c.path, "content": "new\n"})
		f := fileOnDisk(root, in)
		if f == nil {
			t.Fatalf("%s: nil", c.path)
		}
		if f.Exists != c.exists || f.Text != c.text || !strings.HasPrefix(f.Unshown, c.unshown) || (c.unshown == "") != (f.Unshown == "") {
			t.Errorf("%s: %+v", c.path, *f)
		}
		if strings.Contains(f.Text, "SECRET") || strings.Contains(f.Text, "root:") {
			t.Errorf("%s: read outside the workspace", c.path)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
