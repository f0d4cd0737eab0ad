-- Keep each chunk's tsvector inside its row. BM25 reads it for every candidate, and stored out
-- of line (TOAST) each read costs an index lookup and two more pages. Content and vectors, read
-- only for the hits, go out of line first. Rows written before this migration keep their layout
-- until they are written again (the next sync that changes them).
ALTER TABLE repo_document_chunks ALTER COLUMN search_text SET STORAGE MAIN;
