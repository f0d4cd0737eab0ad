"""ChunkStore: md_chunks as readers, the embed job and search see them: a document's chunks,
their vectors, and the hits of a search (sql/chunks.sql). Uploads write chunks together with
their document (DocumentStore)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import PurePosixPath

import msgspec

from cograph_collections.domain.documents import EmbedStatus, StoredChunk
from cograph_collections.markdown import ChunkerParams
from cograph_db import Connection, Queries
from cograph_retrieval import RECIPE, ChunkTable, Passage, ensure_vector_index

SQL = Queries.load("cograph_collections.sql", "chunks.sql")

# md_chunks as the shared hybrid retriever reads it.
TABLE = ChunkTable(
    table="md_chunks",
    scope_column="collection_id",
    term_stats="md_term_stats",
    scope_stats="md_scope_stats",
    windows="md_chunk_windows",
)


class ChunkStore:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    async def chunks(
        self, collection_id: uuid.UUID, document_id: uuid.UUID, limit: int, after: Sequence[str | None]
    ) -> list[StoredChunk]:
        """In document order, after that chunk index (a page token's)."""
        rows = await self._db.fetch(SQL.select_chunks, collection_id, document_id, limit, *after)
        return [msgspec.convert(dict(row), StoredChunk) for row in rows]

    async def chunk(self, collection_id: uuid.UUID, chunk_id: uuid.UUID) -> StoredChunk | None:
        row = await self._db.fetchrow(SQL.select_chunk, collection_id, chunk_id)
        return msgspec.convert(dict(row), StoredChunk) if row else None

    async def ensure_vector_index(self, dimension: int) -> None:
        await ensure_vector_index(self._db, TABLE, dimension)

    async def count_to_embed(
        self, collection_id: uuid.UUID, *, everything: bool, model: str, dimension: int
    ) -> int:
        """Chunks without a vector of this model at this dimension by the current recipe; every
        chunk with `everything`."""
        count: int = await self._db.fetchval(
            SQL.count_chunks_to_embed, collection_id, everything, model, dimension, RECIPE
        )
        return count

    async def to_embed(
        self,
        collection_id: uuid.UUID,
        *,
        everything: bool,
        model: str,
        dimension: int,
        after: uuid.UUID,
        limit: int,
    ) -> list[tuple[uuid.UUID, Passage]]:
        """The next chunks count_to_embed counts, in id order after `after`, as they are embedded:
        their text in the context of their document's title (its file name when untitled) and
        their heading path."""
        rows = await self._db.fetch(
            SQL.select_chunks_to_embed, collection_id, everything, model, dimension, RECIPE, after, limit
        )
        return [
            (
                row["id"],
                Passage(
                    (row["title"] or PurePosixPath(row["source_key"]).stem, *row["heading_path"]),
                    row["content"],
                ),
            )
            for row in rows
        ]

    async def write_vectors(self, vectors: list[tuple[uuid.UUID, list[list[float]], str, int]]) -> None:
        """(id, window vectors, model, dimension) of a page of chunks, in the caller's transaction:
        the first window's vector on the chunk, the others in its windows. Its rows are locked
        first, without waiting: asyncpg.LockNotAvailableError when a writer holds one."""
        ids = [row[0] for row in vectors]
        await self._db.execute(SQL.lock_chunks_for_vectors, ids)
        await self._db.executemany(
            SQL.update_embedding,
            [
                (chunk_id, windows[0], model, dimension, RECIPE)
                for chunk_id, windows, model, dimension in vectors
            ],
        )
        await self._db.execute(SQL.delete_windows, ids)
        await self._db.executemany(
            SQL.insert_window,
            [
                (chunk_id, index, vector, model, dimension)
                for chunk_id, windows, model, dimension in vectors
                for index, vector in enumerate(windows[1:], start=1)
            ],
        )

    async def embed_status(
        self, collection_id: uuid.UUID, model: str, dimension: int, params: ChunkerParams
    ) -> EmbedStatus:
        row = await self._db.fetchrow(
            SQL.embed_status,
            collection_id,
            model,
            dimension,
            params.max_chars,
            params.min_chars,
            params.max_chunks,
            RECIPE,
        )
        assert row is not None
        return EmbedStatus(
            total=row["total"],
            embedded=row["embedded"],
            pending=row["pending"],
            stale=row["stale"],
            outdated_chunker=row["outdated_chunker"],
            model=model,
        )

    async def filler(self, scope: Sequence[uuid.UUID], found: list[uuid.UUID], count: int) -> list[uuid.UUID]:
        """Up to `count` chunks of the scope other than `found`, in a fixed order."""
        rows = await self._db.fetch(SQL.select_filler_chunks, list(scope), found, count)
        return [row["id"] for row in rows]

    async def hits(self, chunk_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[StoredChunk, str]]:
        """Each chunk still stored, with its document's title (its source key when untitled)."""
        found = {}
        for row in await self._db.fetch(SQL.select_hits, chunk_ids):
            fields = dict(row)
            title = fields.pop("title") or fields["source_key"]
            found[row["id"]] = (msgspec.convert(fields, StoredChunk), title)
        return found
