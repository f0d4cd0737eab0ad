-- A repository's own schedule, set after registration: seconds between its scheduled syncs, 0 for
-- none (synced on request only); NULL follows the service's COGRAPH_REPODOCS__SYNC_INTERVAL_SECONDS.
ALTER TABLE repositories ADD COLUMN sync_interval_seconds bigint
    CHECK (sync_interval_seconds IS NULL OR sync_interval_seconds = 0 OR sync_interval_seconds >= 60);
