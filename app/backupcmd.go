package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"parley/storage"
)

// backupCmd is `parley backup [--data DIR] [--to FILE]`: a consistent copy
// of the database, safe while Parley runs, to FILE or into the backups
// folder (where the newest seven stay).
func backupCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", os.Getenv("PARLEY_DATA_DIR"), "data folder holding parley.db (env PARLEY_DATA_DIR)")
	to := fs.String("to", "", "write the copy to this file (default: a new file in the data folder's backups/)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	dir, err := dataFolder(*dataDir)
	if err != nil {
		return err
	}
	db := filepath.Join(dir, "parley.db")
	ctx := context.Background()
	path := *to
	if path == "" {
		path, err = storage.BackupFileNow(ctx, db, "")
	} else {
		err = storage.BackupFile(ctx, db, path)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	return nil
}

// restoreCmd is `parley restore [--data DIR] FILE`: puts a backup back as
// the database, after checking it, once Parley has quit; the database it
// replaces goes into the backups folder first.
func restoreCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", os.Getenv("PARLEY_DATA_DIR"), "data folder holding parley.db (env PARLEY_DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("restore needs the backup file: parley restore [--data DIR] FILE")
	}
	from := fs.Arg(0)
	dir, err := dataFolder(*dataDir)
	if err != nil {
		return err
	}
	lock, err := lockDataDir(dir)
	if err != nil {
		var running *RunningError
		if errors.As(err, &running) {
			return fmt.Errorf("%v: quit it before restoring", running)
		}
		return err
	}
	defer lock.release()
	ctx := context.Background()
	if err := storage.CheckBackup(ctx, from); err != nil {
		return fmt.Errorf("not restored: %w", err)
	}
	db := filepath.Join(dir, "parley.db")
	if _, err := os.Stat(db); err == nil {
		kept, err := storage.BackupFileNow(ctx, db, "before-restore")
		if err != nil {
			return fmt.Errorf("not restored: keeping the current database failed: %w", err)
		}
		fmt.Fprintf(stdout, "the database it replaces is kept as %s\n", kept)
	}
	// A copy beside the database, then a rename: the database is either
	// the old one or the whole backup, never half of it.
	tmp := db + ".restoring"
	if err := storage.BackupFile(ctx, from, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("not restored: %w", err)
	}
	for _, side := range []string{db + "-wal", db + "-shm"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
			os.Remove(tmp)
			return fmt.Errorf("not restored: remove %s: %w", side, err)
		}
	}
	if err := os.Rename(tmp, db); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("not restored: %w", err)
	}
	fmt.Fprintf(stdout, "restored %s into %s\n", from, db)
	return nil
}

// dataFolder is dir, or the default data folder when dir is "".
func dataFolder(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return defaultDataDir()
}
