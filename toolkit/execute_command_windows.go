package toolkit

import (
	"context"
	"os/exec"
	"strconv"
	"syscall"
)

// shellCommand runs command with cmd.exe in a new process group;
// cancelling ctx kills the whole process tree, so nothing it started
// outlives it.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Passed as is: cmd.exe does its own quoting, which Go's argument
		// escaping would break. /d skips AutoRun, /s keeps the inner quotes.
		CmdLine:       `cmd.exe /d /s /c "` + command + `"`,
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP,
	}
	cmd.Cancel = func() error {
		kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
		if err := kill.Run(); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	return cmd
}
