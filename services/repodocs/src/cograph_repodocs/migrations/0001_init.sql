-- Repository documents and code symbols: the service's own schema.

CREATE TABLE repositories (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    host text NOT NULL,
    owner text NOT NULL,
    name text NOT NULL,
    clone_url text,
    checkout_path text,
    visibility text NOT NULL CHECK (visibility IN ('public', 'private')),
    owner_subject text NOT NULL,
    default_branch text NOT NULL DEFAULT '',
    web_url text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (host, owner, name),
    CHECK ((clone_url IS NULL) <> (checkout_path IS NULL))
);

CREATE TABLE repository_grants (
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    group_name text NOT NULL,
    PRIMARY KEY (repository_id, group_name)
);

CREATE TABLE repo_syncs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    status text NOT NULL CHECK (status IN ('queued', 'running', 'success', 'error')),
    trigger text NOT NULL CHECK (trigger IN ('manual', 'schedule', 'registration')),
    commit_sha text,
    discovered_files bigint NOT NULL DEFAULT 0,
    indexed_documents bigint NOT NULL DEFAULT 0,
    indexed_chunks bigint NOT NULL DEFAULT 0,
    unchanged_documents bigint NOT NULL DEFAULT 0,
    deleted_documents bigint NOT NULL DEFAULT 0,
    replaced_files bigint NOT NULL DEFAULT 0,
    code_nodes bigint NOT NULL DEFAULT 0,
    mentions bigint NOT NULL DEFAULT 0,
    skipped jsonb NOT NULL DEFAULT '[]',
    error text,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX repo_syncs_repository ON repo_syncs (repository_id, started_at DESC);
-- Two syncs of one repository never run at once.
CREATE UNIQUE INDEX repo_syncs_one_running ON repo_syncs (repository_id) WHERE status IN ('queued', 'running');

CREATE TABLE code_files (
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    path text NOT NULL,
    content_hash text NOT NULL,
    PRIMARY KEY (repository_id, path)
);

CREATE TABLE code_nodes (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    path text NOT NULL,
    name text NOT NULL,
    qualified_name text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('function', 'class', 'method', 'type', 'interface', 'constant')),
    language text NOT NULL CHECK (language IN ('python', 'go', 'typescript', 'javascript')),
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    signature text NOT NULL DEFAULT '',
    embedding vector,
    embedding_model text,
    embedding_dim integer,
    FOREIGN KEY (repository_id, path) REFERENCES code_files ON DELETE CASCADE
);
CREATE INDEX code_nodes_name ON code_nodes (repository_id, name);
CREATE INDEX code_nodes_qualified_name ON code_nodes (repository_id, qualified_name);

CREATE TABLE repo_documents (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    path text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('repo_doc', 'workflow', 'example', 'test', 'config')),
    title text NOT NULL,
    slug text NOT NULL,
    content text NOT NULL,
    content_hash text NOT NULL,
    size_bytes integer NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repository_id, path)
);
CREATE INDEX repo_documents_slug ON repo_documents (repository_id, slug);

-- array_to_string is only STABLE; a generated column needs an IMMUTABLE expression.
CREATE FUNCTION heading_words(path text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN array_to_string(path, ' ');

CREATE TABLE repo_document_chunks (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    document_id uuid NOT NULL REFERENCES repo_documents ON DELETE CASCADE,
    repository_id uuid NOT NULL REFERENCES repositories ON DELETE CASCADE,
    chunk_index integer NOT NULL,
    heading_path text[] NOT NULL DEFAULT '{}',
    heading_anchor text NOT NULL DEFAULT '',
    content text NOT NULL,
    chunker_max_words integer NOT NULL,
    chunker_overlap_words integer NOT NULL,
    embedding vector,
    embedding_model text,
    embedding_dim integer,
    search_text tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', heading_words(heading_path)), 'B')
        || to_tsvector('english', content)
    ) STORED,
    UNIQUE (document_id, chunk_index)
);
CREATE INDEX repo_document_chunks_repository ON repo_document_chunks (repository_id);
CREATE INDEX repo_document_chunks_search_text ON repo_document_chunks USING gin (search_text);

CREATE TABLE repo_document_chunk_mentions (
    chunk_id uuid NOT NULL REFERENCES repo_document_chunks ON DELETE CASCADE,
    code_node_id uuid NOT NULL REFERENCES code_nodes ON DELETE CASCADE,
    form text NOT NULL CHECK (form IN ('backtick', 'dotted', 'call')),
    mention text NOT NULL,
    PRIMARY KEY (chunk_id, code_node_id, form)
);
CREATE INDEX repo_document_chunk_mentions_node ON repo_document_chunk_mentions (code_node_id);
