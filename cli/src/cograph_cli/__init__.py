"""The cograph command: up, serve, worker, migrate, repo, collection, search."""
