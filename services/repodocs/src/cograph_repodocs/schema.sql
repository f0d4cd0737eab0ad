-- The repodocs schema as its migrations leave it (`make schema` writes it).
-- Migrations applied (version, name, sha256 of the SQL run, included files filled in):
--   0001 init 61efaac1c9953b7db6b5a814e1bdf4050b3e4f63d65b019a99c66bbdcc540a64
--   0002 sync_liveness bb7d52689d529581f2680ec27983338bb0cd346797a7836e1a22a7f2770242a7
--   0003 retrieval 901d429ad3bfa79ffbf91090ccb7fef412ffab982e86b33829e4af390c4ad060
--   0004 search_text_inline f85a8b0c523bba9c59e334d15ea68f30785c35f3835f620f39bb937bb5d7b1af
--   0005 term_stats_on_update 32543d945d2fcb407114168900dc1d232eebe63bf182df6f7ea0cb35fbe3983e
--   0006 content_hash_index 86454ec31d5d1c8ba96720daa4a7a798e55f43dc59fd69f0532f8087c0bce8c6
--   0007 statistics_search_path 66ea8d72c414fb21dcc7a2703564d968e6c25d10f9d082eaa72a76d6f4105c13
--   0008 repository_ref_any_case 828712d79f55ec6c713b92ee9e99cb230310d877a572b82019762f33c0a8ce22
--   0009 rechunk_non_markdown 849bcd03373455d9c418bd997b571f7fc0284bebaf2645d409df801359fef387
--   0010 identifier_characters 7501b158134beecf09635dd379dbc5cd199ff59798695fce6893d0d594f5ae3b
--   0011 format_characters 8d47022cbbeffcecc71b9b60fd6a20562f4912ebcf2697cd02ce7235fb49f3c6
--   0012 rechunk_by_chunker_parameters ee5eb6956d460646264e67f4ca16c0f38f1828ac125739ca052392667226ae19
--   0013 mention_offsets 5c58b030092b2486f55b6f343e1c73086141c042c7094f35fae4671d6d721d9d
--   0014 rechunk_comment_headings 1eda6d32638745e8ea3c0236c499de9cd90db72f91f077fad09f7641ae2d9fee
--   0015 chunk_windows b85d10fd81ac35c73605ce73f5da2637fe858624df1d76b157f98db395433c30
--   0016 symbol_aliases_and_reasons 50dcebde4165ce19e46038a12ef4d3b3e434189eac0699791e5ecca4b8ec173b
--   0017 webhook_trigger 9caebe0ddb5148327724c9fdb0624260667c1ed361542146911c2d279dde093d
--   0018 repository_sync_interval 91c78335caf0c6a46c69ae5bbf394d9fb8c24a5dfdf3b2bc7eeaa12c48011546
--   0019 sync_progress b9997ec76970f23ecbb30b3ab1155834663406140a89fe021cd0d1bb6fc2421d
--   0020 nearest_definition a655832927ee945370a4ae9a35aaa08da37915fbab25e3b01a7e54ab47610330
--   0021 members_without_vectors b7eaa52aa176adfb0a831264cd9aee80e221faa89905f5823f4e106cb6abc345

CREATE SCHEMA repodocs;

