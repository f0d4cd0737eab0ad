"""One sync of one repository: fetch, index code symbols, index_repo_docs, link.

Everything slow and fallible happens before the write transaction: fetching, walking,
parsing, chunking and embedding. The index is then changed in one transaction that
also records the sync's success, so a sync that fails at any point leaves the
previously indexed data exactly as it was. Each step tells the sync's progress where it is.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
from pgvector import Vector

from cograph_embeddings import EmbeddingProvider, ModelInfo
from cograph_repodocs.application.code_index import CodeScan, NodePlan, embedding_text, plan_nodes, scan_code
from cograph_repodocs.application.doc_index import DocPlan, plan_documents
from cograph_repodocs.application.linking import ChunkText, Symbols, link_chunks
from cograph_repodocs.application.progress import SyncProgress
from cograph_repodocs.checkouts import Checkout, Checkouts
from cograph_repodocs.domain.chunking import WordWindowChunker
from cograph_repodocs.stores.code import CodeStore, StoredNode
from cograph_repodocs.stores.documents import DocumentState, DocumentStore, NewChunk
from cograph_repodocs.stores.repositories import RepositoryRow
from cograph_repodocs.stores.search import SearchStore
from cograph_repodocs.stores.syncs import SyncPhase, SyncResult, SyncStore
from cograph_repodocs.vectors import Embedder
from cograph_retrieval import Passage

log = logging.getLogger(__name__)


class Prepared(msgspec.Struct, frozen=True, kw_only=True):
    """What a sync computed before writing anything."""

    model: ModelInfo
    states: list[DocumentState]
    code: CodeScan
    nodes: NodePlan
    node_vectors: dict[uuid.UUID, Vector]
    docs: DocPlan
    chunks: list[NewChunk]


class SyncPipeline:
    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        provider: EmbeddingProvider,
        checkouts: Checkouts,
        *,
        max_file_bytes: int,
    ) -> None:
        self._pool = pool
        self._provider = provider
        self._checkouts = checkouts
        self._max_file_bytes = max_file_bytes
        self._chunker = WordWindowChunker()

    def checkout_root(self, repository: RepositoryRow) -> Path:
        return self._checkouts.root(repository)

    async def run(
        self,
        repository: RepositoryRow,
        sync_id: uuid.UUID,
        *,
        force_relink: bool,
        progress: SyncProgress | None = None,
    ) -> SyncResult:
        progress = progress or SyncProgress()
        async with self._pool.acquire() as connection:
            synced_commit = await SyncStore(connection).synced_commit(repository.id)
        progress.enter(SyncPhase.FETCH)
        checkout = await self._checkouts.update(repository)
        try:
            return await self._index(repository, sync_id, checkout, progress, force_relink=force_relink)
        except BaseException:
            if checkout.commit_sha != synced_commit:
                await self._checkouts.restore(repository, synced_commit)
            raise

    async def _index(
        self,
        repository: RepositoryRow,
        sync_id: uuid.UUID,
        checkout: Checkout,
        progress: SyncProgress,
        *,
        force_relink: bool,
    ) -> SyncResult:
        began = time.perf_counter()
        embedder = Embedder(self._provider, progress.embedded)
        prepared = await self._prepare(repository, checkout, embedder, progress)
        progress.enter(SyncPhase.LINK)
        async with self._pool.acquire() as connection, connection.transaction():
            await SyncStore(connection).hold_running(sync_id)
            result = await self._write(
                repository, connection, prepared, checkout.commit_sha, force_relink=force_relink
            )
            await SyncStore(connection).succeed(sync_id, result, progress.snapshot()[1])
        log.info(
            "synced %s at %s in %.2f s (embedding %.2f s): %s, %d code nodes, %d mentions",
            repository.ref,
            checkout.commit_sha[:12] or "a plain directory",
            time.perf_counter() - began,
            embedder.seconds,
            msgspec.to_builtins(result.counters),
            result.code_nodes,
            result.mentions,
        )
        return result

    async def _prepare(
        self, repository: RepositoryRow, checkout: Checkout, embedder: Embedder, progress: SyncProgress
    ) -> Prepared:
        """Everything slow or fallible, before any write: read state, walk, parse, chunk, embed."""
        progress.enter(SyncPhase.DISCOVER)
        model = await embedder.model()
        chunker = self._chunker
        async with self._pool.acquire() as connection:
            await SearchStore(connection).ensure_vector_indexes(model.dimension)
            code_hashes = await CodeStore(connection).file_hashes(repository.id)
            states = await DocumentStore(connection).states(
                repository.id, model, chunker.max_words, chunker.overlap_words
            )
        # Walking, hashing, parsing and chunking block: off the event loop, which keeps serving RPCs.
        root, ignored, most = checkout.root, checkout.ignored, self._max_file_bytes
        code = await asyncio.to_thread(scan_code, root, code_hashes, most, ignored, progress)
        docs = await asyncio.to_thread(plan_documents, root, states, most, chunker, ignored, progress)
        nodes, stale_nodes = await self._plan_nodes(repository, code, model)

        # Each chunk is embedded in the context of its document's title and path and its headings.
        passages = [
            (NewChunk(uuid.uuid4(), document.id, chunk, None), document)
            for document in docs.prepared
            for chunk in document.chunked.chunks
        ]
        chunk_texts = await embedder.windows(
            [
                Passage((d.chunked.title, d.file.path, *c.chunk.heading_path), c.chunk.text)
                for c, d in passages
            ]
        )
        node_texts = [
            embedding_text(n.symbol.qualified_name, n.symbol.kind.value, n.symbol.signature)
            for n in nodes.to_embed
        ] + [embedding_text(n.qualified_name, n.kind.value, n.signature) for n in stale_nodes]
        progress.to_embed(sum(len(group) for group in chunk_texts) + len(node_texts))
        # Entered once the total is known: whoever watches the embed phase sees what it must reach
        # (cutting the chunks into the model's windows, above, counts as chunking).
        progress.enter(SyncPhase.EMBED)
        chunk_vectors = await embedder.embed_windows(chunk_texts)
        chunks = [
            msgspec.structs.replace(c, vector=v[0], windows=v[1:])
            for (c, _), v in zip(passages, chunk_vectors, strict=True)
        ]
        node_ids = [n.id for n in nodes.to_embed] + [n.id for n in stale_nodes]
        node_vectors = dict(zip(node_ids, await embedder.embed(node_texts), strict=True))
        return Prepared(
            model=model,
            states=states,
            code=code,
            nodes=nodes,
            node_vectors=node_vectors,
            docs=docs,
            chunks=chunks,
        )

    async def _write(
        self,
        repository: RepositoryRow,
        connection: asyncpg.pool.PoolConnectionProxy[Any],
        prepared: Prepared,
        commit_sha: str,
        *,
        force_relink: bool,
    ) -> SyncResult:
        """The index changes of one sync; the caller holds the transaction."""
        code, nodes, docs, model = prepared.code, prepared.nodes, prepared.docs, prepared.model
        code_store = CodeStore(connection)
        await code_store.delete_files(repository.id, code.deleted)
        await code_store.put_files(repository.id, {f.path: f.content_hash for f in code.parsed})
        await code_store.delete_nodes(nodes.deletes)
        await code_store.update_nodes(nodes.updates)
        await code_store.insert_nodes(repository.id, nodes.inserts, prepared.node_vectors, model)
        await code_store.replace_aliases(repository.id, {f.path: f.aliases for f in code.parsed})
        inserted = {n.id for n in nodes.inserts}
        await code_store.set_embeddings(
            {node_id: v for node_id, v in prepared.node_vectors.items() if node_id not in inserted}, model
        )

        doc_store = DocumentStore(connection)
        await self._write_documents(repository, doc_store, docs, prepared.states)
        chunker = self._chunker
        await doc_store.insert_chunks(
            repository.id, prepared.chunks, model, chunker.max_words, chunker.overlap_words
        )
        # New or removed symbols change what unchanged prose points at: all of it is linked again.
        symbols_changed = bool(nodes.inserts or nodes.deletes)
        await self._link(
            repository, code_store, doc_store, prepared, force_relink=force_relink or symbols_changed
        )
        return SyncResult(
            commit_sha=commit_sha,
            counters=docs.counters,
            code_nodes=await code_store.count(repository.id),
            mentions=await doc_store.count_mentions(repository.id),
            skipped=sorted(docs.skipped + code.skipped, key=lambda s: (s.path, s.reason)),
        )

    async def _plan_nodes(
        self, repository: RepositoryRow, code: CodeScan, model: ModelInfo
    ) -> tuple[NodePlan, list[StoredNode]]:
        """The node plan of the changed files, and the nodes of untouched files to re-embed
        (their vector is missing or came from another model, or from this one at another dimension)."""
        touched = {f.path for f in code.parsed} | set(code.deleted)
        async with self._pool.acquire() as connection:
            store = CodeStore(connection)
            existing = await store.nodes_of_files(repository.id, [f.path for f in code.parsed])
            outdated = await store.nodes_to_embed(repository.id, model)
        stale = [n for n in outdated if n.path not in touched]
        return plan_nodes(code.parsed, existing, model), stale

    async def _write_documents(
        self, repository: RepositoryRow, store: DocumentStore, docs: DocPlan, states: list[DocumentState]
    ) -> None:
        # Deleting a document takes its chunks and their mentions with it.
        await store.delete([state.id for state in docs.deleted])
        changed = [p for p in docs.prepared if not p.is_new]
        await store.delete_chunks([p.id for p in changed])
        await store.update([(p.id, p.file, p.chunked.title) for p in changed])
        await store.insert(
            repository.id,
            [(p.id, p.file, p.chunked.title, docs.slugs[p.id]) for p in docs.prepared if p.is_new],
        )
        # A document keeps its slug; only one that no longer derives from its path (the slug steps
        # changed since it was stored) gets a new one.
        current = {state.id: state.slug for state in states}
        moved = {
            doc_id: slug
            for doc_id, slug in docs.slugs.items()
            if doc_id in current and current[doc_id] != slug
        }
        await store.set_slugs(moved)

    async def _link(
        self,
        repository: RepositoryRow,
        code_store: CodeStore,
        doc_store: DocumentStore,
        prepared: Prepared,
        *,
        force_relink: bool,
    ) -> None:
        """Link the chunks written now; with force_relink, every chunk of the repository again."""
        if force_relink:
            await doc_store.delete_mentions(repository.id)
            texts = [ChunkText(*row) for row in await doc_store.chunk_texts(repository.id)]
        else:
            paths = {document.id: document.file.path for document in prepared.docs.prepared}
            texts = [
                ChunkText(c.id, paths[c.document_id], c.chunk.text, c.chunk.chunk_index, c.chunk.heading_path)
                for c in prepared.chunks
            ]
        if not texts:
            return
        rows, aliases = await code_store.symbol_rows(repository.id), await code_store.aliases(repository.id)
        symbols = Symbols(rows, aliases)
        mentions = await asyncio.to_thread(link_chunks, texts, symbols)
        await doc_store.insert_mentions(mentions)
