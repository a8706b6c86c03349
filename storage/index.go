package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

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

// A message's search entry is one row of messages_fts per chunk of its
// text, rowid pk<<chunkBits | chunk (0020_search_chunks.sql): FTS5 keeps
// the whole index of the row it is inserting in memory (several times its
// text, with the prefix indexes) and writes it out only between rows, so a
// 10 MiB reply indexed as one row took ~35 MiB of SQLite's memory at its
// final write. Chunks bound that by the chunk.
//
// A text of up to chunkFrom bytes is one row, chunk 0; a longer one is cut
// into chunks of about chunkSize bytes. Each chunk is a document of its own
// to FTS5: in a message over chunkFrom, every word of a query must occur
// within one chunk for the message to match, and its snippet comes from
// the best chunk.
const (
	chunkBits = 12
	maxChunks = 1 << chunkBits // a text past maxChunks×chunkSize (1 GiB) has its rest in the last chunk
	chunkFrom = 1 << 20        // indexing 1 MiB as one row costs a few MiB: no more than the write itself
	chunkSize = 256 << 10      // a chunk's pending index stays near FTS5's own flush size (1 MiB)
	// chunkCutWithin is how far back from a chunk's end a cut looks for
	// whitespace, so that no word is split; text without any (a base64
	// blob, a long run of CJK) is cut hard there, at a rune's start.
	chunkCutWithin = 4 << 10
)

// ftsRange is the range of messages_fts rowids of the message pk.
func ftsRange(pk int64) (lo, hi int64) {
	return pk << chunkBits, pk<<chunkBits | (maxChunks - 1)
}

// searchChunks cuts text into the chunks it is indexed in: text itself
// when it is at most chunkFrom bytes, else pieces of it (not copies) of
// about chunkSize bytes, each ending after a whitespace byte where one is
// within chunkCutWithin of chunkSize, never inside a UTF-8 sequence.
func searchChunks(text string) []string {
	if len(text) <= chunkFrom {
		return []string{text}
	}
	chunks := make([]string, 0, min(maxChunks, len(text)/chunkSize+1))
	for len(text) > chunkSize && len(chunks) < maxChunks-1 {
		cut := chunkSize
		if i := strings.LastIndexAny(text[chunkSize-chunkCutWithin:chunkSize], " \t\n\r\f\v"); i >= 0 {
			cut = chunkSize - chunkCutWithin + i + 1
		} else {
			for cut > chunkSize-utf8.UTFMax && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		chunks, text = append(chunks, text[:cut]), text[cut:]
	}
	return append(chunks, text)
}

// setSearchDoc puts a message's search entry in place: its old rows go,
// then each chunk of its text is a row, the tool names in chunk 0 only.
// Each chunk is its own INSERT, so that FTS5 writes out one chunk's index
// before it tokenises the next.
func setSearchDoc(ctx context.Context, tx *sql.Tx, pk int64, c agentcore.Content) error {
	tools, text := searchDoc(c)
	lo, hi := ftsRange(pk)
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages_fts WHERE rowid BETWEEN ? AND ?`, lo, hi); err != nil {
		return fmt.Errorf("unindex message %d: %w", pk, err)
	}
	for i, chunk := range searchChunks(text) {
		if i > 0 {
			tools = ""
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (rowid, tools, text) VALUES (?, ?, ?)`,
			lo|int64(i), tools, chunk); err != nil {
			return fmt.Errorf("index message %d chunk %d: %w", pk, i, err)
		}
	}
	return nil
}

// indexStored puts the search entries of the messages pks in place from
// their stored content (message_search_docs): for the writes that change a
// message's status, and not its text, without reading it into Go. The text
// is one row, chunk 0, as the insert trigger writes it: these are replies
// cut short (stopped, failed, interrupted), whose final write did not
// happen.
func indexStored(ctx context.Context, tx *sql.Tx, pks []int64) error {
	for _, pk := range pks {
		lo, hi := ftsRange(pk)
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages_fts WHERE rowid BETWEEN ? AND ?`, lo, hi); err != nil {
			return fmt.Errorf("unindex message %d: %w", pk, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (rowid, tools, text)
			SELECT pk << ?, tools, text FROM message_search_docs WHERE pk = ?`, chunkBits, pk); err != nil {
			return fmt.Errorf("index message %d: %w", pk, err)
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
