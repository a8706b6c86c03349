package toolkit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/storage"
)

// journalFixture is a workspace whose file tools journal into a real
// database, and the thread they write for.
type journalFixture struct {
	root  string
	db    *storage.DB
	tools map[string]*agentcore.Tool
	tc    func(call string) *agentcore.ToolContext
	calls []string
}

func newJournalFixture(t *testing.T) *journalFixture {
	t.Helper()
	root := t.TempDir()
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	th, err := db.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	wss := &Workspaces{Default: ws}
	f := &journalFixture{root: root, db: db, tools: map[string]*agentcore.Tool{}}
	for name, tool := range Edit(ws) {
		f.tools[name] = Journaled(wss, db, nil, tool)
	}
	f.tc = func(call string) *agentcore.ToolContext {
		return &agentcore.ToolContext{ToolCallID: call, ThreadID: th.ID, ToolName: "x"}
	}
	return f
}

func (f *journalFixture) run(t *testing.T, tool, call, input string) {
	t.Helper()
	if _, err := f.tools[tool].Execute(t.Context(), []byte(input), f.tc(call)); err != nil {
		t.Fatalf("%s %s: %v", tool, input, err)
	}
	f.calls = append(f.calls, call)
}

func (f *journalFixture) plan(t *testing.T) []RewindFile {
	t.Helper()
	writes, err := f.db.FileWrites(t.Context(), f.tc("").ThreadID, f.calls)
	if err != nil {
		t.Fatal(err)
	}
	return PlanRewind(writes)
}

func (f *journalFixture) put(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.root, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *journalFixture) read(t *testing.T, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// A branch's writes, creations and deletions are put back as they were
// before it; a file changed outside Parley since is overwritten only when
// the user says so, and named until then.
func TestRewindPutsFilesBack(t *testing.T) {
	f := newJournalFixture(t)
	f.put(t, "b.txt", "original b\n")
	f.put(t, "c.txt", "original c\n")

	f.run(t, "write_file", "w1", `{"path":"a.txt","content":"new a\n"}`)
	f.run(t, "edit_file", "e1", `{"path":"a.txt","old_str":"new a","new_str":"newer a"}`)
	f.run(t, "write_file", "w2", `{"path":"b.txt","content":"b by the agent\n"}`)
	f.run(t, "delete_file", "d1", `{"path":"c.txt"}`)
	f.run(t, "write_file", "w3", `{"path":"sub/d.txt","content":"d\n"}`)

	plan := f.plan(t)
	var got []string
	for _, rf := range plan {
		got = append(got, rf.Path)
		if rf.Blocked || rf.Changed {
			t.Fatalf("%s: %s", rf.Path, rf.Why)
		}
	}
	if strings.Join(got, ",") != "a.txt,b.txt,c.txt,sub/d.txt" || !plan[0].Remove || plan[1].Remove {
		t.Fatalf("plan: %+v", plan)
	}

	// Changed outside Parley since: refused, named, nothing done.
	f.put(t, "b.txt", "the user's own edit\n")
	plan = f.plan(t)
	if !plan[1].Changed || plan[1].Why != "changed outside Parley since" {
		t.Fatalf("b.txt after an outside edit: %+v", plan[1])
	}
	if _, err := ApplyRewind(plan, false); !errors.Is(err, ErrRewindChanged) || !strings.Contains(err.Error(), "b.txt (changed outside Parley since)") {
		t.Fatalf("rewind over an outside edit: %v", err)
	}
	if s, ok := f.read(t, "a.txt"); !ok || s != "newer a\n" {
		t.Fatalf("a refused rewind changed a.txt: %q %v", s, ok)
	}

	n, err := ApplyRewind(plan, true)
	if err != nil || n != 4 {
		t.Fatalf("rewind: %d files, %v", n, err)
	}
	for name, want := range map[string]string{"b.txt": "original b\n", "c.txt": "original c\n"} {
		if s, ok := f.read(t, name); !ok || s != want {
			t.Fatalf("%s after the rewind: %q", name, s)
		}
	}
	for _, name := range []string{"a.txt", "sub/d.txt"} {
		if _, ok := f.read(t, name); ok {
			t.Fatalf("%s was created by the branch and is still there", name)
		}
	}
}

// What the journal cannot keep is named, not pretended: a file over the
// limit, a folder deleted whole, a link. A link planted since cannot lead
// a restore out of the workspace.
func TestRewindLimitsAndHostilePaths(t *testing.T) {
	f := newJournalFixture(t)
	f.put(t, "big.bin", string(bytes.Repeat([]byte("x"), JournalFileLimit+1)))
	f.run(t, "write_file", "w1", `{"path":"big.bin","content":"small now"}`)
	if err := os.MkdirAll(filepath.Join(f.root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.put(t, "dir/x.txt", "x")
	f.run(t, "delete_file", "d1", `{"path":"dir","recursive":true}`)
	f.put(t, "safe.txt", "before")
	f.run(t, "write_file", "w2", `{"path":"safe.txt","content":"after"}`)

	plan := f.plan(t)
	if len(plan) != 3 || !plan[0].Blocked || !strings.Contains(plan[0].Why, "too big to keep") || !plan[1].Blocked || !strings.Contains(plan[1].Why, "a folder") {
		t.Fatalf("plan: %+v", plan)
	}

	// safe.txt is swapped for a link to a file outside the workspace.
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.root, "safe.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "safe.txt")); err != nil {
		t.Fatal(err)
	}
	plan = f.plan(t)
	if !plan[2].Blocked {
		t.Fatalf("a link out of the workspace is not blocked: %+v", plan[2])
	}
	if _, err := ApplyRewind(plan, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "after" {
		t.Fatalf("the rewind wrote outside the workspace: %q", b)
	}
	if s, _ := f.read(t, "big.bin"); s != "small now" {
		t.Fatalf("a blocked file was touched: %q", s)
	}
}
