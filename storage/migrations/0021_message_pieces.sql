-- A message's text or tool arguments of 1 MiB or more are stored out of its
-- row, in pieces of about 256 KiB (storage/pieces.go): a streaming reply's
-- writes add only what it gained since the last one, where each rewrote
-- the whole reply, and SQLite never holds a reply's size in one value (the
-- bound copy and the record of a 10 MiB reply cost about 20 MiB at its
-- final write). The row's JSON holds a marker where such a string was.
--
-- part is the string's part in content.parts, field which of its strings
-- (0 text, 1 toolInvocation.argsText, 2 toolInvocation.args); a piece is
-- bytes [at, upto) of it, and crc the CRC-32C of bytes [0, upto), which
-- tells a write whether the stored string is a prefix of the new one.
CREATE TABLE message_pieces (
	message_pk INTEGER NOT NULL REFERENCES messages (pk) ON DELETE CASCADE,
	part       INTEGER NOT NULL,
	field      INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	at         INTEGER NOT NULL,
	upto       INTEGER NOT NULL,
	crc        INTEGER NOT NULL,
	text       TEXT NOT NULL,
	PRIMARY KEY (message_pk, part, field, seq)
) STRICT;

-- What search sees of a message (0005), with a text part stored in pieces
-- read from them: MarkMessage, the recovery at start and forks index from
-- this view.
DROP VIEW message_search_docs;
CREATE VIEW message_search_docs AS
SELECT m.pk AS pk,
	(SELECT coalesce(group_concat(p.value ->> '$.toolInvocation.toolName', ' '), '')
		FROM json_each(m.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'tool-invocation') AS tools,
	(SELECT replace(replace(coalesce(group_concat(iif(p.value ->> 'text' = char(0) || 'parley-pieces' || char(0),
			coalesce((SELECT group_concat(x.text, '' ORDER BY x.seq) FROM message_pieces AS x
				WHERE x.message_pk = m.pk AND x.part = p.key AND x.field = 0), p.value ->> 'text'),
			p.value ->> 'text'), ''), ''), char(1), ''), char(2), '')
		FROM json_each(m.content, '$.parts') AS p
		WHERE p.value ->> 'type' = 'text') AS text
FROM messages AS m
WHERE m.status <> 'streaming';
