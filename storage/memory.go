package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// WorkingMemory is a resource's working memory (Mastra's
// resource.workingMemory); ok is false when it has none.
func (db *DB) WorkingMemory(ctx context.Context, resourceID string) (text string, updated time.Time, ok bool, err error) {
	var s sql.NullString
	var at int64
	err = db.reader.QueryRowContext(ctx, `SELECT working_memory, updated_at FROM resources WHERE id = ?`, resourceID).Scan(&s, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("working memory of %s: %w", resourceID, err)
	}
	if !s.Valid {
		return "", time.Time{}, false, nil
	}
	return s.String, time.UnixMilli(at), true, nil
}

// SetWorkingMemory replaces a resource's working memory (Mastra's
// updateResource({resourceId, workingMemory})), creating the resource when
// it is new; text nil clears it. It returns what it replaced, read in the
// same transaction, so that a change can be shown as old → new.
func (db *DB) SetWorkingMemory(ctx context.Context, resourceID string, text *string) (old string, hadOld bool, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		var s sql.NullString
		switch err := tx.QueryRowContext(ctx, `SELECT working_memory FROM resources WHERE id = ?`, resourceID).Scan(&s); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			old, hadOld = s.String, s.Valid
		}
		var v any
		if text != nil {
			v = *text
		}
		n := ms(now())
		_, err := tx.ExecContext(ctx, `INSERT INTO resources (id, working_memory, created_at, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET working_memory = excluded.working_memory, updated_at = excluded.updated_at`,
			resourceID, v, n, n)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("set working memory of %s: %w", resourceID, err)
	}
	return old, hadOld, nil
}
