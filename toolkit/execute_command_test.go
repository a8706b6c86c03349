//go:build unix

package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func execJSON(command, cwd string, timeout int) string {
	b, _ := json.Marshal(ExecInput{Command: command, Cwd: cwd, Timeout: timeout})
	return string(b)
}

// chunks records what a command streams, and when.
type chunks struct {
	mu    sync.Mutex
	got   []string
	first chan struct{} // closed at the first write
}

func newChunks() *chunks { return &chunks{first: make(chan struct{})} }

func (c *chunks) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		close(c.first)
	}
	c.got = append(c.got, string(p))
	return len(p), nil
}

func (c *chunks) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

func TestExecuteCommand(t *testing.T) {
	root := makeTree(t, map[string]string{"sub/f.txt": "f"})
	ws := newWorkspace(t, root)
	tool := ExecuteCommandTool(ws)
	for _, tt := range []struct {
		name, command, cwd string
		want               ExecOutput
		wantModel          string
	}{
		{name: "ok", command: "echo hi",
			want: ExecOutput{Command: "echo hi", Cwd: ".", Timeout: 30, Output: "hi\n"}, wantModel: "hi\nExit code: 0"},
		{name: "interleaved", command: "echo a; echo b >&2; echo c; exit 3",
			want:      ExecOutput{Command: "echo a; echo b >&2; echo c; exit 3", Cwd: ".", Timeout: 30, ExitCode: 3, Output: "a\nb\nc\n"},
			wantModel: "a\nb\nc\nExit code: 3"},
		{name: "false", command: "false", want: ExecOutput{Command: "false", Cwd: ".", Timeout: 30, ExitCode: 1}, wantModel: "(no output)\nExit code: 1"},
		{name: "killed by a signal", command: "kill -9 $$", want: ExecOutput{Command: "kill -9 $$", Cwd: ".", Timeout: 30, ExitCode: -1}, wantModel: "(no output)\nExit code: -1"},
		{name: "cwd", command: "cat f.txt", cwd: "sub", want: ExecOutput{Command: "cat f.txt", Cwd: "sub", Timeout: 30, Output: "f"}, wantModel: "f\nExit code: 0"},
		{name: "no input", command: "read x; echo \"read $?\"", want: ExecOutput{Command: "read x; echo \"read $?\"", Cwd: ".", Timeout: 30, Output: "read 1\n"}, wantModel: "read 1\nExit code: 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, model, err := runTool(t.Context(), t, tool, execJSON(tt.command, tt.cwd, 0))
			if err != nil {
				t.Fatal(err)
			}
			if out.(ExecOutput) != tt.want {
				t.Errorf("output %+v\nwant %+v", out, tt.want)
			}
			if model != tt.wantModel {
				t.Errorf("model sees %q, want %q", model, tt.wantModel)
			}
		})
	}
	out, _, err := runTool(t.Context(), t, tool, execJSON("pwd", "sub", 5))
	if err != nil || out.(ExecOutput).Output != filepath.Join(ws.Root(), "sub")+"\n" || out.(ExecOutput).Timeout != 5 {
		t.Errorf("pwd in sub: %+v %v", out, err)
	}

	for _, tt := range []struct {
		input, want string
	}{
		{execJSON("  ", "", 0), "command is empty; give the shell command to run"},
		{execJSON("true", "missing", 0), `path "missing" does not exist in the workspace (root ` + ws.Root() + `); use find_files to look for it`},
		{execJSON("true", "sub/f.txt", 0), `cwd "sub/f.txt" is a file, not a directory; give the directory to run the command in`},
	} {
		if _, _, err := runTool(t.Context(), t, tool, tt.input); err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.input, err, tt.want)
		}
	}
}

