-- A mention of a name a few nodes share may resolve to the one in the document's own part of the
-- tree (a README in a service's directory names that service's definition): a reason of its own.
ALTER TABLE repo_document_chunk_mentions DROP CONSTRAINT repo_document_chunk_mentions_reason_check;
ALTER TABLE repo_document_chunk_mentions ADD CONSTRAINT repo_document_chunk_mentions_reason_check CHECK (
    reason IN ('explicit_target', 'document_import', 'heading_context', 'text_context',
               'unique_public', 'qualified_name', 'same_file', 'nearest_definition', 'name_match')
);
