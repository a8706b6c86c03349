-- The active branch as a few ranges of strands (issue 15: switching a
-- version near the start of a 10,000-message chat moved ~10,000 narrow rows
-- of active_path out and ~10,000 back, five times what opening the chat
-- costs).
--
-- A strand is a chain of messages, each the parent of the next, as appending
-- them one by one made it: a message continues its parent's strand when the
-- parent is that strand's last message (its first child does), and starts
-- a new strand otherwise (a regeneration, an edit, a root). A strand starts
-- at its parent strand's message at fork_seq (0 and no parent for a root),
-- so the path from a root down to a message M is M's strand up to M, then
-- the parent strand up to fork_seq, and so on: a handful of ranges of
-- (strand, seq), however long the chat.
--
-- messages.strand: a label per thread, never reused (a new strand takes the
-- thread's largest plus one); 0 is the strand of the thread's first root, so
-- a chat that never branched keeps the default and its rows are not written.
ALTER TABLE messages ADD COLUMN strand INTEGER NOT NULL DEFAULT 0;

-- A strand's messages in seq order: the rows of a range of the path.
CREATE INDEX messages_strand ON messages (thread_id, strand, seq);

CREATE TABLE strands (
	thread_id TEXT NOT NULL,
	strand    INTEGER NOT NULL,
	parent    INTEGER,          -- the strand it forks from; NULL when it starts at a root
	fork_seq  INTEGER NOT NULL, -- the seq of the message it follows there; 0 for a root
	PRIMARY KEY (thread_id, strand)
) STRICT, WITHOUT ROWID;

-- path_segments: the thread's active branch, the chain of its active leaf:
-- the messages of strand with lo < seq <= hi, for each row. The rows cover
-- (0, leaf seq] without gaps or overlap, one per strand the branch passes,
-- so the segment holding a seq is the row with the largest lo below it,
-- and reading the rows by lo and each range by seq reads the branch from
-- its root down. Switching versions rewrites the rows below the branch
-- point, one per strand, not one per message.
CREATE TABLE path_segments (
	thread_id TEXT NOT NULL,
	lo        INTEGER NOT NULL,
	hi        INTEGER NOT NULL,
	strand    INTEGER NOT NULL,
	PRIMARY KEY (thread_id, lo)
) STRICT, WITHOUT ROWID;

-- Every stored tree on strands: a message goes on along its parent's strand
-- when it is the parent's child on the active branch, or else its first
-- child (the active branch becomes one strand from its root: the shortest
-- chain to read and switch); any other child, and a root, heads a strand.
CREATE TEMP TABLE strand_of (
	pk     INTEGER PRIMARY KEY,
	strand INTEGER NOT NULL,
	head   INTEGER NOT NULL
);

WITH RECURSIVE s (pk, id, thread_id, strand, head) AS (
	SELECT m.pk, m.id, m.thread_id,
		CASE WHEN m.parent_id IS NULL AND NOT EXISTS (SELECT 1 FROM messages AS r
			WHERE r.thread_id = m.thread_id AND r.parent_id IS NULL AND r.seq < m.seq) THEN 0 ELSE m.seq END, 1
	FROM messages AS m
	WHERE m.parent_id IS NULL OR m.pk <> (SELECT f.pk FROM messages AS f
		WHERE f.thread_id = m.thread_id AND f.parent_id = m.parent_id
		ORDER BY EXISTS (SELECT 1 FROM active_path AS a WHERE a.thread_id = f.thread_id AND a.seq = f.seq) DESC, f.seq
		LIMIT 1)
	UNION ALL
	SELECT c.pk, c.id, c.thread_id, s.strand, 0 FROM s JOIN messages AS c ON c.pk = (SELECT f.pk FROM messages AS f
		WHERE f.thread_id = s.thread_id AND f.parent_id = s.id
		ORDER BY EXISTS (SELECT 1 FROM active_path AS a WHERE a.thread_id = f.thread_id AND a.seq = f.seq) DESC, f.seq
		LIMIT 1)
)
INSERT INTO temp.strand_of (pk, strand, head) SELECT pk, strand, head FROM s;

UPDATE messages SET strand = (SELECT strand FROM temp.strand_of WHERE strand_of.pk = messages.pk)
WHERE pk IN (SELECT pk FROM temp.strand_of WHERE strand <> 0);

INSERT INTO strands (thread_id, strand, parent, fork_seq)
SELECT h.thread_id, h.strand, p.strand, coalesce(p.seq, 0)
FROM temp.strand_of AS o JOIN messages AS h ON h.pk = o.pk LEFT JOIN messages AS p ON p.id = h.parent_id
WHERE o.head = 1;

DROP TABLE temp.strand_of;

-- The active branch was a path from a root to its leaf, the active message
-- with the largest seq: its chain, strand by strand up from the leaf.
WITH RECURSIVE leaf (thread_id, seq) AS (
	SELECT thread_id, max(seq) FROM active_path GROUP BY thread_id
), chain (thread_id, strand, parent, lo, hi) AS (
	SELECT l.thread_id, s.strand, s.parent, s.fork_seq, l.seq
	FROM leaf AS l JOIN messages AS m ON m.thread_id = l.thread_id AND m.seq = l.seq
		JOIN strands AS s ON s.thread_id = m.thread_id AND s.strand = m.strand
	UNION ALL
	SELECT c.thread_id, s.strand, s.parent, s.fork_seq, c.lo
	FROM chain AS c JOIN strands AS s ON s.thread_id = c.thread_id AND s.strand = c.parent
)
INSERT INTO path_segments (thread_id, lo, hi, strand) SELECT thread_id, lo, hi, strand FROM chain;

-- branch_leaf keeps its meaning (the leaf that was active below a branch's
-- first message when the branch was left) and is all a kept branch needs
-- now: its path is the chain of that leaf. left_path and active_path go.
DROP TRIGGER threads_tree_gc;
DROP TABLE left_path;
DROP TABLE active_path;

CREATE TRIGGER threads_tree_gc AFTER DELETE ON threads BEGIN
	DELETE FROM path_segments WHERE thread_id = old.id;
	DELETE FROM strands WHERE thread_id = old.id;
	DELETE FROM branch_leaf WHERE thread_id = old.id;
END;
