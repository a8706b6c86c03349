package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// GetSetting returns the JSON value of key; ok is false when it is unset.
func (db *DB) GetSetting(ctx context.Context, key string) (json.RawMessage, bool, error) {
	var s string
	err := db.reader.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get setting %s: %w", key, err)
	}
	return json.RawMessage(s), true, nil
}

// SetSetting stores value (JSON) under key, replacing any earlier value.
func (db *DB) SetSetting(ctx context.Context, key string, value json.RawMessage) error {
	if !json.Valid(value) {
		return fmt.Errorf("set setting %s: value is not JSON", key)
	}
	_, err := db.writer.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, string(value), ms(now()))
	if err != nil {
		return fmt.Errorf("set setting %s: %w", key, err)
	}
	return nil
}
