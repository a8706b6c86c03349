-- The inbox lists runs that wait for the user (suspended) or failed,
-- newest first, across threads.
CREATE INDEX runs_by_status ON runs (status, started_at DESC);
