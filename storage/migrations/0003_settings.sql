-- Settings: app-wide values (approval policies, remembered approvals, …),
-- JSON by key. Provider keys are never stored here.
CREATE TABLE settings (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
