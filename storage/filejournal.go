package storage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"parley/agentcore"
)

// JournalChatCap bounds the file contents the journal keeps for one chat:
// a write past it is recorded, its content not (FileWrite.NotKept).
const JournalChatCap = 64 << 20

// ContentHash is the journal's name for a file content: hex SHA-256.
func ContentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RecordFileWrite implements agentcore.FileJournal.
func (db *DB) RecordFileWrite(ctx context.Context, w agentcore.FileWrite) error {
	if w.CreatedAt.IsZero() {
		w.CreatedAt = time.Now()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		var beforeHash any
		if w.Existed && w.NotKept == "" {
			hash := ContentHash(w.Before)
			var kept int64
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(before_size), 0) FROM file_writes
				WHERE thread_id = ? AND before_hash IS NOT NULL`, w.ThreadID).Scan(&kept); err != nil {
				return err
			}
			if kept+int64(len(w.Before)) > JournalChatCap {
				w.NotKept = fmt.Sprintf("the chat's kept file contents reached %d MiB", JournalChatCap>>20)
			} else {
				if _, err := tx.ExecContext(ctx, `INSERT INTO file_blobs (hash, content) VALUES (?, ?) ON CONFLICT DO NOTHING`, hash, w.Before); err != nil {
					return err
				}
				beforeHash = hash
			}
		}
		var after any
		if w.AfterHash != "" {
			after = w.AfterHash
		}
		size := 0
		if beforeHash != nil {
			size = len(w.Before)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO file_writes (thread_id, tool_call_id, workspace, path, existed, before_hash, before_size, not_kept, after_hash, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.ThreadID, w.ToolCallID, w.Workspace, w.Path, map[bool]int{false: 0, true: 1}[w.Existed], beforeHash, size, w.NotKept, after, ms(w.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the write of %s by call %s: %w", w.Path, w.ToolCallID, err)
	}
	return nil
}

// FileWrites implements agentcore.FileJournal.
func (db *DB) FileWrites(ctx context.Context, threadID string, toolCallIDs []string) ([]agentcore.FileWrite, error) {
	var out []agentcore.FileWrite
	// In batches: SQLite bounds a statement's parameters.
	for len(toolCallIDs) > 0 {
		batch := toolCallIDs[:min(len(toolCallIDs), 500)]
		toolCallIDs = toolCallIDs[len(batch):]
		args := []any{threadID}
		for _, id := range batch {
			args = append(args, id)
		}
		rows, err := db.reader.QueryContext(ctx, `SELECT w.id, w.thread_id, w.tool_call_id, w.workspace, w.path, w.existed,
				coalesce(w.before_hash, ''), b.content, w.not_kept, coalesce(w.after_hash, ''), w.created_at
			FROM file_writes w LEFT JOIN file_blobs b ON b.hash = w.before_hash
			WHERE w.thread_id = ? AND w.tool_call_id IN (?`+strings.Repeat(", ?", len(batch)-1)+`) ORDER BY w.id`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the file writes of thread %s: %w", threadID, err)
		}
		for rows.Next() {
			var w agentcore.FileWrite
			var existed int
			var created int64
			if err := rows.Scan(&w.ID, &w.ThreadID, &w.ToolCallID, &w.Workspace, &w.Path, &existed, &w.BeforeHash, &w.Before, &w.NotKept, &w.AfterHash, &created); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read the file writes of thread %s: %w", threadID, err)
			}
			w.Existed, w.CreatedAt = existed == 1, time.UnixMilli(created)
			out = append(out, w)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read the file writes of thread %s: %w", threadID, err)
		}
	}
	// Each batch is in order; all of them, in the order writes were made.
	slices.SortFunc(out, func(a, b agentcore.FileWrite) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
