package toolkit

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"parley/agentcore"
)

//go:embed execute_command.md
var executeCommandDescription string

const (
	// defaultCommandTimeout is Mastra Code's default, in seconds.
	defaultCommandTimeout = 30
	// maxCommandTimeout (seconds) covers a full build or test suite; a
	// command running longer is more likely hung than working.
	maxCommandTimeout = 600
	// maxCommandOutput caps the combined output kept for the user. The
	// tail is kept: the end of a build or a test run says how it went.
	maxCommandOutput = 1 << 20
	// modelTailLines and modelTailBytes bound what the model sees of the
	// output (Mastra Code: the user gets all of it, the model the tail).
	modelTailLines = 200
	modelTailBytes = 16 << 10
	// partialLineDelay is how long a partial line (a prompt, a progress
	// bar) waits for its end before it is shown anyway.
	partialLineDelay = 100 * time.Millisecond
	// livePartialMax shows a partial line this long without waiting.
	livePartialMax = 8 << 10
	// pipeWaitDelay is how long, after the shell exits, a process it left
	// in the background may keep the output open before it is closed.
	pipeWaitDelay = 2 * time.Second
	// cancelWaitDelay is how long, once the call is cancelled and the
	// process group killed, a process that left the group may keep the
	// output open: short, so that Stop answers within a second.
	cancelWaitDelay = 200 * time.Millisecond
)

// ExecInput is execute_command's input.
type ExecInput struct {
	Command string `json:"command" minLength:"1" desc:"Shell command to run (/bin/sh -c; cmd.exe /c on Windows)"`
	Cwd     string `json:"cwd,omitempty" desc:"Directory to run in, relative to the workspace root (default: the root)"`
	Timeout int    `json:"timeout,omitempty" minimum:"0" maximum:"600" desc:"Seconds before the command and every process it started are killed (default 30, at most 600)"`
}

// ExecOutput is what execute_command returns: the whole output for the
// user; the model sees its tail (execModelOutput).
type ExecOutput struct {
	Command   string `json:"command"`
	Cwd       string `json:"cwd" desc:"Directory it ran in, relative to the workspace root"`
	Timeout   int    `json:"timeout" desc:"Seconds it was allowed"`
	ExitCode  int    `json:"exitCode" desc:"Exit status; -1 when the command was killed"`
	Output    string `json:"output" desc:"stdout and stderr together, in the order written; the last 1 MiB"`
	Truncated bool   `json:"truncated,omitempty" desc:"The output's start was dropped: only its last 1 MiB is kept"`
	TimedOut  bool   `json:"timedOut"`
}

// ExecuteCommandTool runs a shell command in a workspace directory, in a
// process group of its own that is killed whole on timeout or
// cancellation. Its output streams live to the tool's card as it comes.
func ExecuteCommandTool(ws *Workspace) *agentcore.Tool {
	t := agentcore.NewTool("execute_command", executeCommandDescription, func(ctx context.Context, in ExecInput, tc *agentcore.ToolContext) (ExecOutput, error) {
		var live io.Writer = io.Discard
		if tc != nil {
			live = tc
		}
		return executeCommand(ctx, ws, in, live)
	})
	t.ToModelOutput = execModelOutput
	return t
}

