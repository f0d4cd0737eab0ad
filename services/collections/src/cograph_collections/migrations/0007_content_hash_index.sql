-- FindDocumentsByContent looks documents up by the hash of their bytes.
CREATE INDEX md_documents_content_hash ON md_documents (content_hash);
