-- name: insert_job
-- A job joins an identical queued one instead of queueing twice; a retry that joins one marks
-- it as the retry, so the caller sees which failed job it answers.
INSERT INTO md_jobs (collection_id, kind, status, requested_by, retry_of, payload, started_at, heartbeat_at,
                     attempts)
VALUES ($1, $2, $3, $4, $5, $6,
        CASE WHEN $3 = 'running' THEN now() END, CASE WHEN $3 = 'running' THEN now() END,
        CASE WHEN $3 = 'running' THEN 1 ELSE 0 END)
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
-- embed the very chunks the running one is embedding, and the provider is paid twice. A job
-- requeued after a lost worker waits for its backoff (not_before). Its progress starts again:
-- the new run counts what is left.
UPDATE md_jobs SET status = 'running', started_at = now(), heartbeat_at = now(), worker = $1,
                   attempts = attempts + 1, not_before = NULL, progress_done = 0, progress_total = 0
WHERE id = (
    SELECT q.id FROM md_jobs q
    WHERE q.status = 'queued' AND q.kind <> 'upload'
      AND (q.not_before IS NULL OR q.not_before <= now())
      AND NOT EXISTS (SELECT 1 FROM md_jobs r
                      WHERE r.collection_id = q.collection_id AND r.kind = q.kind AND r.status = 'running')
    ORDER BY q.created_at
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, collection_id, kind, payload, requested_by, attempts AS attempt;

-- name: heartbeat
-- Only while the row is still this run's ($4, the attempt; NULL for an upload, which runs once):
-- a worker silent long enough to be swept finds its job requeued, or another run's.
UPDATE md_jobs SET heartbeat_at = now(), progress_done = $2, progress_total = $3
WHERE id = $1 AND status = 'running' AND ($4::int IS NULL OR attempts = $4)
RETURNING id;

-- name: finish_job
UPDATE md_jobs SET status = $2, error = $3, finished_at = now(), heartbeat_at = now(),
                   progress_done = coalesce($4, progress_done), progress_total = coalesce($5, progress_total)
WHERE id = $1 AND status = 'running' AND ($6::int IS NULL OR attempts = $6)
RETURNING id;

-- name: select_stale
-- Running jobs whose worker went silent, locked for the caller's transaction (another sweeper
-- skips them).
SELECT id, kind, attempts, worker, progress_done, progress_total,
       round(extract(epoch FROM now() - heartbeat_at))::bigint AS silent_seconds
FROM md_jobs
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1)
ORDER BY heartbeat_at
FOR UPDATE SKIP LOCKED;

-- name: select_running
-- One running job, locked for the caller's transaction, while it is still run $2.
SELECT id, kind, attempts, worker, progress_done, progress_total
FROM md_jobs
WHERE id = $1 AND status = 'running' AND attempts = $2
FOR UPDATE;

-- name: requeue_job
-- The interrupted run is recorded ($3: why; $4, $5: how far it got, when its worker knows better
-- than its last beat) and the job queued again, claimable after $2 seconds. Fails on
-- md_jobs_one_queued when an identical job was queued meanwhile (see mark_successor).
UPDATE md_jobs SET status = 'queued', worker = NULL, not_before = now() + make_interval(secs => $2),
                   interruptions = interruptions || jsonb_build_array(jsonb_build_object(
                       'at', now(), 'worker', coalesce(worker, ''), 'reason', $3::text,
                       'done', coalesce($4, progress_done), 'total', coalesce($5, progress_total)))
WHERE id = $1 AND status = 'running';

-- name: end_interrupted
-- As requeue_job, but the job ends: $2 says why.
UPDATE md_jobs SET status = 'error', error = $2, finished_at = now(),
                   progress_done = coalesce($4, progress_done), progress_total = coalesce($5, progress_total),
                   interruptions = interruptions || jsonb_build_array(jsonb_build_object(
                       'at', now(), 'worker', coalesce(worker, ''), 'reason', $3::text,
                       'done', coalesce($4, progress_done), 'total', coalesce($5, progress_total)))
WHERE id = $1 AND status = 'running';

-- name: mark_successor
-- The identical job queued while this one ran does its work: it says which job it continues
-- (as a retry that joins a queued job does), and the caller is told its id.
UPDATE md_jobs t SET retry_of = coalesce(t.retry_of, j.id)
FROM md_jobs j
WHERE j.id = $1 AND t.status = 'queued' AND t.id <> j.id
  AND t.collection_id = j.collection_id AND t.kind = j.kind
  AND coalesce(t.payload->>'all', 'false') = coalesce(j.payload->>'all', 'false')
RETURNING t.id;

-- name: select_job
SELECT id, collection_id, kind, status, error, retry_of, requested_by, progress_done, progress_total,
       payload, created_at, started_at, finished_at, heartbeat_at, attempts, interruptions, not_before
FROM md_jobs WHERE id = $1;

-- name: select_jobs
SELECT id, collection_id, kind, status, error, retry_of, requested_by, progress_done, progress_total,
       payload, created_at, started_at, finished_at, heartbeat_at, attempts, interruptions, not_before
FROM md_jobs
WHERE collection_id = ANY($1::uuid[])
  AND ($2::text IS NULL OR status = $2)
  AND ($3::text IS NULL OR kind = $3)
  AND ($5::text IS NULL OR (created_at, id) < ($5::text::timestamptz, $6::text::uuid))
ORDER BY created_at DESC, id DESC
LIMIT $4;

-- name: count_queued
SELECT count(*) FROM md_jobs WHERE status = 'queued';