// TestExecuteCommandStreams checks that output reaches the live writer
// while the command still runs: whole lines at once, a partial line (a
// progress bar) after partialLineDelay.
func TestExecuteCommandStreams(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	for _, tt := range []struct {
		name, command, first string
	}{
		{"lines", "echo one; sleep 1; echo two; sleep 0.2; echo three", "one\n"},
		{"partial line", "printf 'working 10%%'; sleep 1; printf '\\rworking 100%%\\n'", "working 10%"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := newChunks()
			done := make(chan ExecOutput, 1)
			go func() {
				out, err := executeCommand(t.Context(), ws, ExecInput{Command: tt.command}, live)
				if err != nil {
					t.Error(err)
				}
				done <- out
			}()
			select {
			case <-live.first:
			case out := <-done:
				t.Fatalf("the command ended (%q) before anything streamed", out.Output)
			case <-time.After(10 * time.Second):
				t.Fatal("nothing streamed")
			}
			select {
			case <-done:
				t.Fatal("the first output arrived only as the command ended")
			default:
			}
			if got := live.all()[0]; got != tt.first {
				t.Errorf("first chunk %q, want %q", got, tt.first)
			}
			out := <-done
			if strings.Join(live.all(), "") != out.Output {
				t.Errorf("streamed %q, result holds %q", live.all(), out.Output)
			}
		})
	}
}

func TestExecuteCommandLiveKeepsRunes(t *testing.T) {
	live := newChunks()
	o := &liveOutput{live: live}
	o.Write([]byte{'a', 0xc3}) // "aé" cut inside the é
	time.Sleep(3 * partialLineDelay)
	o.Write([]byte{0xa9, '!'})
	o.close()
	got := live.all()
	if strings.Join(got, "") != "aé!" || got[0] != "a" {
		t.Fatalf("chunks %q: want \"a\" first, never half an é", got)
	}
}

// processGone waits for pid to end (or become a zombie nobody reaps).
func processGone(t *testing.T, pid int) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return true
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
				return true
			}
		}
	}
	return false
}

// childPID waits for the pid the command writes to child.pid.
func childPID(t *testing.T, root string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(root, "child.pid"))
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
	}
	t.Fatal("the command wrote no child.pid")
	return 0
}

func TestExecuteCommandTimeoutKillsGroup(t *testing.T) {
	root := t.TempDir()
	ws := newWorkspace(t, root)
	start := time.Now()
	out, model, err := runTool(t.Context(), t, ExecuteCommandTool(ws), execJSON("echo started; sleep 100 & echo $! > child.pid; wait", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v to time out after 1 s", took)
	}
	o := out.(ExecOutput)
	if !o.TimedOut || o.ExitCode != -1 || o.Output != "started\n" {
		t.Errorf("output %+v, want timed out, exit code -1, the output so far", o)
	}
	if want := "started\nTimed out after 1 s: the command and the processes it started were killed. If it needs longer, run it again with a larger timeout (at most 600)."; model != want {
		t.Errorf("model sees %q, want %q", model, want)
	}
	if pid := childPID(t, root); !processGone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the sleep 100 child (pid %d) outlived the timeout", pid)
	}
}

func TestExecuteCommandCancelled(t *testing.T) {
	root := t.TempDir()
	ws := newWorkspace(t, root)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := executeCommand(ctx, ws, ExecInput{Command: "sleep 100 & echo $! > child.pid; wait"}, newChunks())
		errc <- err
	}()
	pid := childPID(t, root)
	cancel()
	select {
	case err := <-errc:
		if err == nil || err.Error() != "command cancelled: context canceled" {
			t.Errorf("error %v, want the cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling did not end the command")
	}
	if !processGone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the sleep 100 child (pid %d) outlived the cancellation", pid)
	}
}

// TestExecuteCommandBackground: a process left in the background does not
// hold the call beyond pipeWaitDelay, and one whose output goes to a file
// does not hold it at all (as the description promises).
func TestExecuteCommandBackground(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	for _, tt := range []struct {
		command string
		within  time.Duration
	}{
		{"sleep 30 > /dev/null 2>&1 & echo $!", pipeWaitDelay},
		{"sleep 30 & echo $!", pipeWaitDelay + 3*time.Second},
	} {
		start := time.Now()
		out, err := executeCommand(t.Context(), ws, ExecInput{Command: tt.command}, newChunks())
		took := time.Since(start)
		if pid, perr := strconv.Atoi(strings.TrimSpace(out.Output)); perr == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if err != nil || out.ExitCode != 0 {
			t.Errorf("%s: %+v %v", tt.command, out, err)
		}
		if took > tt.within {
			t.Errorf("%s: took %v, want under %v", tt.command, took, tt.within)
		}
	}
}

