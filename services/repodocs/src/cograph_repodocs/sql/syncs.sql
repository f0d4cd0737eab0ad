-- name: insert_sync
-- Fails on repo_syncs_one_running while another sync of the repository is queued or running.
INSERT INTO repo_syncs (repository_id, status, trigger, force_relink)
VALUES ($1, 'queued', $2, $3)
RETURNING id;

-- name: select_syncs
SELECT id, repository_id, status, trigger, commit_sha, discovered_files, indexed_documents, indexed_chunks,
       unchanged_documents, deleted_documents, replaced_files, code_nodes, mentions, skipped, error,
       started_at, finished_at, force_relink, phase, progress
FROM repo_syncs
WHERE repository_id = $1
  AND ($3::text IS NULL OR (started_at, id) < ($3::text::timestamptz, $4::text::uuid))
ORDER BY started_at DESC, id DESC
LIMIT $2;

-- name: select_sync
SELECT id, repository_id, status, trigger, commit_sha, discovered_files, indexed_documents, indexed_chunks,
       unchanged_documents, deleted_documents, replaced_files, code_nodes, mentions, skipped, error,
       started_at, finished_at, force_relink, phase, progress
FROM repo_syncs
WHERE id = $1;

-- name: select_active_sync
SELECT id, repository_id, status, trigger, commit_sha, discovered_files, indexed_documents, indexed_chunks,
       unchanged_documents, deleted_documents, replaced_files, code_nodes, mentions, skipped, error,
       started_at, finished_at, force_relink, phase, progress
FROM repo_syncs
WHERE repository_id = $1 AND status IN ('queued', 'running');

-- name: select_last_syncs
SELECT DISTINCT ON (repository_id)
       id, repository_id, status, trigger, commit_sha, discovered_files, indexed_documents, indexed_chunks,
       unchanged_documents, deleted_documents, replaced_files, code_nodes, mentions, skipped, error,
       started_at, finished_at, force_relink, phase, progress
FROM repo_syncs
WHERE repository_id = ANY($1::uuid[])
ORDER BY repository_id, started_at DESC, id;

-- name: select_synced_commit
-- The commit the repository's index reflects: that of its newest successful sync.
SELECT commit_sha FROM repo_syncs
WHERE repository_id = $1 AND status = 'success'
ORDER BY started_at DESC
LIMIT 1;

-- name: mark_running
UPDATE repo_syncs SET status = 'running', heartbeat_at = now() WHERE id = $1 AND status = 'queued';

-- name: hold_running
-- Locks the sync's row for the write transaction; false once another process marked it abandoned.
SELECT status = 'running' FROM repo_syncs WHERE id = $1 FOR UPDATE;

-- name: record_progress
-- Skips a row locked by the sync's own write transaction, as the heartbeat does.
UPDATE repo_syncs SET phase = $2, progress = $3
WHERE id = (SELECT id FROM repo_syncs WHERE id = $1 AND status = 'running' FOR UPDATE SKIP LOCKED);

-- name: heartbeat
-- A row locked by its own write transaction (hold_running) is skipped: that sync is alive, and
-- the beat must not wait for the whole write.
UPDATE repo_syncs SET heartbeat_at = now()
WHERE id = (SELECT id FROM repo_syncs WHERE id = $1 AND status = 'running' FOR UPDATE SKIP LOCKED);

-- name: finish_success
-- clock_timestamp(), not now(): this runs at the end of the sync's write transaction, and now()
-- would be that transaction's start.
UPDATE repo_syncs
SET status = 'success', commit_sha = $2, discovered_files = $3, indexed_documents = $4, indexed_chunks = $5,
    unchanged_documents = $6, deleted_documents = $7, replaced_files = $8, code_nodes = $9, mentions = $10,
    skipped = $11, phase = 'link', progress = $12, error = NULL, finished_at = clock_timestamp()
WHERE id = $1;

-- name: finish_error
UPDATE repo_syncs
SET status = 'error', error = $2, commit_sha = coalesce($3, commit_sha), finished_at = clock_timestamp()
WHERE id = $1 AND status IN ('queued', 'running');

-- name: abandon_stale
-- A queued or running sync whose process stopped beating: it will never finish.
-- A row locked by a write transaction belongs to a sync that is committing: alive, skipped
-- rather than waited for.
UPDATE repo_syncs
SET status = 'error', error = $3, finished_at = clock_timestamp()
WHERE id IN (
    SELECT id FROM repo_syncs
    WHERE repository_id = $1 AND status IN ('queued', 'running')
      AND heartbeat_at < now() - make_interval(secs => $2)
      AND NOT (id = ANY($4::uuid[]))
    FOR UPDATE SKIP LOCKED)
RETURNING id;
