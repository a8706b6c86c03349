-- The usage triggers of 0006 read eight fields each straight from the whole
-- content, and SQLite parsed the reply's JSON for every one of them: a 10 MiB
-- reply's final write took ~230 MB of SQLite's memory. Now the content is
-- parsed once, for its metadata, and the fields come from that small object.
DROP TRIGGER messages_usage_insert;
DROP TRIGGER messages_usage_update;

CREATE TRIGGER messages_usage_insert AFTER INSERT ON messages
WHEN new.status <> 'streaming' AND new.role = 'assistant' BEGIN
	UPDATE messages SET (usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens, context_tokens) = (
		SELECT iif(md ->> '$.usage' IS NULL, NULL, coalesce(md ->> '$.model', (SELECT model FROM runs WHERE id = new.run_id), '')),
			iif(md ->> '$.usage' IS NULL, NULL, coalesce(CAST(md ->> '$.usage.inputTokens' AS INTEGER), 0)),
			CAST(md ->> '$.usage.outputTokens' AS INTEGER),
			CAST(md ->> '$.usage.totalTokens' AS INTEGER),
			CAST(md ->> '$.usage.reasoningTokens' AS INTEGER),
			CAST(md ->> '$.usage.cachedInputTokens' AS INTEGER),
			CAST(md ->> '$.contextTokens' AS INTEGER)
		FROM (SELECT new.content -> '$.metadata' AS md))
	WHERE pk = new.pk;
END;

CREATE TRIGGER messages_usage_update AFTER UPDATE OF content, status ON messages
WHEN new.status <> 'streaming' AND new.role = 'assistant' BEGIN
	UPDATE messages SET (usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens, context_tokens) = (
		SELECT iif(md ->> '$.usage' IS NULL, NULL, coalesce(md ->> '$.model', (SELECT model FROM runs WHERE id = new.run_id), '')),
			iif(md ->> '$.usage' IS NULL, NULL, coalesce(CAST(md ->> '$.usage.inputTokens' AS INTEGER), 0)),
			CAST(md ->> '$.usage.outputTokens' AS INTEGER),
			CAST(md ->> '$.usage.totalTokens' AS INTEGER),
			CAST(md ->> '$.usage.reasoningTokens' AS INTEGER),
			CAST(md ->> '$.usage.cachedInputTokens' AS INTEGER),
			CAST(md ->> '$.contextTokens' AS INTEGER)
		FROM (SELECT new.content -> '$.metadata' AS md))
	WHERE pk = new.pk;
END;
