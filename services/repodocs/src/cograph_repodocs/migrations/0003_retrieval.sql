-- Retrieval over repository documents and code: BM25 term statistics for both, and a
-- full-text form of code identifiers that keeps them whole and splits them into parts.
-- The term statistics are cograph_retrieval's, which reads them.
-- equivalent-to: sha256:ebe423e16856f8ee7234b9595fbab50da2d22fd1184f8ece95ee702dec25d148 (its DDL written out)

-- include: cograph_retrieval/ddl/term_stats_function.sql

-- Repository document chunks.
-- include: cograph_retrieval/ddl/term_stats_tables.sql term_stats=repo_term_stats scope_stats=repo_scope_stats
-- include: cograph_retrieval/ddl/term_stats_triggers.sql table=repo_document_chunks scope_column=repository_id term_stats=repo_term_stats scope_stats=repo_scope_stats
-- include: cograph_retrieval/ddl/term_stats_count.sql table=repo_document_chunks scope_column=repository_id term_stats=repo_term_stats scope_stats=repo_scope_stats

-- Code identifiers as lexemes: each whole (ParseConfig, parse_config, pkg.module.Class),
-- its dotted parts, its snake_case and camelCase parts; lowercased. Queries are split the
-- same way, so `parseConfig`, "parse config" and `pkg.parse_config` all meet.
CREATE FUNCTION identifier_lexemes(source text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
    SELECT DISTINCT lower(word) FROM (
        SELECT trim(BOTH '.' FROM token) AS word
        FROM regexp_split_to_table(source, '[^A-Za-z0-9_.]+') AS token
        UNION ALL
        SELECT token FROM regexp_split_to_table(source, '[^A-Za-z0-9_]+') AS token
        UNION ALL
        SELECT token FROM regexp_split_to_table(
            regexp_replace(regexp_replace(source, '([a-z0-9])([A-Z])', '\1 \2', 'g'),
                           '([A-Z]+)([A-Z][a-z])', '\1 \2', 'g'),
            '[^A-Za-z0-9]+') AS token
    ) words
    WHERE length(word) > 1);

ALTER TABLE code_nodes ADD COLUMN search_text tsvector GENERATED ALWAYS AS (
    array_to_tsvector(identifier_lexemes(qualified_name || ' ' || kind || ' ' || signature))) STORED;
CREATE INDEX code_nodes_search_text ON code_nodes USING gin (search_text);

-- include: cograph_retrieval/ddl/term_stats_tables.sql term_stats=code_term_stats scope_stats=code_scope_stats
-- include: cograph_retrieval/ddl/term_stats_triggers.sql table=code_nodes scope_column=repository_id term_stats=code_term_stats scope_stats=code_scope_stats
-- include: cograph_retrieval/ddl/term_stats_count.sql table=code_nodes scope_column=repository_id term_stats=code_term_stats scope_stats=code_scope_stats
