-- Where in its chunk a link's mention stands (0-based, in characters of the chunk's text), so a
-- docs page lists its related code in the order the page mentions it; before, the order was that
-- of the first whole-word match of the node's bare name, which may be prose ("to parse input")
-- ahead of the mention (`parse()`). Links stored before have none (NULL) and keep that order
-- until their chunks are linked again (a changed document, or a sync with force_relink).
ALTER TABLE repo_document_chunk_mentions ADD COLUMN mention_start integer;
