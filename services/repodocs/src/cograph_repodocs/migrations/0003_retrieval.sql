-- Retrieval over repository documents and code: BM25 term statistics for both, and a
-- full-text form of code identifiers that keeps them whole and splits them into parts.

-- One trigger function for every chunk-like table of this schema: the statistics table,
-- the scope statistics table and the scope column are its arguments. Inserted rows add
-- to the statistics, deleted rows subtract; sorted upserts keep concurrent writers from
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

-- Repository document chunks.
CREATE TABLE repo_term_stats (scope_id uuid NOT NULL, lexeme text NOT NULL, df bigint NOT NULL,
                              PRIMARY KEY (scope_id, lexeme));
CREATE TABLE repo_scope_stats (scope_id uuid PRIMARY KEY, chunks bigint NOT NULL, lexemes bigint NOT NULL);
CREATE TRIGGER repo_document_chunks_stats_insert AFTER INSERT ON repo_document_chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('repo_term_stats', 'repo_scope_stats', 'repository_id');
CREATE TRIGGER repo_document_chunks_stats_delete AFTER DELETE ON repo_document_chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('repo_term_stats', 'repo_scope_stats', 'repository_id');
INSERT INTO repo_term_stats (scope_id, lexeme, df)
SELECT k.repository_id, u.lexeme, count(*) FROM repo_document_chunks k, unnest(k.search_text) AS u GROUP BY 1, 2;
INSERT INTO repo_scope_stats (scope_id, chunks, lexemes)
SELECT repository_id, count(*), sum(length(search_text)) FROM repo_document_chunks GROUP BY 1;

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

CREATE TABLE code_term_stats (scope_id uuid NOT NULL, lexeme text NOT NULL, df bigint NOT NULL,
                              PRIMARY KEY (scope_id, lexeme));
CREATE TABLE code_scope_stats (scope_id uuid PRIMARY KEY, chunks bigint NOT NULL, lexemes bigint NOT NULL);
CREATE TRIGGER code_nodes_stats_insert AFTER INSERT ON code_nodes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('code_term_stats', 'code_scope_stats', 'repository_id');
CREATE TRIGGER code_nodes_stats_delete AFTER DELETE ON code_nodes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION term_stats('code_term_stats', 'code_scope_stats', 'repository_id');
INSERT INTO code_term_stats (scope_id, lexeme, df)
SELECT k.repository_id, u.lexeme, count(*) FROM code_nodes k, unnest(k.search_text) AS u GROUP BY 1, 2;
INSERT INTO code_scope_stats (scope_id, chunks, lexemes)
SELECT repository_id, count(*), sum(length(search_text)) FROM code_nodes GROUP BY 1;