func TestExecuteCommandOutputCap(t *testing.T) {
	ws := newWorkspace(t, t.TempDir())
	live := &countWriter{}
	out, err := executeCommand(t.Context(), ws, ExecInput{Command: "yes 0123456789 | head -n 300000; echo END"}, live)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated || len(out.Output) > maxCommandOutput || !strings.HasSuffix(out.Output, "0123456789\nEND\n") {
		t.Fatalf("output %d bytes, truncated %v, ends %q; want the last 1 MiB", len(out.Output), out.Truncated, out.Output[max(0, len(out.Output)-20):])
	}
	if want := 300000*11 + 4; live.n != want {
		t.Errorf("the user was streamed %d bytes, want all %d", live.n, want)
	}
	mo := execModelOutput(out).Value.(string)
	if !strings.HasPrefix(mo, "[Only the last ") || !strings.Contains(mo, "lines of the output are shown; the user sees more of it.]\n") || !strings.HasSuffix(mo, "END\nExit code: 0") {
		t.Errorf("model sees %q…", mo[:min(len(mo), 200)])
	}
}

type countWriter struct {
	mu sync.Mutex
	n  int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += len(p)
	return len(p), nil
}

// TestExecuteCommandModelTail pins what the model gets: the last 200
// lines or 16 KB, as a terminal shows them, and how the command ended.
func TestExecuteCommandModelTail(t *testing.T) {
	lines := func(from, to int, width int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			s := fmt.Sprintf("line %d", i)
			b.WriteString(s + strings.Repeat(".", max(0, width-len(s))) + "\n")
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		out  ExecOutput
		want string
	}{
		{"short", ExecOutput{Output: "a\nb\n", ExitCode: 2}, "a\nb\nExit code: 2"},
		{"no newline", ExecOutput{Output: "a"}, "a\nExit code: 0"},
		{"empty", ExecOutput{}, "(no output)\nExit code: 0"},
		{"200 lines", ExecOutput{Output: lines(1, 200, 0)}, lines(1, 200, 0) + "Exit code: 0"},
		{"1000 lines", ExecOutput{Output: lines(1, 1000, 0)},
			"[Only the last 200 of 1000 lines of the output are shown; the user sees all of it.]\n" + lines(801, 1000, 0) + "Exit code: 0"},
		{"wide lines", ExecOutput{Output: lines(1, 100, 999)}, // 1000 bytes a line: 16 fit in 16 KB
			"[Only the last 16 of 100 lines of the output are shown; the user sees all of it.]\n" + lines(85, 100, 999) + "Exit code: 0"},
		{"one huge line", ExecOutput{Output: strings.Repeat("x", 20000)},
			"[Only the last 1 of 1 lines of the output are shown; the user sees all of it.]\n" + strings.Repeat("x", modelTailBytes) + "\nExit code: 0"},
		{"capped", ExecOutput{Output: "b\nc\n", Truncated: true},
			"[Only the last 2 lines of the output are shown; the user sees more of it.]\nb\nc\nExit code: 0"},
		{"terminal", ExecOutput{Output: "\x1b[31mred\x1b[0m\n\x1b]0;title\x07ok\r\n10%\r50%\r100%\n"}, "red\nok\n100%\nExit code: 0"},
		{"timed out", ExecOutput{Output: "x\n", TimedOut: true, Timeout: 30, ExitCode: -1},
			"x\nTimed out after 30 s: the command and the processes it started were killed. If it needs longer, run it again with a larger timeout (at most 600)."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mo := execModelOutput(tt.out)
			if mo.Type != "text" || mo.Value != tt.want {
				t.Errorf("model sees (%s)\n%q\nwant\n%q", mo.Type, mo.Value, tt.want)
			}
			if s := mo.Value.(string); len(s) > modelTailBytes+300 {
				t.Errorf("model text is %d bytes", len(s))
			}
		})
	}
}

func TestCommandEnvHasNoKeys(t *testing.T) {
	env := commandEnv([]string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "anthropic_api_key=x", "PARLEY_TOKEN=t", "HOME=/root"})
	if strings.Join(env, " ") != "PATH=/bin HOME=/root" {
		t.Fatalf("env %v", env)
	}
}
