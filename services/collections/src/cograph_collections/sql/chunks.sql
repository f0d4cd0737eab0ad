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
-- What needs a vector: none yet, or one of another model or dimension ($3, $4).
SELECT count(*) FROM md_chunks
WHERE collection_id = $1
  AND ($2 OR embedding IS NULL OR embedding_model IS DISTINCT FROM $3 OR embedding_dim IS DISTINCT FROM $4);

-- name: select_chunks_to_embed
-- Keyset pages: rows embedded meanwhile drop out, the cursor never skips one.
SELECT id, content FROM md_chunks
WHERE collection_id = $1
  AND ($2 OR embedding IS NULL OR embedding_model IS DISTINCT FROM $3 OR embedding_dim IS DISTINCT FROM $4)
  AND id > $5
ORDER BY id
LIMIT $6;

-- name: lock_chunks_for_vectors
-- A page's rows, in id order, or LockNotAvailable at once if a writer holds one (see
-- ChunkEmbedder._write). NO KEY UPDATE: the lock an UPDATE of a non-key column takes anyway.
SELECT 1 FROM md_chunks WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE NOWAIT;

-- name: update_embedding
UPDATE md_chunks SET embedding = $2, embedding_model = $3, embedding_dim = $4 WHERE id = $1;

-- name: embed_status
-- A vector is current when it came from the configured model at its dimension ($2, $3): the
-- same model name asked for another dimension makes vectors the dense stream cannot compare.
SELECT count(*) AS total,
       count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_model = $2 AND embedding_dim = $3) AS embedded,
       count(*) FILTER (WHERE embedding IS NULL) AS pending,
       count(*) FILTER (WHERE embedding IS NOT NULL
                          AND (embedding_model IS DISTINCT FROM $2 OR embedding_dim IS DISTINCT FROM $3)) AS stale,
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
