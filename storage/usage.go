package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"parley/agentcore"
)

// contextLookback is how many of a thread's latest messages are searched
// for the latest reply that recorded its context fill.
const contextLookback = 50

// ThreadUsage sums the usage recorded on a thread's replies (see
// agentcore.MetaUsage), per model, and finds the latest context fill. The
// sums count the replies of every branch, each of which was paid for; the
// context fill is the active branch's, the conversation the model reads. It
// reads the columns migrations 0006 and 0016 keep, so a reply still streaming counts
// once it ends. An unknown thread has no usage.
func (db *DB) ThreadUsage(ctx context.Context, threadID string) (agentcore.ThreadUsage, error) {
	out := agentcore.ThreadUsage{ByModel: map[string]agentcore.Usage{}}
	rows, err := db.reader.QueryContext(ctx, `SELECT usage_model, count(*), sum(input_tokens),
			sum(coalesce(output_tokens, 0)), sum(coalesce(total_tokens, 0)),
			sum(coalesce(reasoning_tokens, 0)), sum(coalesce(cached_tokens, 0)), sum(coalesce(cache_write_tokens, 0))
		FROM messages INDEXED BY messages_usage
		WHERE thread_id = ? AND input_tokens IS NOT NULL
		GROUP BY usage_model`, threadID)
	if err != nil {
		return out, fmt.Errorf("usage of thread %s: %w", threadID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var model string
		var n int
		var u agentcore.Usage
		if err := rows.Scan(&model, &n, &u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.ReasoningTokens,
			&u.CachedTokens, &u.CacheWriteTokens); err != nil {
			return out, fmt.Errorf("usage of thread %s: %w", threadID, err)
		}
		out.ByModel[model] = u
		out.Replies += n
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("usage of thread %s: %w", threadID, err)
	}
	// The fill is the latest reply's; one more than contextLookback
	// messages back says little about the conversation now. Bounding the
	// look keeps a thread with no recorded context (old or imported
	// replies) from being read whole.
	err = db.reader.QueryRowContext(ctx, `SELECT context_tokens, coalesce(usage_model, '') FROM (
			SELECT messages.context_tokens, messages.usage_model FROM `+pathRows+`
			WHERE g.thread_id = ? ORDER BY g.lo DESC, messages.seq DESC LIMIT ?)
		WHERE context_tokens IS NOT NULL LIMIT 1`, threadID, contextLookback).Scan(&out.ContextTokens, &out.ContextModel)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return out, fmt.Errorf("context of thread %s: %w", threadID, err)
	}
	return out, nil
}
