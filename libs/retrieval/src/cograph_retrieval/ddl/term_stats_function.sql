-- cograph_retrieval/ddl/term_stats_function.sql: term_stats(), the trigger function that keeps
-- a chunk table's BM25 term statistics (term_stats_tables.sql) in step with its inserts and
-- deletes (term_stats_triggers.sql). One function for every chunk table of a schema: the
-- statistics table, the scope statistics table and the scope column are its arguments. Inserted
-- rows add to the statistics, deleted rows subtract; sorted upserts keep concurrent writers from
-- deadlocking.
CREATE FUNCTION term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed text := CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END;
    sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    EXECUTE format(
        'INSERT INTO %I AS t (scope_id, lexeme, df)
         SELECT c.%I, u.lexeme, %s * count(*) FROM %I c, unnest(c.search_text) AS u
         GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (scope_id, lexeme) DO UPDATE SET df = t.df + excluded.df',
        TG_ARGV[0], TG_ARGV[2], sign, changed);
    EXECUTE format(
        'INSERT INTO %I AS s (scope_id, chunks, lexemes)
         SELECT %I, %s * count(*), %s * sum(length(search_text)) FROM %I
         GROUP BY 1 ORDER BY 1
         ON CONFLICT (scope_id) DO UPDATE
         SET chunks = s.chunks + excluded.chunks, lexemes = s.lexemes + excluded.lexemes',
        TG_ARGV[1], TG_ARGV[2], sign, sign, changed);
    RETURN NULL;
END $$;
