-- Every matched file now goes through the README chunker, as the spec says ("no language-aware
-- handling"): a '# ' line at the margin of a Dockerfile or a YAML file is a heading, and may be
-- the title. Documents other than markdown and reStructuredText were chunked without headings;
-- a hash that no file has makes the next sync index them again (counted as indexed, not unchanged).
UPDATE repo_documents SET content_hash = 'rechunk:' || content_hash
WHERE path !~* '\.(md|mdx|rst)$';
