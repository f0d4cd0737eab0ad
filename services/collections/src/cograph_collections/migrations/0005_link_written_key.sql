-- The spec binds a link by "the target's source_key or its normalised path": besides the path
-- resolved against the linking document (target_key), a path-like href is also tried as
-- written, from the collection root. NULL when that is the same key, or not a path.
ALTER TABLE md_links ADD COLUMN written_key text;
