-- FindDocumentsByContent looks documents up by the hash of their bytes.
CREATE INDEX repo_documents_content_hash ON repo_documents (content_hash);
