package app

import (
	"context"
	"log/slog"
	"time"

	"parley/storage"
)

const (
	// backupEvery is how old the newest backup may grow while Parley runs.
	backupEvery = 24 * time.Hour
	// backupFirst waits a little after start, so a backup never slows it.
	backupFirst = time.Minute
	// backupCheck is how often a running Parley looks again.
	backupCheck = time.Hour
)

// dailyBackups keeps a backup no older than a day in the data folder's
// backups/ while Parley runs (the newest seven stay), until stop is called.
func dailyBackups(db *storage.DB, path string, log *slog.Logger) (stop func()) {
	return dailyBackupsEvery(db, path, log, backupFirst, backupCheck)
}

// dailyBackupsEvery is dailyBackups looking first after first, then every
// check.
func dailyBackupsEvery(db *storage.DB, path string, log *slog.Logger, first, check time.Duration) (stop func()) {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait := first
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = check
			if time.Since(storage.LatestBackup(path)) < backupEvery {
				continue
			}
			if p, err := db.BackupNow(ctx, ""); err != nil {
				log.Error("daily backup", "err", err)
			} else {
				log.Info("backed up the database", "to", p)
			}
		}
	}()
	return func() { cancel(); <-done }
}
