-- name: insert_collection
INSERT INTO md_collections (name, description, visibility, owner)
VALUES ($1, $2, $3, $4)
RETURNING id;

-- name: select_collection
SELECT c.id, c.name, c.description, c.visibility, c.owner, c.created_at, c.updated_at,
       coalesce((SELECT array_agg(g.group_name ORDER BY g.group_name)
                 FROM md_collection_grants g WHERE g.collection_id = c.id), '{}') AS group_grants,
       (SELECT count(*) FROM md_documents d WHERE d.collection_id = c.id) AS document_count,
       (SELECT count(*) FROM md_chunks k WHERE k.collection_id = c.id) AS chunk_count
FROM md_collections c
WHERE c.id = ANY($1::uuid[])
  AND ($2 = '' OR c.name ILIKE '%' || $2 || '%' OR c.description ILIKE '%' || $2 || '%')
  AND ($4::text IS NULL OR (c.name, c.id) > ($4::text, $5::text::uuid))
ORDER BY c.name, c.id
LIMIT $3;

-- name: update_collection
UPDATE md_collections
SET name = coalesce($2, name),
    description = coalesce($3, description),
    visibility = coalesce($4, visibility),
    updated_at = now()
WHERE id = $1
RETURNING id;

-- name: wait_for_writers
-- The writers' lock (documents.sql, lock_collection) taken alone: writers already in finish, and
-- new ones queue behind it, so a stream of uploads cannot hold a delete back.
SELECT pg_advisory_xact_lock(hashtext('md_collection writes'), hashtext($1::uuid::text));

-- name: delete_collection
DELETE FROM md_collections WHERE id = $1 RETURNING id;

-- name: delete_scope_statistics
-- After delete_collection, whose chunks' statistics the trigger has taken down to zero by then.
DELETE FROM md_scope_stats WHERE scope_id = $1;

-- name: select_access
-- Every collection ($1 null), or only those of $1.
SELECT c.id, c.visibility, c.owner,
       coalesce(array_agg(g.group_name ORDER BY g.group_name) FILTER (WHERE g.group_name IS NOT NULL), '{}')
           AS group_grants
FROM md_collections c
LEFT JOIN md_collection_grants g ON g.collection_id = c.id
WHERE $1::uuid[] IS NULL OR c.id = ANY($1::uuid[])
GROUP BY c.id;

-- name: select_access_of
-- One collection's row by its primary key, with its grants by theirs: what authorizing one
-- request reads, the same whatever the number of collections.
SELECT c.id, c.visibility, c.owner,
       coalesce((SELECT array_agg(g.group_name ORDER BY g.group_name)
                 FROM md_collection_grants g WHERE g.collection_id = c.id), '{}') AS group_grants
FROM md_collections c
WHERE c.id = $1;

-- name: lock_grants
-- Held until the transaction ends: grants to one collection are added one at a time. An
-- advisory lock, not the collection's row: that would wait for every write into the collection.
SELECT pg_advisory_xact_lock(hashtext('md_collection_grants'), hashtext($1::uuid::text));

-- name: count_other_grants
SELECT count(*) FROM md_collection_grants WHERE collection_id = $1 AND group_name <> $2;

-- name: insert_grant
INSERT INTO md_collection_grants (collection_id, group_name) VALUES ($1, $2)
ON CONFLICT DO NOTHING;

-- name: delete_grant
DELETE FROM md_collection_grants WHERE collection_id = $1 AND group_name = $2;
