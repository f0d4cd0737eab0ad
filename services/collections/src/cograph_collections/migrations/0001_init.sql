-- Markdown collections: the service's own schema (search_path is set by the migrator).

CREATE TABLE md_collections (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    visibility text NOT NULL CHECK (visibility IN ('public', 'private', 'admin_only')),
    owner text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE md_collection_grants (
    collection_id uuid NOT NULL REFERENCES md_collections ON DELETE CASCADE,
    group_name text NOT NULL CHECK (length(group_name) BETWEEN 1 AND 200),
    PRIMARY KEY (collection_id, group_name)
);

CREATE TABLE md_documents (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection_id uuid NOT NULL REFERENCES md_collections ON DELETE CASCADE,
    source_key text NOT NULL,
    -- The key links resolve against: source_key normalised (see markdown/links.py).
    normalised_key text NOT NULL,
    content text NOT NULL,
    content_hash text NOT NULL,
    size_bytes integer NOT NULL,
    title text,
    frontmatter jsonb NOT NULL DEFAULT '{}',
    -- heading_tree, code_blocks, tables as parsed.
    structure jsonb NOT NULL DEFAULT '{}',
    word_count integer NOT NULL DEFAULT 0,
    line_count integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (collection_id, source_key)
);
CREATE INDEX md_documents_normalised_key ON md_documents (collection_id, normalised_key);

-- array_to_string is only STABLE; a generated column needs an IMMUTABLE expression.
CREATE FUNCTION heading_words(path text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN array_to_string(path, ' ');

CREATE TABLE md_chunks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    document_id uuid NOT NULL REFERENCES md_documents ON DELETE CASCADE,
    collection_id uuid NOT NULL REFERENCES md_collections ON DELETE CASCADE,
    chunk_index integer NOT NULL,
    heading_path text[] NOT NULL DEFAULT '{}',
    heading_level integer NOT NULL DEFAULT 0,
    section_anchor text NOT NULL DEFAULT '',
    content text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    -- The chunker parameters the chunk was built with, so older chunks are found.
    chunker_max_chars integer NOT NULL,
    chunker_min_chars integer NOT NULL,
    chunker_max_chunks integer NOT NULL,
    -- Untyped so a model change needs no migration; the HNSW index is per dimension.
    embedding vector,
    embedding_model text,
    embedding_dim integer,
    search_text tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', heading_words(heading_path)), 'B')
        || to_tsvector('english', content)
    ) STORED,
    UNIQUE (document_id, chunk_index)
);
CREATE INDEX md_chunks_collection ON md_chunks (collection_id);
CREATE INDEX md_chunks_search_text ON md_chunks USING gin (search_text);
CREATE INDEX md_chunks_unembedded ON md_chunks (collection_id) WHERE embedding IS NULL;

CREATE TABLE md_links (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id uuid NOT NULL REFERENCES md_documents ON DELETE CASCADE,
    collection_id uuid NOT NULL REFERENCES md_collections ON DELETE CASCADE,
    ordinal integer NOT NULL,
    text text NOT NULL,
    href text NOT NULL,
    line integer NOT NULL,
    link_type text NOT NULL CHECK (link_type IN ('absolute', 'anchor', 'markdown', 'relative', 'wiki')),
    anchor text,
    -- Normalised path the href points at inside the collection; NULL when it cannot.
    target_key text,
    target_document_id uuid REFERENCES md_documents ON DELETE SET NULL,
    UNIQUE (document_id, ordinal)
);
CREATE INDEX md_links_unresolved ON md_links (collection_id, target_key) WHERE target_document_id IS NULL;
CREATE INDEX md_links_target ON md_links (target_document_id);

CREATE TABLE md_jobs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection_id uuid NOT NULL REFERENCES md_collections ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('upload', 'embed', 'resolve_links')),
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'success', 'error')),
    error text,
    retry_of uuid REFERENCES md_jobs ON DELETE SET NULL,
    requested_by text NOT NULL DEFAULT '',
    progress_done bigint NOT NULL DEFAULT 0,
    progress_total bigint NOT NULL DEFAULT 0,
    worker text,
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    heartbeat_at timestamptz,
    CHECK ((status = 'error') = (error IS NOT NULL))
);
CREATE INDEX md_jobs_queue ON md_jobs (created_at) WHERE status = 'queued';
CREATE INDEX md_jobs_running ON md_jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX md_jobs_collection ON md_jobs (collection_id, created_at DESC);
