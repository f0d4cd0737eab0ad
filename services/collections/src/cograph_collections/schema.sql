-- The collections schema as its migrations leave it (`make schema` writes it).
-- Migrations applied (version, name, sha256 of the SQL run, included files filled in):
--   0001 init 68480cfaf9dbc68620471977fb2a5563bf733d06a88eebf593c7e005aebee0d0
--   0002 ingestion e0a1e04d6fd3645cd1b030c12da64b2de0b03384d5a0d5ac463b7e88492c193b
--   0003 term_statistics b19f8b968d59a48302eb8c0a52ac04d4d6a058ea0c9e586ffce3921288ce5b00
--   0004 search_text_inline f7223d9095d7ad16cc5ea5026477b7cf98375a61ea90780654ed798e4fafa776
--   0005 link_written_key b5ebd5382325b84787cc94690cf445e52882484fbb675c02977fa0004b6749e6
--   0006 statistics_search_path 04200e30920d01de202de089bc5371e1ce16c755b18d9f332168b53477730d27
--   0007 content_hash_index a1b4c9ce624857973d207d770a2b243c8196b9c9125b0cb1774f8eac778076fb
--   0008 link_resolution_index 96aafcd3c2e5ab7a687a27519432aa173b374f19d4964ae1401e6aab08c24102
--   0009 folder_links 9880d9adf62e9caab33d5436b879b43dd330718489ec1cd985337823ab80993a
--   0010 folder_links_unbound 31357063de0aaa3d19efe5529746079bcb99e5b801ac46c192e432995ac38a93
--   0011 format_characters b876b104bf1fc6030fc11a0a45fd1d7cbbd5c7fac087273271d60ca336006068
--   0012 root_folder_links 615254c8f2a878bf62418da1d6a32f4b5b10e0833c3b91671bf20d3b91c29376
--   0013 statistics_lock_order ec789b01f2d8a499040b38e9e5b4348c767c91df2a7b294f9ce73544dc742865
--   0014 job_attempts a3096a05b46c9f78bfe0833675ecfaff7fd7e48ae86220049c65d0a90d05c98e
--   0015 chunk_windows 54e47d3f127edc3462fae0cc834d862ba60b024d3b419a3455344662f24e47a6

CREATE SCHEMA collections;

CREATE FUNCTION collections.heading_words(path text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN array_to_string(path, ' '::text);

CREATE FUNCTION collections.md_chunks_stats() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'collections', 'public'
    AS $$
DECLARE
    -- Inserted chunks add to the statistics, deleted ones subtract.
    changed text := CASE WHEN TG_OP = 'INSERT' THEN 'new_rows' ELSE 'old_rows' END;
    sign integer := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
    emptied_scopes uuid[];
    emptied_lexemes text[];
BEGIN
    -- The scope rows first, sorted: the lock that orders the writers of one collection.
    EXECUTE format(
        'INSERT INTO md_scope_stats AS s (scope_id, chunks, lexemes)
         SELECT collection_id, %s * count(*), %s * sum(length(search_text)) FROM %I
         GROUP BY 1 ORDER BY 1
         ON CONFLICT (scope_id) DO UPDATE
         SET chunks = s.chunks + excluded.chunks, lexemes = s.lexemes + excluded.lexemes', sign, sign, changed);
    -- Sorted upserts: concurrent writers of other scopes lock shared rows in the same order.
    EXECUTE format(
        'WITH counted AS (
             INSERT INTO md_term_stats AS t (scope_id, lexeme, df)
             SELECT c.collection_id, u.lexeme, %s * count(*) FROM %I c, unnest(c.search_text) AS u
             GROUP BY 1, 2 ORDER BY 1, 2
             ON CONFLICT (scope_id, lexeme) DO UPDATE SET df = t.df + excluded.df
             RETURNING scope_id, lexeme, df)
         SELECT array_agg(scope_id), array_agg(lexeme) FROM counted WHERE df = 0', sign, changed)
        INTO emptied_scopes, emptied_lexemes;
    IF emptied_lexemes IS NOT NULL THEN
        DELETE FROM md_term_stats t
        USING unnest(emptied_scopes, emptied_lexemes) AS e(scope_id, lexeme)
        WHERE t.scope_id = e.scope_id AND t.lexeme = e.lexeme AND t.df = 0;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION collections.searchable_text(source text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN regexp_replace(regexp_replace(source, '[\u200b\ufeff]'::text, ' '::text, 'g'::text), '[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'::text, ''::text, 'g'::text);

CREATE TABLE collections.md_chunk_windows (
    chunk_id uuid NOT NULL,
    window_index integer NOT NULL,
    collection_id uuid NOT NULL,
    embedding public.vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dim integer NOT NULL,
    CONSTRAINT md_chunk_windows_window_index_check CHECK ((window_index >= 1))
);

CREATE TABLE collections.md_chunks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    document_id uuid NOT NULL,
    collection_id uuid NOT NULL,
    chunk_index integer NOT NULL,
    heading_path text[] DEFAULT '{}'::text[] NOT NULL,
    heading_level integer DEFAULT 0 NOT NULL,
    section_anchor text DEFAULT ''::text NOT NULL,
    content text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    chunker_max_chars integer NOT NULL,
    chunker_min_chars integer NOT NULL,
    chunker_max_chunks integer NOT NULL,
    embedding public.vector,
    embedding_model text,
    embedding_dim integer,
    search_text tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('english'::regconfig, collections.searchable_text(collections.heading_words(heading_path))), 'B'::"char") || to_tsvector('english'::regconfig, collections.searchable_text(content)))) STORED,
    embedding_recipe text
);
ALTER TABLE ONLY collections.md_chunks ALTER COLUMN search_text SET STORAGE MAIN;

