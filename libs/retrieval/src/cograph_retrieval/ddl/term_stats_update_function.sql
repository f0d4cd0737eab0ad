-- cograph_retrieval/ddl/term_stats_update_function.sql: term_stats_update(), term_stats() for
-- UPDATEs (term_stats_update_trigger.sql): an update that rewrites a generated search_text
-- would otherwise leave its new lexemes uncounted and its old ones counted. Only rows whose
-- search_text or scope changed move the statistics (an embedding written back changes neither);
-- a statement trigger with transition tables cannot name its columns (UPDATE OF), hence the
-- comparison inside. Arguments as for term_stats(): the statistics table, the scope statistics
-- table, the scope column.
CREATE FUNCTION term_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed text := format(
        'SELECT o.%1$I AS old_scope, o.search_text AS old_text, n.%1$I AS new_scope, n.search_text AS new_text
         FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE o.search_text IS DISTINCT FROM n.search_text OR o.%1$I IS DISTINCT FROM n.%1$I',
        TG_ARGV[2]);
BEGIN
    EXECUTE format(
        'INSERT INTO %I AS t (scope_id, lexeme, df)
         SELECT scope_id, lexeme, sum(df) FROM (
             SELECT c.old_scope AS scope_id, u.lexeme, -1 AS df FROM (%s) c, unnest(c.old_text) AS u
             UNION ALL
             SELECT c.new_scope, u.lexeme, 1 FROM (%s) c, unnest(c.new_text) AS u) d
         GROUP BY 1, 2 HAVING sum(df) <> 0 ORDER BY 1, 2
         ON CONFLICT (scope_id, lexeme) DO UPDATE SET df = t.df + excluded.df',
        TG_ARGV[0], changed, changed);
    EXECUTE format(
        'INSERT INTO %I AS s (scope_id, chunks, lexemes)
         SELECT scope_id, sum(chunks), sum(lexemes) FROM (
             SELECT c.old_scope AS scope_id, -1 AS chunks, -length(c.old_text) AS lexemes FROM (%s) c
             UNION ALL
             SELECT c.new_scope, 1, length(c.new_text) FROM (%s) c) d
         GROUP BY 1 HAVING sum(chunks) <> 0 OR sum(lexemes) <> 0 ORDER BY 1
         ON CONFLICT (scope_id) DO UPDATE
         SET chunks = s.chunks + excluded.chunks, lexemes = s.lexemes + excluded.lexemes',
        TG_ARGV[1], changed, changed);
    RETURN NULL;
END $$;
