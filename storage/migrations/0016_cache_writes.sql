-- Tokens written to the provider's prompt cache (issue 18): Anthropic bills
-- them above the input price, so a chat's cost needs their sum beside the
-- other counts (agentcore.Usage.CacheWriteTokens, "cacheWriteTokens" in a
-- reply's usage metadata). No reply stored before this migration recorded
-- any: nothing to backfill.
ALTER TABLE messages ADD COLUMN cache_write_tokens INTEGER;

-- The thread total reads the index alone, so the new column joins it.
DROP INDEX messages_usage;
CREATE INDEX messages_usage ON messages
	(thread_id, usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens, cache_write_tokens)
	WHERE input_tokens IS NOT NULL;

-- 0010's insert trigger, with the new column (updates index in Go: 0011).
DROP TRIGGER messages_usage_insert;
CREATE TRIGGER messages_usage_insert AFTER INSERT ON messages
WHEN new.status <> 'streaming' AND new.role = 'assistant' BEGIN
	UPDATE messages SET (usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens, cache_write_tokens, context_tokens) = (
		SELECT iif(md ->> '$.usage' IS NULL, NULL, coalesce(md ->> '$.model', (SELECT model FROM runs WHERE id = new.run_id), '')),
			iif(md ->> '$.usage' IS NULL, NULL, coalesce(CAST(md ->> '$.usage.inputTokens' AS INTEGER), 0)),
			CAST(md ->> '$.usage.outputTokens' AS INTEGER),
			CAST(md ->> '$.usage.totalTokens' AS INTEGER),
			CAST(md ->> '$.usage.reasoningTokens' AS INTEGER),
			CAST(md ->> '$.usage.cachedInputTokens' AS INTEGER),
			CAST(md ->> '$.usage.cacheWriteTokens' AS INTEGER),
			CAST(md ->> '$.contextTokens' AS INTEGER)
		FROM (SELECT new.content -> '$.metadata' AS md))
	WHERE pk = new.pk;
END;
