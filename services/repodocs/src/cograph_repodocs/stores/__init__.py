"""The stores: the only code that runs SQL. One store class per aggregate, each over its own named
queries in sql/<aggregate>.sql; each takes a connection, so its caller (the application layer)
owns the transaction. They raise the transport-free errors of cograph_errors.

- repositories: repositories and their group grants
- syncs: repo_syncs, the record of every sync
- documents: documents, their chunks and the chunks' symbol mentions
- code: source files' hashes and their code nodes
- search: what the hybrid search reads beside the shared retriever: hits by id, the symbol stream
"""
