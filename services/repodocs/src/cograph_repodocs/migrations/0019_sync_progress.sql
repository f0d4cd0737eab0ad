-- A running sync says where it is: its phase and its counts as they grow (files read of those
-- listed, documents chunked, vectors embedded, seconds per phase), written a few times a second.
ALTER TABLE repo_syncs ADD COLUMN phase text
    CHECK (phase IN ('fetch', 'discover', 'chunk', 'embed', 'link'));
ALTER TABLE repo_syncs ADD COLUMN progress jsonb NOT NULL DEFAULT '{}';
