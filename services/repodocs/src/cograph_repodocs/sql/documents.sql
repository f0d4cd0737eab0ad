-- name: select_document_states
-- What a sync compares the checkout with. `stale`: some chunk was embedded by another model ($2), or by
-- this model at another dimension ($3: a provider told to send fewer `dimensions`) or by another recipe
-- ($6: other text around the chunk's), or built with other chunker parameters, so the document is
-- indexed again although its text did not change.
-- Only existing chunks count: the LEFT JOIN's all-NULL row of a document without chunks (an empty file)
-- would otherwise make it stale, and so re-indexed, on every sync.
SELECT d.id, d.path, d.content_hash, d.kind, d.slug,
       coalesce(bool_or(k.embedding_model IS DISTINCT FROM $2 OR k.embedding_dim IS DISTINCT FROM $3
                        OR k.embedding_recipe IS DISTINCT FROM $6
                        OR k.chunker_max_words <> $4 OR k.chunker_overlap_words <> $5)
                FILTER (WHERE k.id IS NOT NULL), false) AS stale
FROM repo_documents d
LEFT JOIN repo_document_chunks k ON k.document_id = d.id
WHERE d.repository_id = $1
GROUP BY d.id;

-- name: delete_documents
-- Chunks and their mentions go with them (ON DELETE CASCADE).
DELETE FROM repo_documents WHERE id = ANY($1::uuid[]);

-- name: delete_chunks_of_documents
DELETE FROM repo_document_chunks WHERE document_id = ANY($1::uuid[]);

-- name: update_document
UPDATE repo_documents
SET kind = $2, title = $3, content = $4, content_hash = $5, size_bytes = $6, indexed_at = now()
WHERE id = $1;

-- name: update_slugs
UPDATE repo_documents d SET slug = u.slug
FROM unnest($1::uuid[], $2::text[]) AS u (id, slug)
WHERE d.id = u.id;

-- name: delete_mentions_of_repository
DELETE FROM repo_document_chunk_mentions m
USING repo_document_chunks k
WHERE k.id = m.chunk_id AND k.repository_id = $1;

-- name: select_chunk_texts
SELECT k.id, d.path, k.content, k.chunk_index, k.heading_path
FROM repo_document_chunks k
JOIN repo_documents d ON d.id = k.document_id
WHERE k.repository_id = $1
ORDER BY d.path, k.chunk_index;

-- name: count_mentions
SELECT count(*)
FROM repo_document_chunk_mentions m
JOIN repo_document_chunks k ON k.id = m.chunk_id
WHERE k.repository_id = $1;

-- name: select_documents
SELECT d.id, d.repository_id, d.path, d.kind, d.title, d.slug, d.content_hash, d.indexed_at,
       (SELECT count(*) FROM repo_document_chunks k WHERE k.document_id = d.id) AS chunk_count
FROM repo_documents d
WHERE d.repository_id = $1 AND (cardinality($2::text[]) = 0 OR d.kind = ANY($2::text[]))
  AND ($4::text IS NULL OR d.path > $4::text)
ORDER BY d.path
LIMIT $3;

-- name: select_documents_by_content
-- In every repository ($1 null), or only in those of $1.
SELECT d.content_hash, d.repository_id, r.host || '/' || r.owner || '/' || r.name AS repository,
       d.id AS document_id, d.path
FROM repo_documents d JOIN repositories r ON r.id = d.repository_id
WHERE ($1::uuid[] IS NULL OR d.repository_id = ANY($1::uuid[])) AND d.content_hash = ANY($2::text[])
ORDER BY d.content_hash, repository, d.path;

-- name: select_document
SELECT d.id, d.repository_id, d.path, d.kind, d.title, d.slug, d.content_hash, d.indexed_at, d.content,
       (SELECT count(*) FROM repo_document_chunks k WHERE k.document_id = d.id) AS chunk_count
FROM repo_documents d
WHERE d.repository_id = $1 AND d.id = $2;

-- name: select_document_by_slug
SELECT d.id, d.repository_id, d.path, d.kind, d.title, d.slug, d.content_hash, d.indexed_at, d.content,
       (SELECT count(*) FROM repo_document_chunks k WHERE k.document_id = d.id) AS chunk_count
FROM repo_documents d
WHERE d.repository_id = $1 AND d.slug = $2;

-- name: select_pages
-- The docs reader's pages: the repository's prose (Repo Doc), not its configs, workflows, examples or tests.
SELECT id, path, title, slug FROM repo_documents
WHERE repository_id = $1 AND kind = 'repo_doc'
ORDER BY path;

-- name: select_chunk
SELECT k.id, k.document_id, k.repository_id, k.chunk_index, k.heading_path, k.heading_anchor, k.content,
       k.embedding_model, d.path, d.slug, d.kind, d.title AS document_title
FROM repo_document_chunks k
JOIN repo_documents d ON d.id = k.document_id
WHERE k.repository_id = $1 AND k.id = $2;

-- name: select_related_chunks
-- Up to $3 chunks per code node. Prose (Repo Doc) before tests and examples, then the most deliberate
-- form of mention (a reference that states its target, a backticked name, a call, then a dotted
-- name), then path order.
SELECT code_node_id, form, reason, id, document_id, repository_id, chunk_index, heading_path,
       heading_anchor, content, embedding_model, path, slug, kind, document_title
FROM (
    SELECT m.code_node_id, m.form, m.reason, k.id, k.document_id, k.repository_id, k.chunk_index, k.heading_path,
           k.heading_anchor, k.content, k.embedding_model, d.path, d.slug, d.kind, d.title AS document_title,
           row_number() OVER (
               PARTITION BY m.code_node_id
               ORDER BY d.kind <> 'repo_doc',
                        CASE m.form WHEN 'reference' THEN 0 WHEN 'backtick' THEN 1 WHEN 'call' THEN 2 ELSE 3 END,
                        d.path, k.chunk_index, k.id
           ) AS rank
    FROM repo_document_chunk_mentions m
    JOIN repo_document_chunks k ON k.id = m.chunk_id
    JOIN repo_documents d ON d.id = k.document_id
    WHERE m.code_node_id = ANY($1::uuid[]) AND k.repository_id = ANY($2::uuid[])
) ranked
WHERE rank <= $3
ORDER BY code_node_id, rank;