// executeCommand runs in.Command, streaming its output to live.
func executeCommand(ctx context.Context, ws *Workspace, in ExecInput, live io.Writer) (ExecOutput, error) {
	if strings.TrimSpace(in.Command) == "" {
		return ExecOutput{}, fmt.Errorf("command is empty; give the shell command to run")
	}
	timeout := in.Timeout
	switch {
	case timeout == 0:
		timeout = defaultCommandTimeout
	case timeout < 0 || timeout > maxCommandTimeout:
		return ExecOutput{}, fmt.Errorf("timeout must be between 1 and %d seconds, got %d", maxCommandTimeout, timeout)
	}
	dir, err := ws.Resolve(in.Cwd)
	if err != nil {
		return ExecOutput{}, err
	}
	fi, err := ws.stat(in.Cwd, dir)
	if err != nil {
		return ExecOutput{}, err
	}
	if !fi.IsDir() {
		return ExecOutput{}, fmt.Errorf("cwd %q is a file, not a directory; give the directory to run the command in", in.Cwd)
	}

	runCtx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	cmd := shellCommand(runCtx, in.Command)
	var killed atomic.Bool
	kill := cmd.Cancel
	cmd.Cancel = func() error {
		killed.Store(true)
		return kill()
	}
	out := &liveOutput{live: live}
	cmd.Dir = dir
	cmd.Env = commandEnv(os.Environ())
	// One pipe of our own for stdout and stderr (in the order written):
	// Wait then returns when the shell is gone, and how long the output
	// may stay open after that depends on why it is gone (drainOutput).
	pr, pw, err := os.Pipe()
	if err != nil {
		return ExecOutput{}, fmt.Errorf("make the output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.WaitDelay = cancelWaitDelay // after cancellation, Cancel's kill, then Kill
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return ExecOutput{}, fmt.Errorf("start the shell: %w", err)
	}
	pw.Close() // the command's copies keep it open
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(out, pr)
	}()
	cmd.Wait()
	drainOutput(runCtx, pr, copied)
	out.close()
	if killed.Load() && ctx.Err() != nil {
		return ExecOutput{}, fmt.Errorf("command cancelled: %w", context.Cause(ctx))
	}
	text, truncated := out.result()
	return ExecOutput{
		Command:   in.Command,
		Cwd:       ws.Rel(dir),
		Timeout:   timeout,
		ExitCode:  cmd.ProcessState.ExitCode(),
		Output:    text,
		Truncated: truncated,
		TimedOut:  killed.Load(),
	}, nil
}

// drainOutput waits for the copy of a finished command's output (copied
// closes) while a process it left behind keeps the pipe open:
// pipeWaitDelay after a normal end, cancelWaitDelay after a kill or once
// runCtx ends; then it closes the pipe, which ends the copy.
func drainOutput(runCtx context.Context, pr *os.File, copied <-chan struct{}) {
	defer pr.Close()
	normal := time.NewTimer(pipeWaitDelay)
	defer normal.Stop()
	select {
	case <-copied:
		return
	case <-normal.C:
	case <-runCtx.Done():
		select {
		case <-copied:
			return
		case <-time.After(cancelWaitDelay):
		}
	}
	pr.Close() // on Unix a pipe is polled, so Close ends a Read in progress
	select {
	case <-copied:
	case <-time.After(cancelWaitDelay): // elsewhere the copy may go on; what it adds after out.close is only kept
	}
}

// liveOutput collects a command's output and passes it on to live as it
// comes: whole lines at once, a partial line after partialLineDelay.
type liveOutput struct {
	live io.Writer

	mu      sync.Mutex
	pending []byte // the start of a line not yet passed on
	timer   *time.Timer
	closed  bool
	kept    []byte // the output's tail, trimmed to maxCommandOutput now and then
	dropped bool   // kept lost the output's start
}

func (o *liveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kept = append(o.kept, p...)
	if len(o.kept) > 2*maxCommandOutput { // trim seldom: amortised O(1) a byte
		o.kept = o.kept[:copy(o.kept, o.kept[len(o.kept)-maxCommandOutput:])]
		o.dropped = true
	}
	if o.closed {
		return len(p), nil
	}
	o.pending = append(o.pending, p...)
	if i := bytes.LastIndexByte(o.pending, '\n'); i >= 0 {
		o.send(i + 1)
	}
	if len(o.pending) >= livePartialMax {
		o.send(completeRunes(o.pending))
	}
	if len(o.pending) > 0 && o.timer == nil {
		o.timer = time.AfterFunc(partialLineDelay, o.flush)
	}
	return len(p), nil
}

// send passes on the first n pending bytes. o.mu is held.
func (o *liveOutput) send(n int) {
	if n == 0 {
		return
	}
	o.live.Write(o.pending[:n]) // best effort: the result carries everything
	o.pending = o.pending[:copy(o.pending, o.pending[n:])]
}

