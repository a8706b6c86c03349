package storage

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Migrations are applied in version order, each in its own transaction, and
// recorded in schema_migrations. Add a file; never edit an applied one.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded files ordered by version, the number before
// the first "_" of the name (0001_init.sql is version 1).
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations") // sorted by name
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version", e.Name())
		}
		if len(out) > 0 && v <= out[len(out)-1].version {
			return nil, fmt.Errorf("migration %s: version %d repeats or is out of order", e.Name(), v)
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	return out, nil
}

// migrate applies the migrations not yet recorded. Each checks and records
// itself inside its IMMEDIATE transaction, so two processes opening a new
// file at once apply it once.
func migrate(ctx context.Context, w *sql.DB) error {
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	all, err := migrations()
	if err != nil {
		return err
	}
	if err := backupBeforeMigrating(ctx, w, all); err != nil {
		return err
	}
	for _, m := range all {
		err := inTx(ctx, w, func(tx *sql.Tx) error {
			var done bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`,
				m.version).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
				m.version, ms(now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.name, err)
		}
	}
	return nil
}

// backupBeforeMigrating copies a database that holds data into the backups
// folder before a migration it has not had changes its schema: a migration
// that goes wrong must not take the history with it. A new file is not
// copied.
func backupBeforeMigrating(ctx context.Context, w *sql.DB, all []migration) error {
	var applied int
	if err := w.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if applied == 0 || applied >= len(all) {
		return nil
	}
	file := mainFile(ctx, w)
	if file == "" {
		return nil
	}
	if _, err := backupInto(ctx, w, BackupDir(file), fmt.Sprintf("before-migration-%d", all[applied].version)); err != nil {
		return fmt.Errorf("back up before migrating (nothing was changed): %w", err)
	}
	return nil
}
