-- Signals and the notification inbox.
--
-- A signal (a message sent into a thread from outside the composer: a user
-- message delivered into a running run, a state update, a notification) is
-- stored as a message with role 'signal' and its XML tag name as type
-- (Mastra's mastra_messages.type). Other messages keep type ''.
ALTER TABLE messages ADD COLUMN type TEXT NOT NULL DEFAULT '';

-- Mastra's mastra_notifications: one record per notification of a thread;
-- ids are unique per thread. Timestamps are milliseconds since the epoch,
-- NULL when the event has not happened; JSON columns hold TEXT.
CREATE TABLE notifications (
	thread_id                TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	id                       TEXT NOT NULL,
	source                   TEXT NOT NULL,
	kind                     TEXT NOT NULL,
	priority                 TEXT NOT NULL,
	status                   TEXT NOT NULL,
	summary                  TEXT NOT NULL,
	payload                  TEXT,
	resource_id              TEXT,
	agent_id                 TEXT,
	source_id                TEXT,
	dedupe_key               TEXT,
	coalesce_key             TEXT,
	coalesced_count          INTEGER NOT NULL DEFAULT 1,
	attributes               TEXT,
	created_at               INTEGER NOT NULL,
	updated_at               INTEGER NOT NULL,
	delivered_at             INTEGER,
	seen_at                  INTEGER,
	dismissed_at             INTEGER,
	archived_at              INTEGER,
	discarded_at             INTEGER,
	deliver_at               INTEGER,
	summary_at               INTEGER,
	delivery_reason          TEXT,
	delivery_attempts        INTEGER NOT NULL DEFAULT 0,
	last_delivery_attempt_at INTEGER,
	last_delivery_error      TEXT,
	delivered_signal_id      TEXT,
	summary_signal_id        TEXT,
	metadata                 TEXT,
	snoozed_until            INTEGER,
	PRIMARY KEY (thread_id, id)
) STRICT;

CREATE INDEX notifications_thread_status_updated ON notifications (thread_id, status, updated_at);
CREATE INDEX notifications_coalescing ON notifications (thread_id, source, kind, status, agent_id, resource_id, dedupe_key, coalesce_key);
CREATE INDEX notifications_due ON notifications (status, deliver_at, summary_at);
CREATE INDEX notifications_created_at ON notifications (created_at);
-- The inbox across threads: newest first.
CREATE INDEX notifications_updated ON notifications (updated_at);

-- Start-up keeps messages a crash left queued; this keeps that O(few).
CREATE INDEX messages_queued ON messages (status) WHERE status = 'queued';
