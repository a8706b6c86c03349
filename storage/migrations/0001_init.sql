-- Parley's first schema. Timestamps are milliseconds since the Unix epoch;
-- JSON columns hold TEXT. Tables are STRICT so a wrongly typed bind fails
-- loudly instead of being stored as something else.

CREATE TABLE resources (
	id         TEXT PRIMARY KEY,
	metadata   TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE threads (
	id          TEXT PRIMARY KEY,
	resource_id TEXT NOT NULL REFERENCES resources (id),
	title       TEXT NOT NULL DEFAULT '',
	metadata    TEXT,
	pinned      INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;

-- The thread list: pinned first, then most recently updated; id breaks ties
-- so paging is stable.
CREATE INDEX threads_by_recent ON threads (pinned DESC, updated_at DESC, id DESC);
CREATE INDEX threads_by_resource ON threads (resource_id, pinned DESC, updated_at DESC, id DESC);

CREATE TABLE messages (
	-- pk is an explicit rowid: messages_fts points at it, and VACUUM may
	-- renumber an implicit rowid.
	pk          INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	resource_id TEXT NOT NULL,
	seq         INTEGER NOT NULL,
	role        TEXT NOT NULL,
	content     TEXT NOT NULL, -- Mastra v2 content as JSON
	status      TEXT NOT NULL,
	run_id      TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	-- Also the index for listing a thread's messages and for max(seq).
	UNIQUE (thread_id, seq)
) STRICT;

-- Start-up marks messages left streaming by a crash; this keeps that O(few).
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	agent_id    TEXT NOT NULL,
	model       TEXT NOT NULL,
	status      TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	usage       TEXT NOT NULL DEFAULT '{}',
	started_at  INTEGER NOT NULL,
	finished_at INTEGER -- NULL while the run is going
) STRICT;

CREATE INDEX runs_by_thread ON runs (thread_id, started_at);
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';

-- Full-text index over the plain text of each message (its text parts
-- concatenated, as agentcore.Content.Text); rowid is messages.pk. A message
-- is indexed once it stops streaming: re-indexing the whole growing text on
-- every streamed flush would triple the cost of that write, and nobody
-- searches a half-written answer. Start-up recovery changes the status of
-- crashed streams, so they are indexed too.
CREATE VIRTUAL TABLE messages_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2');

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
	INSERT INTO messages_fts (rowid, text) VALUES (new.pk, (
		SELECT coalesce(group_concat(p.value ->> 'text', ''), '')
		FROM json_each(new.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'text'
	));
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages
WHEN new.status <> 'streaming' BEGIN
	INSERT OR REPLACE INTO messages_fts (rowid, text) VALUES (new.pk, (
		SELECT coalesce(group_concat(p.value ->> 'text', ''), '')
		FROM json_each(new.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'text'
	));
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
	DELETE FROM messages_fts WHERE rowid = old.pk;
END;
