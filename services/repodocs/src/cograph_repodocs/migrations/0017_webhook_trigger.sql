-- A sync a git host's push webhook queued is recorded as such.
ALTER TABLE repo_syncs DROP CONSTRAINT repo_syncs_trigger_check;
ALTER TABLE repo_syncs ADD CONSTRAINT repo_syncs_trigger_check CHECK (
    trigger IN ('manual', 'schedule', 'registration', 'webhook')
);
