-- A message's text is indexed in chunks (storage/index.go): FTS5 holds the
-- whole pending index of the row it is inserting in memory, several times the
-- row's text, and flushes it only between rows, so a 10 MiB reply cost about
-- 35 MiB to index as one row. A message's rows are now pk << 12 | chunk
-- (chunk 0 to 4095): the rowid still grows with messages.pk, and
-- messages.pk = rowid >> 12 finds the message by its primary key.
--
-- An FTS5 table cannot renumber its rows in place (a shifted rowid may be one
-- still to shift), so messages_fts is made again, with 0005's columns, options
-- and rank, from the rows it holds: a message whose text was indexed whole
-- stays one row, chunk 0, until it is indexed again.

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
ALTER TABLE messages_fts RENAME TO messages_fts_0005;

CREATE VIRTUAL TABLE messages_fts USING fts5 (tools, text, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
-- A word in a tool name counts twice a word of text (0005).
INSERT INTO messages_fts (messages_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
INSERT INTO messages_fts (rowid, tools, text) SELECT rowid << 12, tools, text FROM messages_fts_0005 ORDER BY rowid;
DROP TABLE messages_fts_0005;

-- A message inserted whole (an import, a user's message) is indexed as one
-- row, chunk 0, however long it is: imports of huge messages cost what they
-- did before, and the write that can be as big as a reply is UpdateMessage's,
-- which chunks.
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
	INSERT INTO messages_fts (rowid, tools, text) SELECT pk << 12, tools, text FROM message_search_docs WHERE pk = new.pk;
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
	DELETE FROM messages_fts WHERE rowid BETWEEN old.pk << 12 AND (old.pk << 12) | 4095;
END;