CREATE FUNCTION repodocs.heading_words(path text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN array_to_string(path, ' '::text);

CREATE FUNCTION repodocs.identifier_lexemes(source text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(SELECT DISTINCT lower(words.word) AS lower FROM (SELECT TRIM(BOTH '.'::text FROM token.token) AS word FROM regexp_split_to_table(identifier_lexemes.source, '[\x01-\x23\x25-\x2d\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+'::text) token(token) UNION ALL SELECT token.token FROM regexp_split_to_table(identifier_lexemes.source, '[\x01-\x23\x25-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+'::text) token(token) UNION ALL SELECT token.token FROM regexp_split_to_table(regexp_replace(regexp_replace(identifier_lexemes.source, '([a-z0-9])([A-Z])'::text, '\1 \2'::text, 'g'::text), '([A-Z]+)([A-Z][a-z])'::text, '\1 \2'::text, 'g'::text), '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6\u00b8\u00b9\u00bb-\u00bf\u00d7\u00f7\u2000-\u200b\u200e-\u203e\u2041-\u2053\u2055-\u206f\u2190-\u22ff\u3000-\u3004\u3008-\u3020\u3030\u3036\u3037\u303d-\u303f\ufeff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65]+'::text) token(token)) words WHERE (length(words.word) > 1));

CREATE FUNCTION repodocs.searchable_text(source text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN regexp_replace(regexp_replace(source, '[\u200b\ufeff]'::text, ' '::text, 'g'::text), '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'::text, ''::text, 'g'::text);

CREATE FUNCTION repodocs.term_stats() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'repodocs', 'public'
    AS $$
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

CREATE FUNCTION repodocs.term_stats_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'repodocs', 'public'
    AS $_$
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
END $_$;

CREATE TABLE repodocs.code_aliases (
    repository_id uuid NOT NULL,
    path text NOT NULL,
    name text NOT NULL,
    target text NOT NULL,
    public boolean NOT NULL
);

CREATE TABLE repodocs.code_files (
    repository_id uuid NOT NULL,
    path text NOT NULL,
    content_hash text NOT NULL
);

CREATE TABLE repodocs.code_nodes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    repository_id uuid NOT NULL,
    path text NOT NULL,
    name text NOT NULL,
    qualified_name text NOT NULL,
    kind text NOT NULL,
    language text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    signature text DEFAULT ''::text NOT NULL,
    embedding public.vector,
    embedding_model text,
    embedding_dim integer,
    search_text tsvector GENERATED ALWAYS AS (array_to_tsvector(repodocs.identifier_lexemes(((((qualified_name || ' '::text) || kind) || ' '::text) || signature)))) STORED,
    CONSTRAINT code_nodes_kind_check CHECK ((kind = ANY (ARRAY['function'::text, 'class'::text, 'method'::text, 'type'::text, 'interface'::text, 'constant'::text, 'module'::text, 'variable'::text, 'attribute'::text, 'property'::text]))),
    CONSTRAINT code_nodes_language_check CHECK ((language = ANY (ARRAY['python'::text, 'go'::text, 'typescript'::text, 'javascript'::text])))
);

CREATE TABLE repodocs.code_scope_stats (
    scope_id uuid NOT NULL,
    chunks bigint NOT NULL,
    lexemes bigint NOT NULL
);

CREATE TABLE repodocs.code_term_stats (
    scope_id uuid NOT NULL,
    lexeme text NOT NULL,
    df bigint NOT NULL
);

CREATE TABLE repodocs.repo_document_chunk_mentions (
    chunk_id uuid NOT NULL,
    code_node_id uuid NOT NULL,
    form text NOT NULL,
    mention text NOT NULL,
    mention_start integer,
    reason text,
    CONSTRAINT repo_document_chunk_mentions_form_check CHECK ((form = ANY (ARRAY['backtick'::text, 'dotted'::text, 'call'::text, 'reference'::text]))),
    CONSTRAINT repo_document_chunk_mentions_reason_check CHECK ((reason = ANY (ARRAY['explicit_target'::text, 'document_import'::text, 'heading_context'::text, 'text_context'::text, 'unique_public'::text, 'qualified_name'::text, 'same_file'::text, 'nearest_definition'::text, 'name_match'::text])))
);

CREATE TABLE repodocs.repo_document_chunk_windows (
    chunk_id uuid NOT NULL,
    window_index integer NOT NULL,
    repository_id uuid NOT NULL,
    embedding public.vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dim integer NOT NULL,
    CONSTRAINT repo_document_chunk_windows_window_index_check CHECK ((window_index >= 1))
);

CREATE TABLE repodocs.repo_document_chunks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    document_id uuid NOT NULL,
    repository_id uuid NOT NULL,
    chunk_index integer NOT NULL,
    heading_path text[] DEFAULT '{}'::text[] NOT NULL,
    heading_anchor text DEFAULT ''::text NOT NULL,
    content text NOT NULL,
    chunker_max_words integer NOT NULL,
    chunker_overlap_words integer NOT NULL,
    embedding public.vector,
    embedding_model text,
    embedding_dim integer,
    search_text tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('english'::regconfig, repodocs.searchable_text(repodocs.heading_words(heading_path))), 'B'::"char") || to_tsvector('english'::regconfig, repodocs.searchable_text(content)))) STORED,
    embedding_recipe text
);
ALTER TABLE ONLY repodocs.repo_document_chunks ALTER COLUMN search_text SET STORAGE MAIN;

CREATE TABLE repodocs.repo_documents (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    repository_id uuid NOT NULL,
    path text NOT NULL,
    kind text NOT NULL,
    title text NOT NULL,
    slug text NOT NULL,
    content text NOT NULL,
    content_hash text NOT NULL,
    size_bytes integer NOT NULL,
    indexed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT repo_documents_kind_check CHECK ((kind = ANY (ARRAY['repo_doc'::text, 'workflow'::text, 'example'::text, 'test'::text, 'config'::text])))
);

CREATE TABLE repodocs.repo_scope_stats (
    scope_id uuid NOT NULL,
    chunks bigint NOT NULL,
    lexemes bigint NOT NULL
);

