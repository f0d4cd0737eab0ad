-- name: select_hashes
SELECT source_key, id, content_hash FROM md_documents
WHERE collection_id = $1 AND source_key = ANY($2::text[]);

-- name: lock_collection
-- Held until the transaction ends: the collection cannot be deleted under a write into it (its
-- row FOR KEY SHARE, which still lets its name, description or visibility change), and writers
-- share their turn (an advisory lock, taken first: PostgreSQL queues a shared request behind a
-- waiting exclusive one there, where a row lock would let the sharers pass it for as long as
-- their transactions overlap).
SELECT true FROM pg_advisory_xact_lock_shared(hashtext('md_collection writes'), hashtext($1::uuid::text)),
    md_collections
WHERE id = $1 FOR KEY SHARE OF md_collections;

-- name: lock_collection_alone
-- As lock_collection, and no other transaction holds either lock meanwhile.
SELECT true FROM pg_advisory_xact_lock(hashtext('md_collection writes'), hashtext($1::uuid::text)),
    md_collections
WHERE id = $1 FOR KEY SHARE OF md_collections;

-- name: lock_document
SELECT id, content_hash FROM md_documents
WHERE collection_id = $1 AND source_key = $2
FOR UPDATE;

-- name: insert_document
INSERT INTO md_documents (
    collection_id, source_key, normalised_key, wiki_key, content, content_hash, size_bytes, title,
    frontmatter, structure, word_count, line_count)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (collection_id, source_key) DO NOTHING
RETURNING id;

-- name: update_document
UPDATE md_documents
SET normalised_key = $2, wiki_key = $3, content = $4, content_hash = $5, size_bytes = $6, title = $7,
    frontmatter = $8, structure = $9, word_count = $10, line_count = $11, updated_at = now()
WHERE id = $1;

-- name: delete_chunks
DELETE FROM md_chunks WHERE document_id = $1;

-- name: delete_links
DELETE FROM md_links WHERE document_id = $1;

-- name: select_document
SELECT d.id, d.collection_id, d.source_key, d.title, d.content_hash, d.size_bytes, d.content, d.frontmatter,
       d.structure, d.word_count, d.line_count, d.created_at, d.updated_at,
       (SELECT count(*) FROM md_chunks k WHERE k.document_id = d.id) AS chunk_count
FROM md_documents d
WHERE d.collection_id = $1 AND d.id = $2;

-- name: select_document_summaries
SELECT d.id, d.collection_id, d.source_key, d.title, d.content_hash, d.size_bytes, d.created_at, d.updated_at,
       (SELECT count(*) FROM md_chunks k WHERE k.document_id = d.id) AS chunk_count
FROM md_documents d
WHERE d.collection_id = $1 AND ($3::text IS NULL OR d.source_key > $3::text)
ORDER BY d.source_key
LIMIT $2;

-- name: select_documents_by_content
-- In every collection ($1 null), or only in those of $1.
SELECT d.content_hash, d.collection_id, c.name AS collection_name, d.id AS document_id, d.source_key
FROM md_documents d JOIN md_collections c ON c.id = d.collection_id
WHERE ($1::uuid[] IS NULL OR d.collection_id = ANY($1::uuid[])) AND d.content_hash = ANY($2::text[])
ORDER BY d.content_hash, c.name, d.collection_id, d.source_key;

-- name: delete_document
DELETE FROM md_documents WHERE collection_id = $1 AND id = $2 RETURNING id;

-- name: select_links
SELECT text, href, line, link_type, anchor, target_document_id
FROM md_links WHERE document_id = $1 ORDER BY ordinal;

-- name: resolve_links
-- Bind each link of the collection to its best document of the same collection:
-- markdown/relative/anchor links by normalised path (an extensionless path also finds
-- its .md/.mdx; a folder path, ending in '/', its index or README page, the root's key being
-- '/' alone), resolved against the linking document first, then as written from the root
-- (written_key); wiki links by note name, the shortest matching path winning. Every link is
-- ranked again, so that where it points never depends on the order documents arrived in.
-- The best document is found once per distinct target (thousands of links may name one
-- note), each candidate lookup an index probe; only changed bindings are written.
WITH targets AS (
    SELECT DISTINCT link_type = 'wiki' AS wiki, target_key, coalesce(written_key, '') AS written_key
    FROM md_links
    WHERE collection_id = $1 AND target_key IS NOT NULL
),
best AS (
    SELECT DISTINCT ON (t.wiki, t.target_key, t.written_key) t.wiki, t.target_key, t.written_key,
           d.id AS document_id
    FROM targets t
    CROSS JOIN LATERAL (
        SELECT d.id, d.normalised_key, false AS fallback, 1::bigint AS preference FROM md_documents d
        WHERE t.wiki AND d.collection_id = $1
          AND d.wiki_name = split_part(t.target_key, '/', -1)
          AND (d.wiki_key = t.target_key OR right(d.wiki_key, length(t.target_key) + 1) = '/' || t.target_key)
        UNION ALL
        SELECT d.id, d.normalised_key, k.fallback, c.preference
        FROM (VALUES (t.target_key, false), (nullif(t.written_key, ''), true)) AS k (key, fallback)
        CROSS JOIN LATERAL unnest(
            CASE WHEN right(k.key, 1) = '/'
                 THEN ARRAY[ltrim(k.key, '/') || 'index.md', ltrim(k.key, '/') || 'index.mdx',
                            ltrim(k.key, '/') || 'README.md', ltrim(k.key, '/') || 'readme.md']
                 ELSE ARRAY[k.key, k.key || '.md', k.key || '.mdx'] END
        ) WITH ORDINALITY AS c (key, preference)
        JOIN md_documents d ON d.collection_id = $1 AND d.normalised_key = c.key
        WHERE NOT t.wiki AND k.key IS NOT NULL
    ) d
    -- Candidates in the order listed; equal wiki matches by byte order, whatever the collation.
    ORDER BY t.wiki, t.target_key, t.written_key, d.fallback, d.preference, length(d.normalised_key),
             d.normalised_key COLLATE "C"
)
UPDATE md_links l SET target_document_id = b.document_id
FROM best b
WHERE l.collection_id = $1 AND (l.link_type = 'wiki') = b.wiki AND l.target_key = b.target_key
  AND coalesce(l.written_key, '') = b.written_key
  AND l.target_document_id IS DISTINCT FROM b.document_id;

-- name: count_unresolved_links
SELECT count(*) FROM md_links
WHERE collection_id = $1 AND target_document_id IS NULL AND target_key IS NOT NULL;

-- name: select_outdated_documents
SELECT DISTINCT d.id, d.source_key, d.content, d.content_hash
FROM md_documents d JOIN md_chunks k ON k.document_id = d.id
WHERE d.collection_id = $1
  AND (k.chunker_max_chars, k.chunker_min_chars, k.chunker_max_chunks) <> ($2, $3, $4);
