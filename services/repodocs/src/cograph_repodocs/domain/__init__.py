"""The pure domain of repository documents: rules and values, no database, no gRPC, no I/O.

- rules: what callers send (repository references, sources, branches, groups); credentials in URLs
- discovery: which files are documents, and which directories a walk never enters
- headings: headings and GitHub-style anchors
- chunking: heading split plus word window
- slugs: page URLs
- mentions: identifiers in prose, resolved against code nodes
- symbols: code symbols via tree-sitter
- docs_tree: the reader's page tree and navigation
"""
