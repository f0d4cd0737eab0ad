"""Hybrid search: embeds the query once, fans out to the stores, fuses and routes."""
