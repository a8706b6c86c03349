-- The active branch moves out of the message rows (issue 15: switching a
-- version near the start of a long chat rewrote one wide row, content and
-- all, per message that changed branch, and walked down level by level).
--
-- active_path: one narrow row per message on a thread's active branch,
-- keyed by its seq. Ordering a thread's rows by seq is reading the branch
-- from root to leaf (seq grows along every path), so a page of the chat is
-- a range of this table joined to messages by pk, and a switch deletes and
-- inserts rows of a few dozen bytes.
CREATE TABLE active_path (
	thread_id TEXT NOT NULL,
	seq       INTEGER NOT NULL, -- the message's seq, kept equal to it
	pk        INTEGER NOT NULL, -- messages.pk
	PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO active_path (thread_id, seq, pk) SELECT thread_id, seq, pk FROM messages WHERE active = 1;

-- branch_leaf and left_path: where a branch was left, and what it was.
-- When a switch or a rewind takes the active path off below a message (the
-- join), the first message it takes off, C, gets a branch_leaf row naming
-- the leaf that was active below it, and the rows it takes off move to
-- left_path with head = C's seq. Switching back to C, or to any message of
-- that branch, moves its rows below that message back (a range of narrow
-- rows, as leaving was) and goes on down from the leaf by chosen_at only if
-- the leaf has children (a rewind left it so): no walk down one level at a
-- time. The rows stand only while C stays off the path: whatever brings it
-- back drops them, so nothing below it can have changed since; a message
-- deleted or moved leaves its branch (storage/tree.go, unlink).
CREATE TABLE branch_leaf (
	thread_id TEXT NOT NULL,
	seq       INTEGER NOT NULL, -- C's seq
	pk        INTEGER NOT NULL, -- C's messages.pk
	leaf_seq  INTEGER NOT NULL, -- the seq of the leaf that was active below C
	PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE left_path (
	thread_id TEXT NOT NULL,
	seq       INTEGER NOT NULL, -- the message's seq
	pk        INTEGER NOT NULL, -- messages.pk
	head      INTEGER NOT NULL, -- the seq of its branch's C (branch_leaf)
	PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;

-- No foreign keys: their check would cost a lookup of the thread per row a
-- switch moves. A deleted thread takes its rows with it here; DeleteMessage
-- and MoveMessages take a message's own.
CREATE TRIGGER threads_tree_gc AFTER DELETE ON threads BEGIN
	DELETE FROM active_path WHERE thread_id = old.id;
	DELETE FROM branch_leaf WHERE thread_id = old.id;
	DELETE FROM left_path WHERE thread_id = old.id;
END;

-- The flag is dropped, not left unused: a column that every new row would
-- default to 1 would say "active" of messages that are not. SQLite rewrites
-- each message row once for this, after the copy taken before migrating.
DROP INDEX messages_active;
ALTER TABLE messages DROP COLUMN active;
