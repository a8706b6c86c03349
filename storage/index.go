package storage

import (
	"context"
	"database/sql"
	"strings"

	"parley/agentcore"
)

// A message is indexed when it stops streaming: its usage columns (0006)
// and its search entry (0005). Inserts do it in triggers; the writes that
// change a stored message's content or status do it themselves (0011), so
// that a long reply's final write neither parses its JSON in SQLite nor
// rewrites its row a second time.

// usageSet is the SET clause that fills the usage columns of an assistant
// message from md, an SQL expression for its content's metadata as JSON
// (agentcore.MetaUsage, MetaContextTokens, the model), as 0010's triggers
// did; other messages keep theirs. The model is the one the reply recorded,
// else its run's; numbers are cast so that an odd value cannot fail the
// STRICT table.
func usageSet(md string) string {
	return `(usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens, cache_write_tokens, context_tokens) = (
		SELECT iif(a, iif(md ->> '$.usage' IS NULL, NULL, coalesce(md ->> '$.model', (SELECT model FROM runs WHERE id = messages.run_id), '')), messages.usage_model),
			iif(a, iif(md ->> '$.usage' IS NULL, NULL, coalesce(CAST(md ->> '$.usage.inputTokens' AS INTEGER), 0)), messages.input_tokens),
			iif(a, CAST(md ->> '$.usage.outputTokens' AS INTEGER), messages.output_tokens),
			iif(a, CAST(md ->> '$.usage.totalTokens' AS INTEGER), messages.total_tokens),
			iif(a, CAST(md ->> '$.usage.reasoningTokens' AS INTEGER), messages.reasoning_tokens),
			iif(a, CAST(md ->> '$.usage.cachedInputTokens' AS INTEGER), messages.cached_tokens),
			iif(a, CAST(md ->> '$.usage.cacheWriteTokens' AS INTEGER), messages.cache_write_tokens),
			iif(a, CAST(md ->> '$.contextTokens' AS INTEGER), messages.context_tokens)
		FROM (SELECT ` + md + ` AS md, messages.role = 'assistant' AS a))`
}

// searchDoc is what search sees of a message (message_search_docs, from
// Go): the names of the tools it calls, and its text, without the
// snippet markers char(1) and char(2). A reply's one text part is its
// text, not a copy of it.
func searchDoc(c agentcore.Content) (tools, text string) {
	var names, texts []string
	for _, p := range c.Parts {
		switch {
		case p.Type == "tool-invocation" && p.ToolInvocation != nil:
			names = append(names, p.ToolInvocation.ToolName)
		case p.Type == "text" && p.Text != "":
			texts = append(texts, p.Text)
		}
	}
	text = strings.ReplaceAll(strings.ReplaceAll(strings.Join(texts, ""), "\x01", ""), "\x02", "")
	return strings.Join(names, " "), text
}

// setSearchDoc puts a message's search entry in place.
func setSearchDoc(ctx context.Context, tx *sql.Tx, pk int64, c agentcore.Content) error {
	tools, text := searchDoc(c)
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO messages_fts (rowid, tools, text) VALUES (?, ?, ?)`, pk, tools, text)
	return err
}

// indexStored puts the search entries of the messages pks in place from
// their stored content (message_search_docs): for the writes that change a
// message's status, and not its text, without reading it into Go.
func indexStored(ctx context.Context, tx *sql.Tx, pks []int64) error {
	for _, pk := range pks {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO messages_fts (rowid, tools, text)
			SELECT pk, tools, text FROM message_search_docs WHERE pk = ?`, pk); err != nil {
			return err
		}
	}
	return nil
}

// returnedPKs collects the pks an UPDATE … RETURNING pk gives.
func returnedPKs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var pks []int64
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk); err != nil {
			return nil, err
		}
		pks = append(pks, pk)
	}
	return pks, rows.Err()
}
