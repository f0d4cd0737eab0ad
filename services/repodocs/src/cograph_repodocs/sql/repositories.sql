-- name: insert_repository
INSERT INTO repositories
    (host, owner, name, clone_url, checkout_path, visibility, owner_subject, default_branch, web_url)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING id;

-- name: select_repositories
SELECT r.id, r.host, r.owner, r.name, r.clone_url, r.checkout_path, r.visibility, r.owner_subject,
       r.default_branch, r.web_url, r.created_at, r.sync_interval_seconds,
       coalesce((SELECT array_agg(g.group_name ORDER BY g.group_name)
                 FROM repository_grants g WHERE g.repository_id = r.id), '{}') AS group_grants
FROM repositories r
WHERE r.id = ANY($1::uuid[])
  AND ($3::text IS NULL OR (r.host, r.owner, r.name, r.id) > ($3::text, $4::text, $5::text, $6::text::uuid))
ORDER BY r.host, r.owner, r.name, r.id
LIMIT $2;

-- name: select_repository
-- One repository by its primary key: select_repositories serves pages (a keyset after a page
-- token, ordered by name), whose plan need not be a single index probe for one id.
SELECT r.id, r.host, r.owner, r.name, r.clone_url, r.checkout_path, r.visibility, r.owner_subject,
       r.default_branch, r.web_url, r.created_at, r.sync_interval_seconds,
       coalesce((SELECT array_agg(g.group_name ORDER BY g.group_name)
                 FROM repository_grants g WHERE g.repository_id = r.id), '{}') AS group_grants
FROM repositories r
WHERE r.id = $1;

-- name: select_repository_id_by_ref
SELECT id FROM repositories WHERE lower(host) = lower($1) AND lower(owner) = lower($2) AND lower(name) = lower($3);

-- name: select_access
-- Every repository ($1 null), or only those of $1.
SELECT r.id, r.host, r.owner, r.name, r.visibility, r.owner_subject,
       coalesce(array_agg(g.group_name ORDER BY g.group_name) FILTER (WHERE g.group_name IS NOT NULL), '{}')
           AS group_grants
FROM repositories r
LEFT JOIN repository_grants g ON g.repository_id = r.id
WHERE $1::uuid[] IS NULL OR r.id = ANY($1::uuid[])
GROUP BY r.id
ORDER BY r.host, r.owner, r.name;

-- name: select_access_by_ref
-- One repository by its name in any letter case: one lookup in repositories_ref_any_case, then
-- its grants by their primary key, whatever the number of repositories.
SELECT r.id, r.host, r.owner, r.name, r.visibility, r.owner_subject,
       coalesce((SELECT array_agg(g.group_name ORDER BY g.group_name)
                 FROM repository_grants g WHERE g.repository_id = r.id), '{}') AS group_grants
FROM repositories r
WHERE lower(r.host) = lower($1) AND lower(r.owner) = lower($2) AND lower(r.name) = lower($3);

-- name: lock_grants
-- Held until the transaction ends: grants to one repository are added one at a time. An
-- advisory lock, not the repository's row: that would wait for every write into the repository.
SELECT pg_advisory_xact_lock(hashtext('repository_grants'), hashtext($1::uuid::text));

-- name: count_other_grants
SELECT count(*) FROM repository_grants WHERE repository_id = $1 AND group_name <> $2;

-- name: insert_grant
INSERT INTO repository_grants (repository_id, group_name) VALUES ($1, $2)
ON CONFLICT DO NOTHING;

-- name: delete_grant
DELETE FROM repository_grants WHERE repository_id = $1 AND group_name = $2;

-- name: select_due
-- Repositories whose newest sync started longer ago than their interval (their own, else $1; 0 is
-- never), or that never synced, and that have no sync queued or running.
SELECT r.id
FROM repositories r
LEFT JOIN LATERAL (
    SELECT s.started_at FROM repo_syncs s WHERE s.repository_id = r.id ORDER BY s.started_at DESC LIMIT 1
) last ON true
WHERE coalesce(r.sync_interval_seconds::float8, $1::float8) > 0
  AND (last.started_at IS NULL
       OR last.started_at <= now() - make_interval(secs => coalesce(r.sync_interval_seconds::float8, $1::float8)))
  AND NOT EXISTS (
      SELECT 1 FROM repo_syncs s WHERE s.repository_id = r.id AND s.status IN ('queued', 'running'))
ORDER BY last.started_at NULLS FIRST, r.id;

-- name: select_cloned
-- Every repository registered by clone URL, for a push webhook to find its own among them.
SELECT id, clone_url, default_branch FROM repositories WHERE clone_url IS NOT NULL ORDER BY id;

-- name: lock_repository
-- Held until the transaction ends: one change of the repository at a time. FOR NO KEY UPDATE:
-- the rows a sync writes into the repository (FOR KEY SHARE on it) do not wait for it.
SELECT id FROM repositories WHERE id = $1 FOR NO KEY UPDATE;

-- name: update_repository
UPDATE repositories
SET visibility = $2, default_branch = $3, web_url = $4, sync_interval_seconds = $5
WHERE id = $1;

-- name: lock_syncs
-- Before the repository's row: a sync's write transaction locks its sync row first, then the
-- repository (FOR KEY SHARE, by its inserts); a delete taking them the other way round would deadlock.
SELECT id FROM repo_syncs WHERE repository_id = $1 FOR UPDATE;

-- name: delete_repository
-- Cascades to grants, syncs, code files, nodes and aliases, documents, chunks, their windows and
-- mentions; the chunk tables' statement triggers subtract their terms from the statistics.
DELETE FROM repositories WHERE id = $1 RETURNING id;

-- name: delete_scope_statistics
-- What the triggers left of the repository's BM25 statistics: rows counting zero.
WITH doc_terms AS (DELETE FROM repo_term_stats WHERE scope_id = $1),
     doc_scope AS (DELETE FROM repo_scope_stats WHERE scope_id = $1),
     code_terms AS (DELETE FROM code_term_stats WHERE scope_id = $1)
DELETE FROM code_scope_stats WHERE scope_id = $1;
