-- A link to a folder ('api/', './', '..') names the folder's index or README page. Earlier releases
-- dropped its trailing '/' and bound it to a document named like the folder (api.md, or sub.md for
-- './' in sub/). Stored folder links get their '/' back, and their collections a resolve_links job
-- that binds them again (joining one already queued).
UPDATE md_links
SET target_key = target_key || '/', written_key = written_key || '/'
WHERE link_type = 'relative' AND target_key IS NOT NULL
  AND split_part(split_part(href, '#', 1), '?', 1) ~ '(/|(^|/)\.\.?)$';

INSERT INTO md_jobs (collection_id, kind, requested_by)
SELECT DISTINCT collection_id, 'resolve_links', 'migration 0009' FROM md_links
WHERE link_type = 'relative' AND right(target_key, 1) = '/'
ON CONFLICT (collection_id, kind, (coalesce(payload->>'all', 'false'))) WHERE status = 'queued' DO NOTHING;
