-- The term statistics triggers name their tables without a schema, so a writer whose
-- search_path lacks this one (an operator's psql, any plain connection) failed with
-- "relation repo_term_stats does not exist". Each function now carries this schema's
-- search_path (the migration's own) wherever it is called from.
ALTER FUNCTION term_stats() SET search_path FROM CURRENT;
ALTER FUNCTION term_stats_update() SET search_path FROM CURRENT;
