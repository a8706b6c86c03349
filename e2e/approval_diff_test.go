package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore/scripted"
)

// writeArgs is write_file's arguments as the model sends them.
func writeArgs(t *testing.T, path, content string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"path": path, "content": content})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A write_file over an existing file is not approved blind: before Allow,
// the approval shows the diff against the file on disk (removed and added
// lines), and "Show all" shows every line of it.
func TestApprovalShowsWriteDiff(t *testing.T) {
	p := startParley(t)
	var before, after strings.Builder
	for i := 1; i <= 90; i++ {
		fmt.Fprintf(&before, "line %d of the old file\n", i)
		switch {
		case i == 3:
			after.WriteString("line 3 <b>rewritten</b>\n")
		case i == 85:
			after.WriteString("line 85 rewritten\n")
		case i%20 == 0:
		default:
			fmt.Fprintf(&after, "line %d of the old file\n", i)
		}
	}
	if err := os.MkdirAll(filepath.Join(p.dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "src/notes.txt"), []byte(before.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "wd1", Name: "write_file", Args: writeArgs(t, "src/notes.txt", after.String())}}, ChunkSize: 64},
		scripted.Reply{Text: "Rewrote the notes."},
	)
	sendMsg(t, pg, "rewrite the notes")
	card := p.card("wd1")
	waitJS(t, pg, `() => `+card+`?.querySelector('[data-approval]') != null`)

	lines := func(kind string, visible bool) []string {
		var out []string
		js := `(kind, vis) => [...` + card + `.querySelectorAll('[data-diff-line][data-kind=' + kind + ']')].filter(e => !vis || e.checkVisibility()).map(e => e.querySelector('.dt').textContent)`
		if err := json.Unmarshal([]byte(pg.MustEval(js, kind, visible).JSON("", "")), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if del, add := lines("del", true), lines("add", true); !contains(del, "line 3 of the old file") || !contains(add, "line 3 <b>rewritten</b>") {
		t.Fatalf("before Allow the approval shows removed %q, added %q", del, add)
	}
	if evalString(pg, `() => `+card+`.querySelector('.dt b') === null ? 'escaped' : 'markup'`) != "escaped" {
		t.Fatal("a diff line's text reached the page as markup")
	}
	if contains(lines("add", true), "line 85 rewritten") {
		t.Fatal("the whole diff shows before it is expanded")
	}
	summary := evalString(pg, `() => `+card+`.querySelector('[data-diff-more] summary').innerText`)
	if !strings.HasPrefix(summary, "Show all") {
		t.Fatalf("expand control reads %q", summary)
	}
	pg.MustScreenshot(artifact("approval-diff.png"))
	pg.MustElement(p.sel("wd1") + ` [data-diff-more] summary`).MustClick()
	waitJS(t, pg, `() => `+card+`.querySelector('[data-diff-more]').open`)
	del, add := lines("del", true), lines("add", true)
	wantDel := []string{"line 3 of the old file", "line 20 of the old file", "line 40 of the old file", "line 60 of the old file", "line 80 of the old file", "line 85 of the old file"}
	if strings.Join(del, "|") != strings.Join(wantDel, "|") || strings.Join(add, "|") != "line 3 <b>rewritten</b>|line 85 rewritten" {
		t.Fatalf("expanded: removed %q, added %q", del, add)
	}
	if all, shown := len(lines("ctx", false)), len(lines("ctx", true)); all != shown {
		t.Fatalf("expanded: %d of %d context lines visible", shown, all)
	}
	pg.MustScreenshot(artifact("approval-diff-expanded.png"))

	pg.MustElement(p.sel("wd1") + ` .approve-once`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Rewrote the notes.')`)
	got, err := os.ReadFile(filepath.Join(p.dir, "src/notes.txt"))
	if err != nil || string(got) != after.String() {
		t.Fatalf("file after Allow: %v %q", err, got)
	}
}

// An approval never reads outside the workspace: a write through a
// symbolic link out of it, or up with ../, shows that it will be refused
// and nothing of the file there.
func TestApprovalDiffStaysInWorkspace(t *testing.T) {
	p := startParley(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET VALUE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(p.dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(p.dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	pg := p.page("/t/" + id)
	for i, path := range []string{"link.txt", rel, "../../etc/passwd"} {
		call := fmt.Sprintf("out%d", i)
		p.Model.Push(
			scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: call, Name: "write_file", Args: writeArgs(t, path, "replaced\n")}}},
			scripted.Reply{Text: "Denied " + call + "."},
		)
		sendMsg(t, pg, "write "+call)
		waitJS(t, pg, `() => `+p.card(call)+`?.querySelector('[data-approval]') != null`)
		text := evalString(pg, `() => `+p.card(call)+`.innerText`)
		if strings.Contains(text, "SECRET") || strings.Contains(text, "root:") || !strings.Contains(text, "will be refused") {
			t.Fatalf("%s: approval shows %q", path, text)
		}
		pg.MustElement(p.sel(call) + ` .deny`).MustClick()
		waitJS(t, pg, `(c) => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Denied ' + c + '.')`, call)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
