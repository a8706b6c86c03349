//go:build unix

package toolkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// shellCommand runs command with /bin/sh in a new process group;
// cancelling ctx kills the whole group, so nothing it started outlives
// it.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// A negative pid names the process group, led by the shell.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return os.ErrProcessDone
			}
			return err
		}
		return nil
	}
	return cmd
}
