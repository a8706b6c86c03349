//go:build unix

package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/agentcore"
)

// promptly is how long a tool may take to refuse a hostile file: it opens
// nothing that can block, so far less than this.
const promptly = 2 * time.Second

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo %s: %v", p, err)
	}
}

// callPromptly runs the tool and fails the test if it has not returned
// within promptly: it would have hung on the FIFO for ever.
func callPromptly(t *testing.T, tool *agentcore.Tool, input string, tc *agentcore.ToolContext) (any, error) {
	t.Helper()
	if tc == nil {
		tc = &agentcore.ToolContext{}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := tool.Execute(ctx, json.RawMessage(input), tc)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(promptly):
		t.Fatalf("%s %s: no answer after %v", tool.ID, input, promptly)
		return nil, nil
	}
}

// TestHostileFiles: a FIFO, a link to /dev/stdin and a link out of the
// workspace, as the file a tool is asked for or as the .gitignore every
// walk reads: each tool answers at once with an error naming the problem.
func TestHostileFiles(t *testing.T) {
	outside := makeTree(t, map[string]string{"secret.txt": "secret\n", "plans/p.md": "# Elsewhere\n\nsteps from outside\n"})
	root := makeTree(t, map[string]string{"a.txt": "hello\n", "sub/b.txt": "hello\n"})
	mkfifo(t, filepath.Join(root, "pipe"))
	mkfifo(t, filepath.Join(root, ".parley/plans/fifo.md"))
	symlink(t, "/dev/stdin", filepath.Join(root, "stdin"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "out.txt"))
	ws := newWorkspace(t, root)
	tools := ReadOnly(ws)
	for name, tool := range Edit(ws) {
		tools[name] = tool
	}
	tools["submit_plan"] = SubmitPlanTool(root)

	const notRegular, outsideRoot = "is not a regular file (a named pipe)", "outside the workspace root"
	for _, tt := range []struct{ tool, input, want string }{
		{"view", `{"path":"pipe"}`, notRegular},
		{"view", `{"path":"stdin"}`, outsideRoot},
		{"view", `{"path":"out.txt"}`, outsideRoot},
		{"search_content", `{"pattern":"x","path":"pipe"}`, notRegular},
		{"search_content", `{"pattern":"x","path":"stdin"}`, outsideRoot},
		{"search_content", `{"pattern":"x","path":"out.txt"}`, outsideRoot},
		{"find_files", `{"path":"pipe"}`, "not a directory"},
		{"find_files", `{"path":"stdin"}`, outsideRoot},
		{"edit_file", `{"path":"pipe","old_str":"a","new_str":"b"}`, notRegular},
		{"edit_file", `{"path":"stdin","old_str":"a","new_str":"b"}`, outsideRoot},
		{"edit_file", `{"path":"out.txt","old_str":"secret","new_str":"b"}`, outsideRoot},
		{"write_file", `{"path":"pipe","content":"x"}`, notRegular},
		{"write_file", `{"path":"stdin","content":"x"}`, outsideRoot},
		{"write_file", `{"path":"out.txt","content":"x"}`, outsideRoot},
		{"delete_file", `{"path":"stdin"}`, outsideRoot},
		{"delete_file", `{"path":"out.txt"}`, outsideRoot},
		{"mkdir", `{"path":"pipe"}`, "not a directory"},
		{"mkdir", `{"path":"stdin"}`, outsideRoot},
		{"execute_command", `{"command":"true","cwd":"pipe"}`, "not a directory"},
		{"execute_command", `{"command":"true","cwd":"stdin"}`, outsideRoot},
	} {
		_, err := callPromptly(t, tools[tt.tool], tt.input, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: %v, want an error containing %q", tt.tool, tt.input, err, tt.want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(data) != "secret\n" {
		t.Errorf("the file outside was changed: %q %v", data, err)
	}

	// A walk passes the FIFO and the links by: it lists them, opens none.
	out, err := callPromptly(t, tools["search_content"], `{"pattern":"hello|secret"}`, nil)
	if err != nil || out.(SearchContentOutput).Matches != 2 || strings.Contains(out.(SearchContentOutput).Content, "secret") {
		t.Errorf("search over the tree: %+v %v, want the 2 hellos inside", out, err)
	}
	if _, err := callPromptly(t, tools["find_files"], `{}`, nil); err != nil {
		t.Errorf("find_files over the tree: %v", err)
	}

	// submit_plan: a FIFO plan is an error, not a hang.
	out, err = callPromptly(t, tools["submit_plan"], `{"path":".parley/plans/fifo.md"}`, &agentcore.ToolContext{Suspendable: true})
	if r, ok := out.(Result); err != nil || !ok || !r.IsError || !strings.Contains(r.Content, "Failed to submit plan: ") || !strings.Contains(r.Content, notRegular) {
		t.Errorf("submit_plan of a FIFO: %+v %v", out, err)
	}

	// delete_file removes a FIFO without opening it.
	if _, err := callPromptly(t, tools["delete_file"], `{"path":"pipe"}`, nil); err != nil {
		t.Errorf("delete the FIFO: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "pipe")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the FIFO is still there: %v", err)
	}
}

// TestHostileGitignore: a .gitignore that is a FIFO, a link to /dev/stdin
// or a link out of the workspace is not read; the walks that need it say
// so at once.
func TestHostileGitignore(t *testing.T) {
	outside := makeTree(t, map[string]string{"ignore": "*.txt\n"})
	for name, make := range map[string]func(p string){
		"fifo":        func(p string) { mkfifo(t, p) },
		"/dev/stdin":  func(p string) { symlink(t, "/dev/stdin", p) },
		"link out":    func(p string) { symlink(t, filepath.Join(outside, "ignore"), p) },
		"a directory": func(p string) { os.Mkdir(p, 0o755) },
	} {
		root := makeTree(t, map[string]string{"a.txt": "hello\n"})
		make(filepath.Join(root, ".gitignore"))
		ws := newWorkspace(t, root)
		want := "is not a regular file"
		if strings.HasPrefix(name, "/") || name == "link out" {
			want = "outside the workspace root"
		}
		for tool, input := range map[string]string{"find_files": `{}`, "search_content": `{"pattern":"hello"}`} {
			_, err := callPromptly(t, ReadOnly(ws)[tool], input, nil)
			if err == nil || !strings.Contains(err.Error(), ".gitignore") || !strings.Contains(err.Error(), want) {
				t.Errorf(".gitignore %s: %s: %v, want an error about the .gitignore containing %q", name, tool, err, want)
			}
		}
	}
	// A .gitignore linked to one inside the workspace is read.
	root := makeTree(t, map[string]string{"a.txt": "a", "b.go": "b", "conf/ignore": "*.txt\n"})
	symlink(t, "conf/ignore", filepath.Join(root, ".gitignore"))
	out, err := callPromptly(t, FindFilesTool(newWorkspace(t, root)), `{"pattern":"*.{go,txt}"}`, nil)
	if err != nil || strings.Join(out.(FindFilesOutput).Files, ",") != "b.go" {
		t.Errorf("a .gitignore linked inside: %+v %v", out, err)
	}
}

// TestSubmitPlanConfined: the plans-folder rule applies to the resolved
// path, so a .parley/plans linked out of the workspace shows (and on
// approval sends the model) nothing from elsewhere.
func TestSubmitPlanConfined(t *testing.T) {
	outside := makeTree(t, map[string]string{"plans/p.md": "# Elsewhere\n\nsteps from outside\n", "x.md": "# X\n"})
	root := makeTree(t, map[string]string{"docs/plans/d.md": "# Docs\n", "notes.md": "# Notes\n"})
	if err := os.MkdirAll(filepath.Join(root, ".parley"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(outside, "plans"), filepath.Join(root, ".parley/plans"))
	tool := SubmitPlanTool(root)
	for _, path := range []string{".parley/plans/p.md", filepath.Join(root, ".parley/plans/p.md"), filepath.Join(outside, "x.md")} {
		out, err := callPromptly(t, tool, `{"path":`+strconv.Quote(path)+`}`, &agentcore.ToolContext{Suspendable: true})
		r, ok := out.(Result)
		if err != nil || !ok || !r.IsError || !strings.HasPrefix(r.Content, "Failed to submit plan: ") || !strings.Contains(r.Content, "outside the workspace root") {
			t.Errorf("%s: %+v %v, want an error result: the plan is outside the workspace", path, out, err)
		}
	}

	// A link inside the workspace is judged where it leads.
	root = makeTree(t, map[string]string{"docs/plans/d.md": "# Docs\n", "notes.md": "# Notes\n", ".parley/plans/real.md": "# Real\n\nstep\n"})
	symlink(t, "../../notes.md", filepath.Join(root, ".parley/plans/link.md"))
	tool = SubmitPlanTool(root)
	for path, want := range map[string]PlanPayload{
		".parley/plans/link.md": {Path: ".parley/plans/link.md"}, // leads out of the plans folder: shown as a path only
		".parley/plans/real.md": {Path: ".parley/plans/real.md", Title: "Real", Plan: "step"},
	} {
		_, err := callPromptly(t, tool, `{"path":`+strconv.Quote(path)+`}`, &agentcore.ToolContext{Suspendable: true})
		var s *agentcore.SuspendError
		if !errors.As(err, &s) || s.Payload.(PlanPayload) != want {
			t.Errorf("%s: suspended with %+v (%v), want %+v", path, s, err, want)
		}
	}
}

// TestReadRegularRefusesSwap: a file checked as regular and swapped for a
// FIFO before it is opened is refused at the open (O_NONBLOCK, then fstat),
// not waited on.
func TestReadRegularRefusesSwap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "swapped")
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() {
		f, _, err := openRegularNow(p)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("open of a FIFO: %v", err)
		}
	case <-time.After(promptly):
		t.Fatal("opening a FIFO blocked")
	}
}

// TestExecuteCommandCancelPromptly: a command blocked in sleep, even with
// a process that left the group and holds the output open, ends within
// 1 s of cancellation.
func TestExecuteCommandCancelPromptly(t *testing.T) {
	root := t.TempDir()
	ws := newWorkspace(t, root)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := executeCommand(ctx, ws, ExecInput{Command: "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & sleep 60"}, newChunks())
		errc <- err
	}()
	pidFile := filepath.Join(root, "escaped.pid")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if took := time.Since(start); took > time.Second {
			t.Errorf("returned %v after cancellation, want within 1 s", took)
		}
		if err == nil || !strings.Contains(err.Error(), "command cancelled") {
			t.Errorf("error %v, want the cancellation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the command")
	}
}
