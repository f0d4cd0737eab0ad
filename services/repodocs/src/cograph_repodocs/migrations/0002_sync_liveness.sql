-- What the sync runner needs beyond 0001.

-- A running sync beats every few seconds; one whose process died stops beating, and the
-- next sync of its repository marks it error instead of waiting behind it forever
-- (repo_syncs_one_running would otherwise block every later sync).
ALTER TABLE repo_syncs ADD COLUMN heartbeat_at timestamptz NOT NULL DEFAULT now();
-- A later request asking for a re-link may join a running sync only if that sync re-links too.
ALTER TABLE repo_syncs ADD COLUMN force_relink boolean NOT NULL DEFAULT false;

-- Deleting a code file cascades to its nodes through (repository_id, path): without this
-- index every deleted or changed file would scan code_nodes.
CREATE INDEX code_nodes_file ON code_nodes (repository_id, path);
