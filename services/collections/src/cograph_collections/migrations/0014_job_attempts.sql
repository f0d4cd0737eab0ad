-- A job whose worker was lost (no heartbeat, or cut off by a stopping worker) is queued again,
-- a bounded number of times with backoff, instead of ending as an error that waits for a person:
-- `attempts` counts its runs, `not_before` holds a requeued job back until its backoff ends, and
-- `interruptions` keeps what ended each earlier run ({at, worker, reason, done, total}).

ALTER TABLE md_jobs
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN not_before timestamptz,
    ADD COLUMN interruptions jsonb NOT NULL DEFAULT '[]';

-- Jobs that have already run once were their first attempt.
UPDATE md_jobs SET attempts = 1 WHERE started_at IS NOT NULL;
