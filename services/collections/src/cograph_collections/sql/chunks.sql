-- name: select_chunks
SELECT k.id, k.document_id, k.collection_id, k.chunk_index, k.heading_path, k.heading_level, k.section_anchor,
       k.content, k.start_line, k.end_line, k.embedding_model, k.chunker_max_chars, k.chunker_min_chars,
       k.chunker_max_chunks,
       d.source_key
FROM md_chunks k JOIN md_documents d ON d.id = k.document_id
WHERE k.collection_id = $1 AND k.document_id = $2 AND ($4::text IS NULL OR k.chunk_index > $4::text::integer)
ORDER BY k.chunk_index
LIMIT $3;

-- name: select_chunk
SELECT k.id, k.document_id, k.collection_id, k.chunk_index, k.heading_path, k.heading_level, k.section_anchor,
       k.content, k.start_line, k.end_line, k.embedding_model, k.chunker_max_chars, k.chunker_min_chars,
       k.chunker_max_chunks,
       d.source_key
FROM md_chunks k JOIN md_documents d ON d.id = k.document_id
WHERE k.collection_id = $1 AND k.id = $2;

-- name: count_chunks_to_embed
-- What needs a vector: none yet, or one of another model, dimension or recipe ($3, $4, $5).
SELECT count(*) FROM md_chunks
WHERE collection_id = $1
  AND ($2 OR embedding IS NULL OR embedding_model IS DISTINCT FROM $3 OR embedding_dim IS DISTINCT FROM $4
       OR embedding_recipe IS DISTINCT FROM $5);

-- name: select_chunks_to_embed
-- Keyset pages: rows embedded meanwhile drop out, the cursor never skips one. With what the
-- recipe embeds beside the content: the heading path and the document's title or file name.
SELECT k.id, k.content, k.heading_path, d.title, d.source_key
FROM md_chunks k JOIN md_documents d ON d.id = k.document_id
WHERE k.collection_id = $1
  AND ($2 OR k.embedding IS NULL OR k.embedding_model IS DISTINCT FROM $3 OR k.embedding_dim IS DISTINCT FROM $4
       OR k.embedding_recipe IS DISTINCT FROM $5)
  AND k.id > $6
ORDER BY k.id
LIMIT $7;

-- name: lock_chunks_for_vectors
-- A page's rows, in id order, or LockNotAvailable at once if a writer holds one (see
-- ChunkEmbedder._write). NO KEY UPDATE: the lock an UPDATE of a non-key column takes anyway.
SELECT 1 FROM md_chunks WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE NOWAIT;

-- name: update_embedding
UPDATE md_chunks SET embedding = $2, embedding_model = $3, embedding_dim = $4, embedding_recipe = $5
WHERE id = $1;

-- name: delete_windows
DELETE FROM md_chunk_windows WHERE chunk_id = ANY($1::uuid[]);

-- name: insert_window
INSERT INTO md_chunk_windows (chunk_id, window_index, collection_id, embedding, embedding_model, embedding_dim)
SELECT id, $2, collection_id, $3, $4, $5 FROM md_chunks WHERE id = $1;

-- name: embed_status
-- A vector is current when it came from the configured model at its dimension ($2, $3), by the
-- current recipe ($7): the same model name asked for another dimension makes vectors the dense
-- stream cannot compare, another recipe vectors of other text.
SELECT count(*) AS total,
       count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_model = $2 AND embedding_dim = $3
                          AND embedding_recipe = $7) AS embedded,
       count(*) FILTER (WHERE embedding IS NULL) AS pending,
       count(*) FILTER (WHERE embedding IS NOT NULL
                          AND (embedding_model IS DISTINCT FROM $2 OR embedding_dim IS DISTINCT FROM $3
                               OR embedding_recipe IS DISTINCT FROM $7)) AS stale,
       count(*) FILTER (WHERE (chunker_max_chars, chunker_min_chars, chunker_max_chunks) <> ($4, $5, $6))
           AS outdated_chunker
FROM md_chunks WHERE collection_id = $1;

-- name: select_filler_chunks
-- Chunks of the scope in a fixed order, to fill a route's collections up to its count.
SELECT k.id FROM md_chunks k JOIN md_documents d ON d.id = k.document_id
WHERE k.collection_id = ANY($1::uuid[]) AND NOT k.id = ANY($2::uuid[])
ORDER BY d.updated_at DESC, d.id, k.chunk_index
LIMIT $3;

-- name: select_hits
SELECT k.id, k.document_id, k.collection_id, k.chunk_index, k.heading_path, k.heading_level, k.section_anchor,
       k.content, k.start_line, k.end_line, k.embedding_model, k.chunker_max_chars, k.chunker_min_chars,
       k.chunker_max_chunks,
       d.source_key, d.title
FROM md_chunks k JOIN md_documents d ON d.id = k.document_id
WHERE k.id = ANY($1::uuid[]);
