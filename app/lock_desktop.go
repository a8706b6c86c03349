//go:build desktop

package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wailsapp/wails/v2"
)

// desktopOnRunning is `parley desktop` on a data folder another Parley
// holds (lockErr): the window opens on that Parley, logged in with its
// token, and no second server starts. When that cannot be (it has not said
// where it is, its token cannot be read), the refusal is returned as it is.
func desktopOnRunning(ctx context.Context, dataDir string, lockErr error, log *slog.Logger) error {
	var running *RunningError
	if !errors.As(lockErr, &running) {
		return lockErr
	}
	if log == nil {
		log = slog.Default()
	}
	login, err := runningLoginURL(dataDir, running)
	if err != nil {
		log.Warn("cannot open a window on the running Parley", "err", err)
		return running
	}
	log.Info("Parley already runs on this data folder: opening a window on it", "url", running.URL, "pid", running.PID)
	err = wails.Run(windowOptions(ctx, login, log, nil))
	if err != nil {
		return fmt.Errorf("desktop window on the running Parley at %s: %w", running.URL, err)
	}
	return nil
}
