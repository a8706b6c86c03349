-- Your own agents (issue 16 item 3). Each row is one agent the user made
-- in Settings: its definition is a JSON object that app/chat writes and
-- reads (storage does not look inside); created_at orders the list.
CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
