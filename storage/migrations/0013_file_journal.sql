-- What Parley's file tools wrote, so that leaving a branch of a chat can
-- put the workspace back as it was (issue 15: rewind files too). Each row
-- is one write by one tool call (write_file, edit_file, delete_file): the
-- file's content before it, kept once per content (file_blobs, by its
-- SHA-256), and the hash of what the call left, to tell a file changed
-- outside Parley since. Commands (execute_command) are not journaled.

CREATE TABLE file_blobs (
	hash    TEXT PRIMARY KEY, -- hex SHA-256 of content
	content BLOB NOT NULL
) STRICT;

CREATE TABLE file_writes (
	id           INTEGER PRIMARY KEY,
	thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	tool_call_id TEXT NOT NULL,
	workspace    TEXT NOT NULL, -- the workspace root the call wrote in
	path         TEXT NOT NULL, -- relative to it, with forward slashes
	existed      INTEGER NOT NULL, -- 1: the file was there before the call
	before_hash  TEXT,    -- its content's hash; NULL when not kept
	before_size  INTEGER NOT NULL DEFAULT 0,
	not_kept     TEXT NOT NULL DEFAULT '', -- why the content was not kept (too big, the chat's cap)
	after_hash   TEXT,    -- what the call left; NULL: no file
	created_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX file_writes_by_call ON file_writes (thread_id, tool_call_id);
CREATE INDEX file_writes_by_blob ON file_writes (before_hash) WHERE before_hash IS NOT NULL;

-- A content no write refers to any more goes with the last one (a chat
-- deleted, a write forgotten).
CREATE TRIGGER file_writes_blob_gc AFTER DELETE ON file_writes
WHEN old.before_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM file_writes WHERE before_hash = old.before_hash) BEGIN
	DELETE FROM file_blobs WHERE hash = old.before_hash;
END;