CREATE TABLE collections.md_collection_grants (
    collection_id uuid NOT NULL,
    group_name text NOT NULL,
    CONSTRAINT md_collection_grants_group_name_check CHECK (((length(group_name) >= 1) AND (length(group_name) <= 200)))
);

CREATE TABLE collections.md_collections (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    visibility text NOT NULL,
    owner text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT md_collections_description_check CHECK ((length(description) <= 5000)),
    CONSTRAINT md_collections_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT md_collections_visibility_check CHECK ((visibility = ANY (ARRAY['public'::text, 'private'::text, 'admin_only'::text])))
);

CREATE TABLE collections.md_documents (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    collection_id uuid NOT NULL,
    source_key text NOT NULL,
    normalised_key text NOT NULL,
    content text NOT NULL,
    content_hash text NOT NULL,
    size_bytes integer NOT NULL,
    title text,
    frontmatter jsonb DEFAULT '{}'::jsonb NOT NULL,
    structure jsonb DEFAULT '{}'::jsonb NOT NULL,
    word_count integer DEFAULT 0 NOT NULL,
    line_count integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    wiki_key text DEFAULT ''::text NOT NULL,
    wiki_name text GENERATED ALWAYS AS (split_part(wiki_key, '/'::text, '-1'::integer)) STORED
);

CREATE TABLE collections.md_jobs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    collection_id uuid NOT NULL,
    kind text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    error text,
    retry_of uuid,
    requested_by text DEFAULT ''::text NOT NULL,
    progress_done bigint DEFAULT 0 NOT NULL,
    progress_total bigint DEFAULT 0 NOT NULL,
    worker text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    heartbeat_at timestamp with time zone,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    not_before timestamp with time zone,
    interruptions jsonb DEFAULT '[]'::jsonb NOT NULL,
    CONSTRAINT md_jobs_check CHECK (((status = 'error'::text) = (error IS NOT NULL))),
    CONSTRAINT md_jobs_kind_check CHECK ((kind = ANY (ARRAY['upload'::text, 'embed'::text, 'resolve_links'::text]))),
    CONSTRAINT md_jobs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'success'::text, 'error'::text])))
);

CREATE TABLE collections.md_links (
    id bigint NOT NULL,
    document_id uuid NOT NULL,
    collection_id uuid NOT NULL,
    ordinal integer NOT NULL,
    text text NOT NULL,
    href text NOT NULL,
    line integer NOT NULL,
    link_type text NOT NULL,
    anchor text,
    target_key text,
    target_document_id uuid,
    written_key text,
    CONSTRAINT md_links_link_type_check CHECK ((link_type = ANY (ARRAY['absolute'::text, 'anchor'::text, 'markdown'::text, 'relative'::text, 'wiki'::text])))
);

ALTER TABLE collections.md_links ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME collections.md_links_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE collections.md_scope_stats (
    scope_id uuid NOT NULL,
    chunks bigint NOT NULL,
    lexemes bigint NOT NULL
);

CREATE TABLE collections.md_term_stats (
    scope_id uuid NOT NULL,
    lexeme text NOT NULL,
    df bigint NOT NULL
);

CREATE TABLE collections.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY collections.md_chunk_windows
    ADD CONSTRAINT md_chunk_windows_pkey PRIMARY KEY (chunk_id, window_index);

ALTER TABLE ONLY collections.md_chunks
    ADD CONSTRAINT md_chunks_document_id_chunk_index_key UNIQUE (document_id, chunk_index);

