-- 0009 marked the documents outside markdown and rst for a new chunking by a hash no file has
-- ('rechunk:<sha>'): their next sync counted each as a replaced file although no file had
-- changed, and FindDocumentsByContent could not find them until then. They get their real hash
-- back and are marked the way a sync already reads "chunked with other parameters": their chunks
-- record a window of 0 words, which no chunker uses, so the next sync chunks them again and counts
-- them as indexed documents whose content did not change (not replaced files). The chunks' text,
-- and so their search_text and term statistics, are untouched.
UPDATE repo_document_chunks k SET chunker_max_words = 0
FROM repo_documents d
WHERE k.document_id = d.id AND d.content_hash LIKE 'rechunk:%';

UPDATE repo_documents SET content_hash = substr(content_hash, length('rechunk:') + 1)
WHERE content_hash LIKE 'rechunk:%';