CREATE TABLE repodocs.repo_syncs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    repository_id uuid NOT NULL,
    status text NOT NULL,
    trigger text NOT NULL,
    commit_sha text,
    discovered_files bigint DEFAULT 0 NOT NULL,
    indexed_documents bigint DEFAULT 0 NOT NULL,
    indexed_chunks bigint DEFAULT 0 NOT NULL,
    unchanged_documents bigint DEFAULT 0 NOT NULL,
    deleted_documents bigint DEFAULT 0 NOT NULL,
    replaced_files bigint DEFAULT 0 NOT NULL,
    code_nodes bigint DEFAULT 0 NOT NULL,
    mentions bigint DEFAULT 0 NOT NULL,
    skipped jsonb DEFAULT '[]'::jsonb NOT NULL,
    error text,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    heartbeat_at timestamp with time zone DEFAULT now() NOT NULL,
    force_relink boolean DEFAULT false NOT NULL,
    phase text,
    progress jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT repo_syncs_phase_check CHECK ((phase = ANY (ARRAY['fetch'::text, 'discover'::text, 'chunk'::text, 'embed'::text, 'link'::text]))),
    CONSTRAINT repo_syncs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'success'::text, 'error'::text]))),
    CONSTRAINT repo_syncs_trigger_check CHECK ((trigger = ANY (ARRAY['manual'::text, 'schedule'::text, 'registration'::text, 'webhook'::text])))
);

CREATE TABLE repodocs.repo_term_stats (
    scope_id uuid NOT NULL,
    lexeme text NOT NULL,
    df bigint NOT NULL
);

CREATE TABLE repodocs.repositories (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    host text NOT NULL,
    owner text NOT NULL,
    name text NOT NULL,
    clone_url text,
    checkout_path text,
    visibility text NOT NULL,
    owner_subject text NOT NULL,
    default_branch text DEFAULT ''::text NOT NULL,
    web_url text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sync_interval_seconds bigint,
    CONSTRAINT repositories_check CHECK (((clone_url IS NULL) <> (checkout_path IS NULL))),
    CONSTRAINT repositories_sync_interval_seconds_check CHECK (((sync_interval_seconds IS NULL) OR (sync_interval_seconds = 0) OR (sync_interval_seconds >= 60))),
    CONSTRAINT repositories_visibility_check CHECK ((visibility = ANY (ARRAY['public'::text, 'private'::text])))
);

CREATE TABLE repodocs.repository_grants (
    repository_id uuid NOT NULL,
    group_name text NOT NULL
);

CREATE TABLE repodocs.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY repodocs.code_files
    ADD CONSTRAINT code_files_pkey PRIMARY KEY (repository_id, path);

ALTER TABLE ONLY repodocs.code_nodes
    ADD CONSTRAINT code_nodes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY repodocs.code_scope_stats
    ADD CONSTRAINT code_scope_stats_pkey PRIMARY KEY (scope_id);

ALTER TABLE ONLY repodocs.code_term_stats
    ADD CONSTRAINT code_term_stats_pkey PRIMARY KEY (scope_id, lexeme);

ALTER TABLE ONLY repodocs.repo_document_chunk_mentions
    ADD CONSTRAINT repo_document_chunk_mentions_pkey PRIMARY KEY (chunk_id, code_node_id, form);

ALTER TABLE ONLY repodocs.repo_document_chunk_windows
    ADD CONSTRAINT repo_document_chunk_windows_pkey PRIMARY KEY (chunk_id, window_index);

ALTER TABLE ONLY repodocs.repo_document_chunks
    ADD CONSTRAINT repo_document_chunks_document_id_chunk_index_key UNIQUE (document_id, chunk_index);

ALTER TABLE ONLY repodocs.repo_document_chunks
    ADD CONSTRAINT repo_document_chunks_pkey PRIMARY KEY (id);

ALTER TABLE ONLY repodocs.repo_documents
    ADD CONSTRAINT repo_documents_pkey PRIMARY KEY (id);

ALTER TABLE ONLY repodocs.repo_documents
    ADD CONSTRAINT repo_documents_repository_id_path_key UNIQUE (repository_id, path);

ALTER TABLE ONLY repodocs.repo_scope_stats
    ADD CONSTRAINT repo_scope_stats_pkey PRIMARY KEY (scope_id);

ALTER TABLE ONLY repodocs.repo_syncs
    ADD CONSTRAINT repo_syncs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY repodocs.repo_term_stats
    ADD CONSTRAINT repo_term_stats_pkey PRIMARY KEY (scope_id, lexeme);

