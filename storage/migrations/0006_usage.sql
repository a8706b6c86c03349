-- Token usage per reply, copied out of content.metadata (agentcore.MetaUsage,
-- MetaContextTokens) into columns when a reply stops streaming, so that a
-- thread's total is a sum over a small index instead of a JSON parse of every
-- reply (44 ms for a 10,000-message thread before, see BenchmarkThreadUsage).
-- Like the FTS index, a streaming reply is not copied on every flush: its
-- figures land with its final write. The columns are NULL for messages that
-- recorded no usage.
ALTER TABLE messages ADD COLUMN usage_model TEXT;
ALTER TABLE messages ADD COLUMN input_tokens INTEGER;
ALTER TABLE messages ADD COLUMN output_tokens INTEGER;
ALTER TABLE messages ADD COLUMN total_tokens INTEGER;
ALTER TABLE messages ADD COLUMN reasoning_tokens INTEGER;
ALTER TABLE messages ADD COLUMN cached_tokens INTEGER;
ALTER TABLE messages ADD COLUMN context_tokens INTEGER;

-- Only replies with usage are in it: the thread total reads nothing else.
CREATE INDEX messages_usage ON messages
	(thread_id, usage_model, input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_tokens)
	WHERE input_tokens IS NOT NULL;

-- The model is the one the reply recorded, else its run's. Numbers are cast
-- so that an odd value in an imported file cannot fail the STRICT table.
CREATE TRIGGER messages_usage_insert AFTER INSERT ON messages
WHEN new.status <> 'streaming' AND new.role = 'assistant' BEGIN
	UPDATE messages SET
		usage_model = iif(new.content ->> '$.metadata.usage' IS NULL, NULL,
			coalesce(new.content ->> '$.metadata.model', (SELECT model FROM runs WHERE id = new.run_id), '')),
		input_tokens = iif(new.content ->> '$.metadata.usage' IS NULL, NULL,
			coalesce(CAST(new.content ->> '$.metadata.usage.inputTokens' AS INTEGER), 0)),
		output_tokens = CAST(new.content ->> '$.metadata.usage.outputTokens' AS INTEGER),
		total_tokens = CAST(new.content ->> '$.metadata.usage.totalTokens' AS INTEGER),
		reasoning_tokens = CAST(new.content ->> '$.metadata.usage.reasoningTokens' AS INTEGER),
		cached_tokens = CAST(new.content ->> '$.metadata.usage.cachedInputTokens' AS INTEGER),
		context_tokens = CAST(new.content ->> '$.metadata.contextTokens' AS INTEGER)
	WHERE pk = new.pk;
END;

CREATE TRIGGER messages_usage_update AFTER UPDATE OF content, status ON messages
WHEN new.status <> 'streaming' AND new.role = 'assistant' BEGIN
	UPDATE messages SET
		usage_model = iif(new.content ->> '$.metadata.usage' IS NULL, NULL,
			coalesce(new.content ->> '$.metadata.model', (SELECT model FROM runs WHERE id = new.run_id), '')),
		input_tokens = iif(new.content ->> '$.metadata.usage' IS NULL, NULL,
			coalesce(CAST(new.content ->> '$.metadata.usage.inputTokens' AS INTEGER), 0)),
		output_tokens = CAST(new.content ->> '$.metadata.usage.outputTokens' AS INTEGER),
		total_tokens = CAST(new.content ->> '$.metadata.usage.totalTokens' AS INTEGER),
		reasoning_tokens = CAST(new.content ->> '$.metadata.usage.reasoningTokens' AS INTEGER),
		cached_tokens = CAST(new.content ->> '$.metadata.usage.cachedInputTokens' AS INTEGER),
		context_tokens = CAST(new.content ->> '$.metadata.contextTokens' AS INTEGER)
	WHERE pk = new.pk;
END;

-- Replies stored before this migration.
UPDATE messages SET
	usage_model = iif(content ->> '$.metadata.usage' IS NULL, NULL,
		coalesce(content ->> '$.metadata.model', (SELECT model FROM runs WHERE runs.id = messages.run_id), '')),
	input_tokens = iif(content ->> '$.metadata.usage' IS NULL, NULL,
		coalesce(CAST(content ->> '$.metadata.usage.inputTokens' AS INTEGER), 0)),
	output_tokens = CAST(content ->> '$.metadata.usage.outputTokens' AS INTEGER),
	total_tokens = CAST(content ->> '$.metadata.usage.totalTokens' AS INTEGER),
	reasoning_tokens = CAST(content ->> '$.metadata.usage.reasoningTokens' AS INTEGER),
	cached_tokens = CAST(content ->> '$.metadata.usage.cachedInputTokens' AS INTEGER),
	context_tokens = CAST(content ->> '$.metadata.contextTokens' AS INTEGER)
WHERE role = 'assistant' AND status <> 'streaming' AND content ->> '$.metadata' IS NOT NULL;
