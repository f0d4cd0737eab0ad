-- Term statistics for BM25 full-text ranking: PostgreSQL's own ranking has no inverse
-- document frequency. Kept by statement triggers, so every write path (COPY, cascading
-- deletes) updates them in the same transaction. The tables and their count are
-- cograph_retrieval's, which reads them; the trigger function is this store's own.
-- equivalent-to: sha256:c448d97e882f8248a68508b85ed8cfff5130f81ef0adb4f2e5da5301c7957ff0 (the tables and their count written out)

-- include: cograph_retrieval/ddl/term_stats_tables.sql term_stats=md_term_stats scope_stats=md_scope_stats

CREATE FUNCTION md_chunks_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- Inserted chunks add to the statistics, deleted ones subtract.
    changed text := CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END;
    sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    -- Sorted upserts: concurrent writers lock the same rows in the same order.
    EXECUTE format(
        'INSERT INTO md_term_stats AS t (scope_id, lexeme, df)
         SELECT c.collection_id, u.lexeme, %s * count(*) FROM %I c, unnest(c.search_text) AS u
         GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (scope_id, lexeme) DO UPDATE SET df = t.df + excluded.df', sign, changed);
    EXECUTE format(
        'INSERT INTO md_scope_stats AS s (scope_id, chunks, lexemes)
         SELECT collection_id, %s * count(*), %s * sum(length(search_text)) FROM %I
         GROUP BY 1 ORDER BY 1
         ON CONFLICT (scope_id) DO UPDATE
         SET chunks = s.chunks + excluded.chunks, lexemes = s.lexemes + excluded.lexemes', sign, sign, changed);
    RETURN NULL;
END $$;

CREATE TRIGGER md_chunks_stats_insert AFTER INSERT ON md_chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION md_chunks_stats();
CREATE TRIGGER md_chunks_stats_delete AFTER DELETE ON md_chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION md_chunks_stats();

-- include: cograph_retrieval/ddl/term_stats_count.sql table=md_chunks scope_column=collection_id term_stats=md_term_stats scope_stats=md_scope_stats
