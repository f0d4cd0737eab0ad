-- Ingestion, links and jobs: what 0001 left out.

-- Wiki links resolve by note name, case-insensitively, extension optional:
-- the casefolded key without .md/.mdx, computed at ingestion.
ALTER TABLE md_documents ADD COLUMN wiki_key text NOT NULL DEFAULT '';
CREATE INDEX md_documents_wiki_key ON md_documents (collection_id, wiki_key);

-- What a job works on beyond its collection (e.g. {"all": true} for a re-embed).
ALTER TABLE md_jobs ADD COLUMN payload jsonb NOT NULL DEFAULT '{}';

-- At most one queued embed or resolve_links job per collection: later requests join it.
CREATE UNIQUE INDEX md_jobs_one_queued ON md_jobs (collection_id, kind, (coalesce(payload->>'all', 'false')))
    WHERE status = 'queued';
