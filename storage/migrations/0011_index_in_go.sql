-- A reply's final write parsed the reply's whole JSON in SQLite for its search
-- entry (json_each over the parts, group_concat, replace: message_search_docs)
-- and then rewrote the whole row once more for its usage columns (0010's
-- trigger is an UPDATE of the row): ~200 MB of SQLite's memory for a 10 MiB
-- reply. The writes that change a message's content or status now index it
-- themselves (storage/index.go): UpdateMessage from the content it holds in
-- Go, in the same UPDATE that stores it; MarkMessage and the recovery at Open
-- from the stored content, with the same SQL as before. Inserts keep their
-- triggers.
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_usage_update;
