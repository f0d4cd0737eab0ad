"""The application layer: one module per aggregate, each owning the pool, the transactions and the
orchestration of stores, domain rules and checkouts. The servicer (rpc.py) calls only these, and
they raise the transport-free errors of cograph_errors.

- repositories: registration, lookups by id or by name, listing, access facts, group grants
- syncs: starting, joining and recording syncs, never two of one repository at once; sync history
- scheduler: every repository synced once per interval
- pipeline: one sync of one repository (fetch, code symbols, documents, embed, write, link)
- code_index, doc_index, linking: what a sync plans from the checkout before it writes
- documents: documents and chunks, the docs reader's tree and pages, chunks related to code nodes
- code: a source file's lines as the index knows them
- search: hybrid search over doc chunks and code nodes
"""
