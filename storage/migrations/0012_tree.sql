-- A conversation is a tree (issue 15): editing a sent message or
-- regenerating a reply adds a sibling instead of replacing it, and the chat
-- shows one branch of the tree, its active path.
--
-- parent_id: the message this one answers or follows, a message of the same
-- thread with a lower seq (seq stays monotonic per thread, so a parent is
-- always older than its children and no cycle can form); NULL for a root.
-- active: 1 on the chat's active branch, which is exactly one path from a
-- root down: ordering the active messages by seq is reading that path root
-- to leaf, so every read that pages the chat by seq only adds active = 1.
-- chosen_at: ms when the message last became active. Switching to a branch
-- follows, below the chosen message, the child with the largest chosen_at at
-- each level, so a branch comes back showing the versions it showed before.
-- The code keeps these invariants (storage/tree.go); there is no foreign key
-- on parent_id, whose check would cost an index scan per deleted message.
ALTER TABLE messages ADD COLUMN parent_id TEXT;
ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
ALTER TABLE messages ADD COLUMN chosen_at INTEGER NOT NULL DEFAULT 0;

-- Every chat stored before is one branch: each message follows the previous
-- one of its thread (the (thread_id, seq) index finds it), all active.
UPDATE messages SET
	chosen_at = created_at,
	parent_id = (SELECT p.id FROM messages AS p
		WHERE p.thread_id = messages.thread_id AND p.seq < messages.seq
		ORDER BY p.seq DESC LIMIT 1);

-- The active branch, paged by seq as the whole thread was: a page of a chat
-- with many branches reads what a page of a linear one does, and the index
-- holds the shown messages only.
CREATE INDEX messages_active ON messages (thread_id, seq) WHERE active = 1;

-- A message's children and siblings (versions ‹ n/m ›), in seq order.
CREATE INDEX messages_children ON messages (thread_id, parent_id, seq);
