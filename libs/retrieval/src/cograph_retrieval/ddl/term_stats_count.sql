-- cograph_retrieval/ddl/term_stats_count.sql: one chunk table's term statistics counted from its
-- rows, into empty statistics tables (new ones, or emptied by the migration first).
INSERT INTO {{term_stats}} (scope_id, lexeme, df)
SELECT k.{{scope_column}}, u.lexeme, count(*) FROM {{table}} k, unnest(k.search_text) AS u GROUP BY 1, 2;
INSERT INTO {{scope_stats}} (scope_id, chunks, lexemes)
SELECT {{scope_column}}, count(*), sum(length(search_text)) FROM {{table}} GROUP BY 1;
