"""Repository documents: sync, discovery, chunking, code symbols and symbol links."""
