-- Working memory (issue 16 item 4): Mastra keeps a resource's working
-- memory on the resource itself (mastra_resources.workingMemory, text,
-- nullable), next to its metadata. NULL: none yet, or cleared.
ALTER TABLE resources ADD COLUMN working_memory TEXT;
