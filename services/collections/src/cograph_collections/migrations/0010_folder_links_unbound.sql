-- What 0009 left undone. It gave stored folder links their '/' back but kept their bindings, and
-- resolve_links only writes a binding it finds: a folder without an index page kept the file
-- named like the folder (api.md) that 0009 calls wrong. And it tested the raw href, where
-- link_target_key decodes it: a folder written 'api%2F', 'sub\' or 'sub/%2E' kept no '/'.
-- Such links get their '/' now; every folder link bound to a document that is not one of its
-- folder's index pages loses the binding; their collections get a resolve_links job (joining
-- one already queued) that binds them again.
UPDATE md_links
SET target_key = target_key || '/', written_key = written_key || '/', target_document_id = NULL
WHERE link_type = 'relative' AND target_key IS NOT NULL AND right(target_key, 1) <> '/'
  AND regexp_replace(regexp_replace(split_part(split_part(href, '#', 1), '?', 1),
                                     '%2[eE]', '.', 'g'), '%2[fF]|%5[cC]|\\', '/', 'g')
      ~ '(/|(^|/)\.\.?)$';

UPDATE md_links l SET target_document_id = NULL
FROM md_documents d
WHERE d.id = l.target_document_id AND l.link_type = 'relative' AND right(l.target_key, 1) = '/'
  AND NOT EXISTS (
      SELECT FROM unnest(ARRAY[l.target_key, l.written_key]) AS folder,
                  unnest(ARRAY['index.md', 'index.mdx', 'README.md', 'readme.md']) AS page
      WHERE d.normalised_key = folder || page);

INSERT INTO md_jobs (collection_id, kind, requested_by)
SELECT DISTINCT collection_id, 'resolve_links', 'migration 0010' FROM md_links
WHERE link_type = 'relative' AND right(target_key, 1) = '/' AND target_document_id IS NULL
ON CONFLICT (collection_id, kind, (coalesce(payload->>'all', 'false'))) WHERE status = 'queued' DO NOTHING;