ALTER TABLE ONLY collections.md_chunks
    ADD CONSTRAINT md_chunks_pkey PRIMARY KEY (id);

ALTER TABLE ONLY collections.md_collection_grants
    ADD CONSTRAINT md_collection_grants_pkey PRIMARY KEY (collection_id, group_name);

ALTER TABLE ONLY collections.md_collections
    ADD CONSTRAINT md_collections_pkey PRIMARY KEY (id);

ALTER TABLE ONLY collections.md_documents
    ADD CONSTRAINT md_documents_collection_id_source_key_key UNIQUE (collection_id, source_key);

ALTER TABLE ONLY collections.md_documents
    ADD CONSTRAINT md_documents_pkey PRIMARY KEY (id);

ALTER TABLE ONLY collections.md_jobs
    ADD CONSTRAINT md_jobs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY collections.md_links
    ADD CONSTRAINT md_links_document_id_ordinal_key UNIQUE (document_id, ordinal);

ALTER TABLE ONLY collections.md_links
    ADD CONSTRAINT md_links_pkey PRIMARY KEY (id);

ALTER TABLE ONLY collections.md_scope_stats
    ADD CONSTRAINT md_scope_stats_pkey PRIMARY KEY (scope_id);

ALTER TABLE ONLY collections.md_term_stats
    ADD CONSTRAINT md_term_stats_pkey PRIMARY KEY (scope_id, lexeme);

ALTER TABLE ONLY collections.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

CREATE INDEX md_chunks_collection ON collections.md_chunks USING btree (collection_id);

CREATE INDEX md_chunks_search_text ON collections.md_chunks USING gin (search_text);

CREATE INDEX md_chunks_unembedded ON collections.md_chunks USING btree (collection_id) WHERE (embedding IS NULL);

CREATE INDEX md_documents_content_hash ON collections.md_documents USING btree (content_hash);

CREATE INDEX md_documents_normalised_key ON collections.md_documents USING btree (collection_id, normalised_key);

CREATE INDEX md_documents_wiki_name ON collections.md_documents USING btree (collection_id, wiki_name);

CREATE INDEX md_jobs_collection ON collections.md_jobs USING btree (collection_id, created_at DESC);

CREATE UNIQUE INDEX md_jobs_one_queued ON collections.md_jobs USING btree (collection_id, kind, COALESCE((payload ->> 'all'::text), 'false'::text)) WHERE (status = 'queued'::text);

CREATE INDEX md_jobs_queue ON collections.md_jobs USING btree (created_at) WHERE (status = 'queued'::text);

CREATE INDEX md_jobs_running ON collections.md_jobs USING btree (heartbeat_at) WHERE (status = 'running'::text);

CREATE INDEX md_links_target ON collections.md_links USING btree (target_document_id);

CREATE INDEX md_links_unresolved ON collections.md_links USING btree (collection_id, target_key) WHERE (target_document_id IS NULL);

CREATE TRIGGER md_chunks_stats_delete AFTER DELETE ON collections.md_chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION collections.md_chunks_stats();

CREATE TRIGGER md_chunks_stats_insert AFTER INSERT ON collections.md_chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION collections.md_chunks_stats();

ALTER TABLE ONLY collections.md_chunk_windows
    ADD CONSTRAINT md_chunk_windows_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES collections.md_chunks(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_chunks
    ADD CONSTRAINT md_chunks_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES collections.md_collections(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_chunks
    ADD CONSTRAINT md_chunks_document_id_fkey FOREIGN KEY (document_id) REFERENCES collections.md_documents(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_collection_grants
    ADD CONSTRAINT md_collection_grants_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES collections.md_collections(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_documents
    ADD CONSTRAINT md_documents_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES collections.md_collections(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_jobs
    ADD CONSTRAINT md_jobs_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES collections.md_collections(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_jobs
    ADD CONSTRAINT md_jobs_retry_of_fkey FOREIGN KEY (retry_of) REFERENCES collections.md_jobs(id) ON DELETE SET NULL;

ALTER TABLE ONLY collections.md_links
    ADD CONSTRAINT md_links_collection_id_fkey FOREIGN KEY (collection_id) REFERENCES collections.md_collections(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_links
    ADD CONSTRAINT md_links_document_id_fkey FOREIGN KEY (document_id) REFERENCES collections.md_documents(id) ON DELETE CASCADE;

ALTER TABLE ONLY collections.md_links
    ADD CONSTRAINT md_links_target_document_id_fkey FOREIGN KEY (target_document_id) REFERENCES collections.md_documents(id) ON DELETE SET NULL;
