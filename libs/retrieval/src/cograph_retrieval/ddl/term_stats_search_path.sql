-- cograph_retrieval/ddl/term_stats_search_path.sql: term_stats() and term_stats_update() name
-- their tables without a schema, so each carries the search_path of the migration that runs this
-- (the service's schema): a writer whose search_path lacks it (an operator's psql, any plain
-- connection) would fail with "relation ... does not exist".
ALTER FUNCTION term_stats() SET search_path FROM CURRENT;
ALTER FUNCTION term_stats_update() SET search_path FROM CURRENT;
