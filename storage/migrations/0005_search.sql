-- Search covers the names of the tools a message calls and thread titles, not
-- only message text. An FTS5 table cannot gain a column, so messages_fts is
-- made again with two, and filled from the messages already stored.
--
-- Snippets mark matches with char(1) and char(2); both are taken out of what
-- is indexed, so a marker in a snippet is always FTS5's, never the text's.

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TABLE messages_fts;

-- What search sees of a message (rowid is messages.pk). Still only once it
-- stops streaming (see 0001_init.sql).
CREATE VIEW message_search_docs AS
SELECT m.pk AS pk,
	(SELECT coalesce(group_concat(p.value ->> '$.toolInvocation.toolName', ' '), '')
		FROM json_each(m.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'tool-invocation') AS tools,
	(SELECT replace(replace(coalesce(group_concat(p.value ->> 'text', ''), ''), char(1), ''), char(2), '')
		FROM json_each(m.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'text') AS text
FROM messages AS m
WHERE m.status <> 'streaming';

CREATE VIRTUAL TABLE messages_fts USING fts5 (tools, text, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
-- A word in a tool name counts twice a word of text: a tool name is short
-- and says what the message did.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
INSERT INTO messages_fts (rowid, tools, text) SELECT pk, tools, text FROM message_search_docs;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
	INSERT INTO messages_fts (rowid, tools, text) SELECT pk, tools, text FROM message_search_docs WHERE pk = new.pk;
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages
WHEN new.status <> 'streaming' BEGIN
	INSERT OR REPLACE INTO messages_fts (rowid, tools, text)
		SELECT pk, tools, text FROM message_search_docs WHERE pk = new.pk;
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
	DELETE FROM messages_fts WHERE rowid = old.pk;
END;

-- Thread titles have their own index: their words would rank against
-- message text on different terms. Its rowid comes from thread_search_keys,
-- since threads has only an implicit rowid, which VACUUM may renumber.
CREATE TABLE thread_search_keys (
	n         INTEGER PRIMARY KEY,
	thread_id TEXT NOT NULL UNIQUE
) STRICT;

CREATE VIRTUAL TABLE threads_fts USING fts5 (title, tokenize = 'unicode61 remove_diacritics 2');

INSERT INTO thread_search_keys (thread_id) SELECT id FROM threads ORDER BY created_at, id;
INSERT INTO threads_fts (rowid, title)
	SELECT k.n, replace(replace(t.title, char(1), ''), char(2), '')
	FROM thread_search_keys AS k JOIN threads AS t ON t.id = k.thread_id;

CREATE TRIGGER threads_fts_insert AFTER INSERT ON threads BEGIN
	INSERT INTO thread_search_keys (thread_id) VALUES (new.id);
	INSERT INTO threads_fts (rowid, title)
		SELECT n, replace(replace(new.title, char(1), ''), char(2), '') FROM thread_search_keys WHERE thread_id = new.id;
END;

CREATE TRIGGER threads_fts_update AFTER UPDATE OF title ON threads BEGIN
	UPDATE threads_fts SET title = replace(replace(new.title, char(1), ''), char(2), '')
	WHERE rowid = (SELECT n FROM thread_search_keys WHERE thread_id = new.id);
END;

CREATE TRIGGER threads_fts_delete AFTER DELETE ON threads BEGIN
	DELETE FROM threads_fts WHERE rowid = (SELECT n FROM thread_search_keys WHERE thread_id = old.id);
	DELETE FROM thread_search_keys WHERE thread_id = old.id;
END;