// flush passes on a partial line that waited partialLineDelay.
func (o *liveOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timer = nil
	if !o.closed {
		o.send(completeRunes(o.pending))
	}
}

// close passes on what is pending; later writes are only kept.
func (o *liveOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	o.send(len(o.pending))
	o.closed = true
}

// result is the kept output, at most maxCommandOutput bytes starting on a
// rune, and whether its start was dropped.
func (o *liveOutput) result() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept, dropped := o.kept, o.dropped
	if len(kept) > maxCommandOutput {
		kept, dropped = kept[len(kept)-maxCommandOutput:], true
	}
	if dropped {
		for i := 0; i < utf8.UTFMax && len(kept) > 0 && !utf8.RuneStart(kept[0]); i++ {
			kept = kept[1:]
		}
	}
	return string(kept), dropped
}

// completeRunes is the length of the longest start of b that does not end
// inside a UTF-8 sequence, so a live chunk never splits a character.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// execModelOutput gives the model the tail of the output, as a terminal
// would show it, and how the command ended.
func execModelOutput(out any) agentcore.ModelOutput {
	o, ok := out.(ExecOutput)
	if !ok {
		return agentcore.ModelOutput{Type: "json", Value: out}
	}
	text := strings.TrimRight(terminalText(o.Output), "\n")
	tail, cut := tailLines(text, modelTailLines, modelTailBytes)
	var b strings.Builder
	shown := strings.Count(tail, "\n") + 1
	switch {
	case o.Truncated:
		fmt.Fprintf(&b, "[Only the last %d lines of the output are shown; the user sees more of it.]\n", shown)
	case cut:
		fmt.Fprintf(&b, "[Only the last %d of %d lines of the output are shown; the user sees all of it.]\n", shown, strings.Count(text, "\n")+1)
	}
	if tail == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(tail + "\n")
	}
	if o.TimedOut {
		fmt.Fprintf(&b, "Timed out after %d s: the command and the processes it started were killed. If it needs longer, run it again with a larger timeout (at most %d).", o.Timeout, maxCommandTimeout)
	} else {
		fmt.Fprintf(&b, "Exit code: %d", o.ExitCode)
	}
	return agentcore.ModelOutput{Type: "text", Value: b.String()}
}

// ansiEscape matches terminal control sequences: CSI (colours, cursor
// moves) and OSC (titles, links).
var ansiEscape = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)

// terminalText is s as a terminal leaves it on screen, roughly: escape
// sequences removed, and of a line redrawn with carriage returns (a
// progress bar) only its last state.
func terminalText(s string) string {
	s = ansiEscape.ReplaceAllString(s, "")
	if !strings.Contains(s, "\r") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// tailLines is the end of s: at most maxLines lines and maxBytes bytes,
// starting on a whole line where it can. cut reports whether anything was
// left out.
func tailLines(s string, maxLines, maxBytes int) (tail string, cut bool) {
	if len(s) > maxBytes {
		start := len(s) - maxBytes
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
		if i := strings.IndexByte(s[start:], '\n'); i >= 0 && start+i+1 < len(s) {
			start += i + 1 // drop the partial first line
		}
		s, cut = s[start:], true
	}
	end := len(s)
	for range maxLines {
		if end = strings.LastIndexByte(s[:end], '\n'); end < 0 {
			return s, cut
		}
	}
	return s[end+1:], true
}

// secretEnv are the variables a command must not see: the model runs the
// command and reads its output, and these hold Parley's own credentials.
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
	"OPENROUTER_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "PARLEY_TOKEN"}

// CommandEnv is env without Parley's own credentials: the environment of
// any program Parley starts for the model (a command, an MCP server).
func CommandEnv(env []string) []string { return commandEnv(env) }

// commandEnv is the environment of a command: Parley's, without its keys.
func commandEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretEnv, strings.ToUpper(name)) {
			out = append(out, kv)
		}
	}
	return out
}
