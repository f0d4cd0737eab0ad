-- Invisible format characters (Unicode category Cf) inside a stored word made it a word no query
-- finds: PostgreSQL's parser keeps them inside a word ('foo<ZWSP>bar' is one lexeme) or cuts
-- there ('deploy<soft hyphen>ment' was stored as 'deploy<soft hyphen>', the rest dropped). Text
-- pasted from a PDF or a web page holds them. Chunks are now indexed as the query is read
-- (cograph_retrieval's without_format_characters): a zero-width space or a byte order mark
-- separates words, the other format characters (soft hyphen, joiners, direction marks, as
-- Python's unicodedata lists them) go. The stored text is unchanged.
CREATE FUNCTION searchable_text(source text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN regexp_replace(regexp_replace(source, '[\u200b\ufeff]', ' ', 'g'),
    '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]', '', 'g');

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
INSERT INTO md_term_stats (scope_id, lexeme, df)
SELECT k.collection_id, u.lexeme, count(*) FROM md_chunks k, unnest(k.search_text) AS u GROUP BY 1, 2;
INSERT INTO md_scope_stats (scope_id, chunks, lexemes)
SELECT collection_id, count(*), sum(length(search_text)) FROM md_chunks GROUP BY 1;
-- The planner's statistics of the new column (and of the recounted tables): a rewrite collects
-- none, and until a tenth of the chunks changed every full-text match would be planned on a guess.
ANALYZE md_chunks, md_term_stats, md_scope_stats;
