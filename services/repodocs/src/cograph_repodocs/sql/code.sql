-- name: select_code_files
SELECT path, content_hash FROM code_files WHERE repository_id = $1;

-- name: delete_code_files
-- Their nodes, and the mentions of those nodes, go with them (ON DELETE CASCADE).
DELETE FROM code_files WHERE repository_id = $1 AND path = ANY($2::text[]);

-- name: upsert_code_files
INSERT INTO code_files (repository_id, path, content_hash)
SELECT $1, u.path, u.content_hash FROM unnest($2::text[], $3::text[]) AS u (path, content_hash)
ON CONFLICT (repository_id, path) DO UPDATE SET content_hash = excluded.content_hash;

-- name: select_nodes_of_files
SELECT id, path, name, qualified_name, kind, signature, start_line, embedding_model, embedding_dim
FROM code_nodes
WHERE repository_id = $1 AND path = ANY($2::text[])
ORDER BY path, start_line, id;

-- name: select_nodes_to_embed
-- Nodes of the embedded kinds ($4) whose vector is missing or came from another model ($2), or
-- from this model at another dimension ($3): the dense stream would never find them.
SELECT id, path, name, qualified_name, kind, signature, start_line, embedding_model, embedding_dim
FROM code_nodes
WHERE repository_id = $1 AND kind = ANY($4::text[])
  AND (embedding_model IS DISTINCT FROM $2 OR embedding_dim IS DISTINCT FROM $3)
ORDER BY path, start_line, id;

-- name: delete_nodes
DELETE FROM code_nodes WHERE id = ANY($1::uuid[]);

-- name: update_node
-- A symbol that survived an edit of its file keeps its id, and with it the doc chunks that mention it.
UPDATE code_nodes
SET name = $2, language = $3, start_line = $4, end_line = $5, signature = $6
WHERE id = $1;

-- name: update_node_embedding
UPDATE code_nodes SET embedding = $2, embedding_model = $3, embedding_dim = $4 WHERE id = $1;

-- name: select_symbol_index
SELECT id, name, qualified_name, path, kind FROM code_nodes WHERE repository_id = $1;

-- name: select_nodes_in_scope
SELECT id FROM code_nodes WHERE id = ANY($1::uuid[]) AND repository_id = ANY($2::uuid[]);

-- name: count_nodes
SELECT count(*) FROM code_nodes WHERE repository_id = $1;

-- name: select_nodes_mentioned_by_document
-- The code a docs page discusses, in the order the page first mentions it, each with its most
-- deliberate mention on the page and why that mention resolved to it.
WITH page_mentions AS (
    -- Where in its chunk each mention stands (0-based); for a link stored before migration 0013
    -- recorded the offset, where its node's name first stands as a whole word.
    SELECT m.code_node_id, m.form, m.mention, m.reason, k.chunk_index,
           coalesce(m.mention_start,
                    nullif(regexp_instr(k.content, '(?<![[:alnum:]_$])'
                                        || regexp_replace(c.name, '([^[:alnum:]_])', '\\\1', 'g')
                                        || '(?![[:alnum:]_$])'), 0) - 1)
               AS start
    FROM repo_document_chunk_mentions m
    JOIN repo_document_chunks k ON k.id = m.chunk_id
    JOIN code_nodes c ON c.id = m.code_node_id
    WHERE k.document_id = $1
), first_mentions AS (
    SELECT DISTINCT ON (code_node_id) code_node_id, chunk_index AS first_chunk, start AS first_offset
    FROM page_mentions
    ORDER BY code_node_id, chunk_index, start NULLS LAST
), chosen AS (
    -- The most deliberate form first, as select_related_chunks ranks them (a reference that states
    -- its target, a backticked name, a call, then a dotted name); of one form, the first.
    SELECT DISTINCT ON (code_node_id) code_node_id, form, mention, reason
    FROM page_mentions
    ORDER BY code_node_id,
             CASE form WHEN 'reference' THEN 0 WHEN 'backtick' THEN 1 WHEN 'call' THEN 2 ELSE 3 END,
             chunk_index, start NULLS LAST
)
SELECT n.id, n.repository_id, n.name, n.qualified_name, n.kind, n.language, n.path, n.start_line, n.end_line,
       n.signature, chosen.mention, chosen.form, chosen.reason
FROM code_nodes n
JOIN first_mentions f ON f.code_node_id = n.id
JOIN chosen ON chosen.code_node_id = n.id
ORDER BY f.first_chunk, f.first_offset NULLS LAST, n.qualified_name, n.id;

-- name: delete_aliases_of_files
DELETE FROM code_aliases WHERE repository_id = $1 AND path = ANY($2::text[]);

-- name: select_aliases
SELECT name, target, public FROM code_aliases WHERE repository_id = $1;
