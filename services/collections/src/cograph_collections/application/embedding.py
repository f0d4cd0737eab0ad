"""The embed job: vectorise a collection's chunks in provider-sized batches.

Only chunks without a vector from the configured model and recipe are sent, unless the
whole collection is asked for (a re-embed). A chunk is embedded with its context, window by
window when it is longer than the model reads (cograph_retrieval.passages). Every vector is
stored with its model, dimension and recipe, so query and chunk vectors are only ever
compared within one model, and vectors of an older recipe show as stale.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg

from cograph_collections.application.jobs import Progress
from cograph_collections.stores.chunks import ChunkStore
from cograph_embeddings import EmbeddingProvider
from cograph_retrieval import embed_passages

# How long a page of vectors waits before trying again for rows a writer holds: writers'
# transactions are short, a batch upload's a few seconds at most.
LOCK_RETRY_FIRST_SECONDS = 0.05
LOCK_RETRY_MAX_SECONDS = 1.0


class ChunkEmbedder:
    def __init__(self, pool: asyncpg.Pool[Any], embedder: EmbeddingProvider) -> None:
        self._pool = pool
        self._embedder = embedder

    async def embed_collection(
        self, collection_id: uuid.UUID, *, everything: bool, progress: Progress
    ) -> int:
        """Embed what needs it; answers how many chunks were embedded."""
        model = await self._embedder.info()
        page = self._embedder.batch_size
        async with self._pool.acquire() as connection:
            store = ChunkStore(connection)
            await store.ensure_vector_index(model.dimension)
            total = await store.count_to_embed(
                collection_id, everything=everything, model=model.name, dimension=model.dimension
            )
        done = 0
        cursor = uuid.UUID(int=0)
        await progress(done, total)
        while True:
            async with self._pool.acquire() as connection:
                chunks = await ChunkStore(connection).to_embed(
                    collection_id,
                    everything=everything,
                    model=model.name,
                    dimension=model.dimension,
                    after=cursor,
                    limit=page,
                )
            if not chunks:
                # Chunks counted at the start but deleted since (their document replaced or
                # removed) need no vector: nothing is left, so the job ends at done of done.
                await progress(done, done)
                return done
            vectors = await embed_passages(self._embedder, [passage for _, passage in chunks])
            await self._write(
                [
                    (chunk_id, windows, model.name, model.dimension)
                    for (chunk_id, _), windows in zip(chunks, vectors, strict=True)
                ]
            )
            cursor = chunks[-1][0]
            done += len(chunks)
            await progress(done, max(total, done))

    async def _write(self, vectors: list[tuple[uuid.UUID, list[list[float]], str, int]]) -> None:
        """One page of vectors, in one transaction. Its rows are locked first, without waiting:
        a writer replacing or deleting their documents (or the collection) locks them in
        document order, this page in id order, and waiting on each other deadlocked, failing
        the delete or the job. Held rows are tried again once the writer is done (a deleted row
        is then simply not there)."""
        pause = LOCK_RETRY_FIRST_SECONDS
        while True:
            try:
                async with self._pool.acquire() as connection, connection.transaction():
                    await ChunkStore(connection).write_vectors(vectors)
                return
            except asyncpg.LockNotAvailableError:
                await asyncio.sleep(pause)
                pause = min(pause * 2, LOCK_RETRY_MAX_SECONDS)