ALTER TABLE ONLY repodocs.repositories
    ADD CONSTRAINT repositories_host_owner_name_key UNIQUE (host, owner, name);

ALTER TABLE ONLY repodocs.repositories
    ADD CONSTRAINT repositories_pkey PRIMARY KEY (id);

ALTER TABLE ONLY repodocs.repository_grants
    ADD CONSTRAINT repository_grants_pkey PRIMARY KEY (repository_id, group_name);

ALTER TABLE ONLY repodocs.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

CREATE INDEX code_aliases_file ON repodocs.code_aliases USING btree (repository_id, path);

CREATE INDEX code_nodes_file ON repodocs.code_nodes USING btree (repository_id, path);

CREATE INDEX code_nodes_name ON repodocs.code_nodes USING btree (repository_id, name);

CREATE INDEX code_nodes_qualified_name ON repodocs.code_nodes USING btree (repository_id, qualified_name);

CREATE INDEX code_nodes_search_text ON repodocs.code_nodes USING gin (search_text);

CREATE INDEX repo_document_chunk_mentions_node ON repodocs.repo_document_chunk_mentions USING btree (code_node_id);

CREATE INDEX repo_document_chunks_repository ON repodocs.repo_document_chunks USING btree (repository_id);

CREATE INDEX repo_document_chunks_search_text ON repodocs.repo_document_chunks USING gin (search_text);

CREATE INDEX repo_documents_content_hash ON repodocs.repo_documents USING btree (content_hash);

CREATE INDEX repo_documents_slug ON repodocs.repo_documents USING btree (repository_id, slug);

CREATE UNIQUE INDEX repo_syncs_one_running ON repodocs.repo_syncs USING btree (repository_id) WHERE (status = ANY (ARRAY['queued'::text, 'running'::text]));

CREATE INDEX repo_syncs_repository ON repodocs.repo_syncs USING btree (repository_id, started_at DESC);

CREATE UNIQUE INDEX repositories_ref_any_case ON repodocs.repositories USING btree (lower(host), lower(owner), lower(name));

CREATE TRIGGER code_nodes_stats_delete AFTER DELETE ON repodocs.code_nodes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats('code_term_stats', 'code_scope_stats', 'repository_id');

CREATE TRIGGER code_nodes_stats_insert AFTER INSERT ON repodocs.code_nodes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats('code_term_stats', 'code_scope_stats', 'repository_id');

CREATE TRIGGER code_nodes_stats_update AFTER UPDATE ON repodocs.code_nodes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats_update('code_term_stats', 'code_scope_stats', 'repository_id');

CREATE TRIGGER repo_document_chunks_stats_delete AFTER DELETE ON repodocs.repo_document_chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats('repo_term_stats', 'repo_scope_stats', 'repository_id');

CREATE TRIGGER repo_document_chunks_stats_insert AFTER INSERT ON repodocs.repo_document_chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats('repo_term_stats', 'repo_scope_stats', 'repository_id');

CREATE TRIGGER repo_document_chunks_stats_update AFTER UPDATE ON repodocs.repo_document_chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION repodocs.term_stats_update('repo_term_stats', 'repo_scope_stats', 'repository_id');

ALTER TABLE ONLY repodocs.code_aliases
    ADD CONSTRAINT code_aliases_repository_id_path_fkey FOREIGN KEY (repository_id, path) REFERENCES repodocs.code_files(repository_id, path) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.code_files
    ADD CONSTRAINT code_files_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.code_nodes
    ADD CONSTRAINT code_nodes_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.code_nodes
    ADD CONSTRAINT code_nodes_repository_id_path_fkey FOREIGN KEY (repository_id, path) REFERENCES repodocs.code_files(repository_id, path) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_document_chunk_mentions
    ADD CONSTRAINT repo_document_chunk_mentions_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES repodocs.repo_document_chunks(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_document_chunk_mentions
    ADD CONSTRAINT repo_document_chunk_mentions_code_node_id_fkey FOREIGN KEY (code_node_id) REFERENCES repodocs.code_nodes(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_document_chunk_windows
    ADD CONSTRAINT repo_document_chunk_windows_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES repodocs.repo_document_chunks(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_document_chunks
    ADD CONSTRAINT repo_document_chunks_document_id_fkey FOREIGN KEY (document_id) REFERENCES repodocs.repo_documents(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_document_chunks
    ADD CONSTRAINT repo_document_chunks_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_documents
    ADD CONSTRAINT repo_documents_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repo_syncs
    ADD CONSTRAINT repo_syncs_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;

ALTER TABLE ONLY repodocs.repository_grants
    ADD CONSTRAINT repository_grants_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repodocs.repositories(id) ON DELETE CASCADE;
