-- A link to the collection's root folder ('/', '..' one folder down, '.' at the root) was stored
-- with no target, as links out of the collection are: it stayed unbound, and was not even
-- counted as unresolved. It names the root's index or README page, as a link to any other
-- folder names that folder's. Stored ones get the root folder's key, '/', and their
-- collections a resolve_links job (joining one already queued).

-- Whether path, written in the document source_key, ends at the root folder as
-- link_target_key reads it: URL-decoded, against the document's folder ('/...' against the
-- root), never climbing above the root. A path with a scheme or a '//host' leaves the collection.
CREATE FUNCTION names_root_folder(source_key text, href text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    path text := regexp_replace(regexp_replace(split_part(split_part(href, '#', 1), '?', 1),
                                               '%2[eE]', '.', 'g'), '%2[fF]|%5[cC]|\\', '/', 'g');
    depth integer := CASE WHEN left(path, 1) = '/' THEN 0
                          ELSE length(source_key) - length(replace(source_key, '/', '')) END;
    segment text;
BEGIN
    IF path = '' OR left(path, 2) = '//' OR path ~ '^[A-Za-z][A-Za-z0-9+.\-]*:' THEN
        RETURN false;
    END IF;
    FOREACH segment IN ARRAY string_to_array(path, '/') LOOP
        IF segment = '..' THEN
            IF depth = 0 THEN
                RETURN false;  -- above the root
            END IF;
            depth := depth - 1;
        ELSIF segment NOT IN ('', '.') THEN
            depth := depth + 1;
        END IF;
    END LOOP;
    RETURN depth = 0;
END $$;

UPDATE md_links l SET target_key = '/'
FROM md_documents d
WHERE d.id = l.document_id AND l.link_type = 'relative' AND l.target_key IS NULL
  AND names_root_folder(d.normalised_key, l.href);

DROP FUNCTION names_root_folder(text, text);

INSERT INTO md_jobs (collection_id, kind, requested_by)
SELECT DISTINCT collection_id, 'resolve_links', 'migration 0012' FROM md_links
WHERE target_key = '/' AND target_document_id IS NULL
ON CONFLICT (collection_id, kind, (coalesce(payload->>'all', 'false'))) WHERE status = 'queued' DO NOTHING;
