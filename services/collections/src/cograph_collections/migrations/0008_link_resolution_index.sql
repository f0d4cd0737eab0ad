-- Wiki links resolve by note name (the last segment of a document's wiki key, indexed), so
-- resolve_links probes an index per link: comparing every link with every document of the
-- collection took 27 s for 4,000 documents of 10 links, and grew with the square of their number.
ALTER TABLE md_documents ADD COLUMN wiki_name text GENERATED ALWAYS AS (split_part(wiki_key, '/', -1)) STORED;
CREATE INDEX md_documents_wiki_name ON md_documents (collection_id, wiki_name);
DROP INDEX md_documents_wiki_key;
