"""Markdown collections: parse, chunk, ingest, resolve links, embed; the job worker."""
