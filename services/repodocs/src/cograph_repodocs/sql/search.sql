-- name: select_chunk_hits
SELECT k.id, k.document_id, k.repository_id, k.chunk_index, k.heading_path, k.heading_anchor, k.content,
       k.embedding_model, d.path, d.slug, d.kind, d.title AS document_title
FROM repo_document_chunks k
JOIN repo_documents d ON d.id = k.document_id
WHERE k.id = ANY($1::uuid[]);

-- name: select_node_hits
SELECT id, repository_id, name, qualified_name, kind, language, path, start_line, end_line, signature
FROM code_nodes WHERE id = ANY($1::uuid[]);

-- name: symbol_stream
-- Exact symbol matches, the most exact first: the qualified name as written, then the name,
-- then a dotted suffix of the qualified name (`Class.method`).
SELECT id FROM code_nodes
WHERE repository_id = ANY($1::uuid[])
  AND (qualified_name = ANY($2::text[]) OR name = ANY($2::text[])
       OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS suffix WHERE qualified_name LIKE '%.' || suffix))
ORDER BY qualified_name = ANY($2::text[]) DESC, name = ANY($2::text[]) DESC, length(qualified_name), id
LIMIT $4;
