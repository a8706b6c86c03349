package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"parley/agentcore"
)

// unsentFor is how long a file added to the composer and never sent is
// kept: long enough to write the message it goes with.
const unsentFor = time.Hour

// PutFile stores data, of the checked media type mime, once by its
// SHA-256, and returns that in hex; storing the same bytes again stores
// nothing more (and keeps the first media type: the bytes decide it).
func (db *DB) PutFile(ctx context.Context, mime string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	ref := hex.EncodeToString(sum[:])
	_, err := db.writer.ExecContext(ctx, `INSERT INTO files (sha256, mime, size, data, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET created_at = excluded.created_at`, ref, mime, len(data), data, ms(now()))
	if err != nil {
		return "", fmt.Errorf("store a file of %d bytes: %w", len(data), full(err))
	}
	return ref, nil
}

// GetFile returns the stored file with the SHA-256 ref (hex): its media
// type and bytes. ErrNotFound when there is none.
func (db *DB) GetFile(ctx context.Context, ref string) (agentcore.StoredFile, error) {
	var f agentcore.StoredFile
	err := db.reader.QueryRowContext(ctx, `SELECT mime, data FROM files WHERE sha256 = ?`, ref).Scan(&f.MediaType, &f.Data)
	if err != nil {
		return agentcore.StoredFile{}, fmt.Errorf("file %.64s: %w", ref, notFound(err))
	}
	return f, nil
}

// FileInfo returns the media type and size of the stored file ref without
// its bytes. ErrNotFound when there is none.
func (db *DB) FileInfo(ctx context.Context, ref string) (mime string, size int64, err error) {
	err = db.reader.QueryRowContext(ctx, `SELECT mime, size FROM files WHERE sha256 = ?`, ref).Scan(&mime, &size)
	if err != nil {
		return "", 0, fmt.Errorf("file %.64s: %w", ref, notFound(err))
	}
	return mime, size, nil
}

// dropUnsentFiles deletes the files that no message uses and that were
// added longer than unsentFor ago (left in a composer, never sent).
func (db *DB) dropUnsentFiles(ctx context.Context) error {
	_, err := db.writer.ExecContext(ctx, `DELETE FROM files WHERE created_at < ?
		AND NOT EXISTS (SELECT 1 FROM message_files WHERE message_files.sha256 = files.sha256)`, ms(now().Add(-unsentFor)))
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("drop files never sent: %w", err)
	}
	return err
}
