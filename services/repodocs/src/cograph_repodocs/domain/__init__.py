"""The pure domain of repository documents: no database, no gRPC, no I/O beyond `discovery.walk`.

- discovery: which files are documents, and reading them
- headings: headings and GitHub-style anchors
- chunking: heading split plus word window
- slugs: page URLs
- mentions: identifiers in prose, resolved against code nodes
- symbols: code symbols via tree-sitter
- docs_tree: the reader's page tree and navigation
"""
