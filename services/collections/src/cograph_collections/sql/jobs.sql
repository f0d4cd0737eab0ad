-- name: insert_job
-- A job joins an identical queued one instead of queueing twice; a retry that joins one marks
-- it as the retry, so the caller sees which failed job it answers.
INSERT INTO md_jobs (collection_id, kind, status, requested_by, retry_of, payload, started_at, heartbeat_at)
VALUES ($1, $2, $3, $4, $5, $6,
        CASE WHEN $3 = 'running' THEN now() END, CASE WHEN $3 = 'running' THEN now() END)
ON CONFLICT (collection_id, kind, (coalesce(payload->>'all', 'false'))) WHERE status = 'queued'
DO UPDATE SET retry_of = coalesce(md_jobs.retry_of, EXCLUDED.retry_of)
RETURNING id;

-- name: wake_workers
-- Delivered when the transaction commits: a worker never claims before the job is there.
SELECT pg_notify($1, $2);

-- name: lock_claims
-- Claims run one at a time (in the claiming transaction), so that the check below sees every
-- claim committed before it: two workers never both find a collection's kind idle.
SELECT pg_advisory_xact_lock(hashtext('md_jobs claim'));

-- name: claim_job
-- The oldest queued job whose collection runs no job of its kind: a second embed job would
-- embed the very chunks the running one is embedding, and the provider is paid twice.
UPDATE md_jobs SET status = 'running', started_at = now(), heartbeat_at = now(), worker = $1
WHERE id = (
    SELECT q.id FROM md_jobs q
    WHERE q.status = 'queued' AND q.kind <> 'upload'
      AND NOT EXISTS (SELECT 1 FROM md_jobs r
                      WHERE r.collection_id = q.collection_id AND r.kind = q.kind AND r.status = 'running')
    ORDER BY q.created_at
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, collection_id, kind, payload, requested_by;

-- name: heartbeat
UPDATE md_jobs SET heartbeat_at = now(), progress_done = $2, progress_total = $3
WHERE id = $1 AND status = 'running';

-- name: finish_job
UPDATE md_jobs SET status = $2, error = $3, finished_at = now(), heartbeat_at = now(),
                   progress_done = coalesce($4, progress_done), progress_total = coalesce($5, progress_total)
WHERE id = $1 AND status = 'running'
RETURNING id;

-- name: sweep_stale
UPDATE md_jobs
SET status = 'error', finished_at = now(),
    error = 'the worker running this job stopped responding (no heartbeat for '
            || round(extract(epoch FROM now() - heartbeat_at)) || ' s); '
            -- an upload's content is not kept: only the caller can send it again
            || CASE WHEN kind = 'upload' THEN 're-upload the batch' ELSE 'retry it' END
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1)
RETURNING id;

-- name: select_job
SELECT id, collection_id, kind, status, error, retry_of, requested_by, progress_done, progress_total,
       payload, created_at, started_at, finished_at, heartbeat_at
FROM md_jobs WHERE id = $1;

-- name: select_jobs
SELECT id, collection_id, kind, status, error, retry_of, requested_by, progress_done, progress_total,
       payload, created_at, started_at, finished_at, heartbeat_at
FROM md_jobs
WHERE collection_id = ANY($1::uuid[])
  AND ($2::text IS NULL OR status = $2)
  AND ($3::text IS NULL OR kind = $3)
  AND ($5::text IS NULL OR (created_at, id) < ($5::text::timestamptz, $6::text::uuid))
ORDER BY created_at DESC, id DESC
LIMIT $4;

-- name: count_queued
SELECT count(*) FROM md_jobs WHERE status = 'queued';
