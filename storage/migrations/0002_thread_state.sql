-- Per-thread state that is not part of the conversation, keyed by type: the
-- task list ("task"), the task signals already shown to the model
-- ("task-signals"). One value per (thread, type); it goes with its thread.

CREATE TABLE thread_state (
	thread_id  TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	type       TEXT NOT NULL,
	value      TEXT NOT NULL, -- JSON
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (thread_id, type)
) STRICT;

CREATE INDEX thread_state_by_updated ON thread_state (updated_at);
