-- A file that is neither markdown nor reStructuredText (a Dockerfile, a YAML manifest, a workflow,
-- an example script) was read as markdown for its headings: the `---` between the documents of a
-- YAML file made the paragraph above it a setext heading (a heading path and an anchor holding a
-- whole Kubernetes object), an indented comment under a list item was a heading, a code fence, an
-- HTML tag or a leading `---` hid the `# ` lines after it, and heading text was rendered as inline
-- markdown. Its headings are now its `# ` lines at the left margin, as written.
-- Only documents whose headings can differ are chunked again: those with a line where `#` follows
-- nothing but whitespace and the markers of block quotes and lists, or a line of `=` or `-` (a
-- setext underline, a YAML document separator); a file with neither, such as a JSON lockfile, had
-- no heading under either reading. They are marked the way 0012 marked its documents, by chunks
-- made with a 0-word window, which no chunker uses: the next sync chunks and embeds them again and
-- counts them as indexed documents whose content did not change, not as replaced files.
UPDATE repo_document_chunks k SET chunker_max_words = 0
FROM repo_documents d
WHERE k.document_id = d.id
  AND d.path !~* '\.(md|mdx|markdown|rst)$'
  AND replace(d.content, E'\r', E'\n') ~ '(?n)^[ \t>*+.)0-9-]*#|^[ \t>*+.)0-9=-]*[=-][ \t]*$';
