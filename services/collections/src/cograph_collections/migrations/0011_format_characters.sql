-- Invisible format characters (Unicode category Cf) inside a stored word made it a word no query
-- finds: PostgreSQL's parser keeps them inside a word ('foo<ZWSP>bar' is one lexeme) or cuts
-- there ('deploy<soft hyphen>ment' was stored as 'deploy<soft hyphen>', the rest dropped). Text
-- pasted from a PDF or a web page holds them. Chunks are now indexed as the query is read
-- (cograph_retrieval's without_format_characters): a zero-width space or a byte order mark
-- separates words, the other format characters (soft hyphen, joiners, direction marks, as
-- Python's unicodedata lists them) go. The stored text is unchanged.
-- equivalent-to: sha256:f098fe9faae3fb53c45fecda4fe87aeafad0dedfcd066a4397c05d9fc8dca0c4 (searchable_text and the count written out)

-- include: cograph_retrieval/ddl/searchable_text.sql

-- One statement, one rewrite of the table: the new column is stored inline (see 0004) from the
-- start. Its statistics are counted again below (a rewrite fires no trigger).
ALTER TABLE md_chunks
    DROP COLUMN search_text,
    ADD COLUMN search_text tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', searchable_text(heading_words(heading_path))), 'B')
        || to_tsvector('english', searchable_text(content))
    ) STORED,
    ALTER COLUMN search_text SET STORAGE MAIN;
CREATE INDEX md_chunks_search_text ON md_chunks USING gin (search_text);

-- Emptied, not deleted from: a delete of every row would leave the tables twice their size.
TRUNCATE md_term_stats, md_scope_stats;
-- include: cograph_retrieval/ddl/term_stats_count.sql table=md_chunks scope_column=collection_id term_stats=md_term_stats scope_stats=md_scope_stats
-- The planner's statistics of the new column (and of the recounted tables): a rewrite collects
-- none, and until a tenth of the chunks changed every full-text match would be planned on a guess.
ANALYZE md_chunks, md_term_stats, md_scope_stats;
