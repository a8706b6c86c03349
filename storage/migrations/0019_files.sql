-- Attachments (issue 16): files a user adds to a message, kept once by
-- their SHA-256 in the one database (so a backup has them) and named from
-- the message's file parts as /files/<sha256>.
CREATE TABLE files (
	sha256     TEXT PRIMARY KEY,  -- lowercase hex
	mime       TEXT NOT NULL,     -- as checked when it was added
	size       INTEGER NOT NULL,
	data       BLOB NOT NULL,
	created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Which messages use which file: a file no message uses is deleted with the
-- last chat that used it, or an hour after it was added and never sent.
CREATE TABLE message_files (
	message_pk INTEGER NOT NULL,
	sha256     TEXT NOT NULL,
	PRIMARY KEY (message_pk, sha256)
) STRICT, WITHOUT ROWID;

CREATE INDEX message_files_by_file ON message_files (sha256);

-- Every way a message row comes (sent, imported, forked) and goes (deleted
-- alone or with its chat). The check on the content is a substring: only a
-- message with a file part pays for reading its parts.
CREATE TRIGGER message_files_add AFTER INSERT ON messages
WHEN instr(new.content, '"type":"file"') > 0 BEGIN
	INSERT OR IGNORE INTO message_files (message_pk, sha256)
	SELECT new.pk, substr(value ->> 'data', 8) FROM json_each(new.content, '$.parts')
	WHERE value ->> 'type' = 'file' AND value ->> 'data' GLOB '/files/[0-9a-f]*';
END;

CREATE TRIGGER message_files_drop AFTER DELETE ON messages
WHEN instr(old.content, '"type":"file"') > 0 BEGIN
	DELETE FROM message_files WHERE message_pk = old.pk;
END;

-- A file goes with the last message that used it.
CREATE TRIGGER files_unused AFTER DELETE ON message_files BEGIN
	DELETE FROM files WHERE sha256 = old.sha256
		AND NOT EXISTS (SELECT 1 FROM message_files WHERE sha256 = old.sha256);
END;
