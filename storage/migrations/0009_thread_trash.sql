-- A deleted chat is first put in the trash: hidden from every read (the
-- sidebar, search, the API), restorable while its Undo is offered, then
-- deleted for good by the sweep (PurgeTrash). NULL: not in the trash.
ALTER TABLE threads ADD COLUMN deleted_at INTEGER;
CREATE INDEX threads_in_trash ON threads (deleted_at) WHERE deleted_at IS NOT NULL;
