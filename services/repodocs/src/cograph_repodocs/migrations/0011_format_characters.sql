-- Invisible format characters (Unicode category Cf) inside a stored word made it a word no query
-- finds: PostgreSQL's parser keeps them inside a word ('foo<ZWSP>bar' is one lexeme) or cuts
-- there ('deploy<soft hyphen>ment' was stored as 'deploy<soft hyphen>', the rest dropped). Docs
-- hold them where text was pasted from a PDF or a web page. Chunks are now indexed as the query
-- is read (cograph_retrieval.without_format_characters): a zero-width space or a byte order mark
-- separates words, the other format characters go. The stored text is unchanged. (Code nodes
-- are split by identifier_lexemes, by its own rules.)
-- equivalent-to: sha256:31063edf388867ce273bc20b5aa29dfa9075927aeb22acc6b8bdb6c2303d3eda (searchable_text and the count written out)

-- include: cograph_retrieval/ddl/searchable_text.sql

-- One statement, one rewrite of the table: the new column is stored inline (see 0004) from the
-- start. Its statistics are counted again below (a rewrite fires no trigger).
ALTER TABLE repo_document_chunks
    DROP COLUMN search_text,
    ADD COLUMN search_text tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', searchable_text(heading_words(heading_path))), 'B')
        || to_tsvector('english', searchable_text(content))
    ) STORED,
    ALTER COLUMN search_text SET STORAGE MAIN;
CREATE INDEX repo_document_chunks_search_text ON repo_document_chunks USING gin (search_text);

-- Emptied, not deleted from: a delete of every row would leave the tables twice their size.
TRUNCATE repo_term_stats, repo_scope_stats;
-- include: cograph_retrieval/ddl/term_stats_count.sql table=repo_document_chunks scope_column=repository_id term_stats=repo_term_stats scope_stats=repo_scope_stats
-- The planner's statistics of the new column (and of the recounted tables): a rewrite collects
-- none, and until a tenth of the chunks changed every full-text match would be planned on a guess.
ANALYZE repo_document_chunks, repo_term_stats, repo_scope_stats;
