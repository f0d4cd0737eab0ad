-- The term statistics trigger names its tables without a schema, so a writer whose
-- search_path lacks this one (an operator's psql, any plain connection) failed with
-- "relation md_term_stats does not exist". The function now carries this schema's
-- search_path (the migration's own) wherever it is called from.
ALTER FUNCTION md_chunks_stats() SET search_path FROM CURRENT;
