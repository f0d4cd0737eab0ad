"""Real git repositories built in a test, and a repodocs service running on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_embeddings import EmbeddingError, EmbeddingProvider, InputWindows, ModelInfo
from cograph_grpc import open_channel
from cograph_repodocs.app import create_service
from cograph_service import ServiceHost
from cograph_settings import Settings

# A waited sync embeds with the real model on a shared two-core machine: more than the default deadline.
SYNC_TIMEOUT = 120.0


# A package, and a page that mentions its code for three different reasons: `describe_field()` is
# the only public definition, `[Field][acme.fields.Field]` an explicit reference (ahead of the
# page's earlier, imported `Field`), `validate()` a member of the class its section's heading names.
ACME_PACKAGE = {
    "acme/__init__.py": 'from acme.fields import Field\n\n__all__ = ["Field"]\n',
    "acme/fields.py": (
        "class Field:\n    def validate(self, value):\n        return value\n\n\n"
        "def describe_field(field):\n    return repr(field)\n"
    ),
}
ACME_GUIDE = (
    "# Guide\n\n```python\nfrom acme import Field\n```\n\n"
    "Log one with describe_field(). Declare each input as a `Field`; the reference says more "
    "about [`Field`][acme.fields.Field].\n\n"
    "## Field\n\nEach `Field` checks its input: call `validate()` before saving.\n"
)


class GitRepo:
    """A working repository driven by the real git command line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
            cwd=self.root,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout

    def write(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        if files:
            self.write(files)
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def move(self, source: str, target: str) -> None:
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", source, target)

    def remove(self, *paths: str) -> None:
        self.git("rm", "--quiet", *paths)

    def destroy(self) -> None:
        shutil.rmtree(self.root)


class ProbeProvider(EmbeddingProvider):
    """The real provider, wrapped: counts what it embeds, and can be held back, paced or made to fail.
    Not a mock: every vector still comes from the real model."""

    kind = "probe"

    def __init__(self, inner: EmbeddingProvider) -> None:
        super().__init__(inner.batch_size)
        self._inner = inner
        self.calls = 0
        self.texts: list[str] = []
        self.gate: asyncio.Event | None = None
        self.failure: str | None = None
        self.pace = 0.0
        """Seconds each batch takes at least, as on a slower machine or model."""

    async def info(self) -> ModelInfo:
        return await self._inner.info()

    async def input_windows(self) -> InputWindows | None:
        return await self._inner.input_windows()

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        if self.gate is not None:
            await self.gate.wait()
        if self.failure is not None:
            raise EmbeddingError(self.failure)
        self.calls += 1
        self.texts.extend(texts)
        began = time.monotonic()
        vectors = await self._inner.embed(texts)
        await asyncio.sleep(self.pace - (time.monotonic() - began))  # a negative time does not wait
        return vectors


@dataclass
class Running:
    host: ServiceHost
    stub: pb_grpc.RepoDocsServiceAsyncStub
    provider: ProbeProvider
    settings: Settings

    async def register(
        self,
        name: str,
        *,
        clone_url: str | None = None,
        checkout_path: str | None = None,
        visibility: pb.Visibility = pb.VISIBILITY_PRIVATE,
        owner: str = "alice",
    ) -> pb.Repository:
        request = pb.RegisterRepositoryRequest(
            ref=pb.RepositoryRef(host="example.com", owner="acme", name=name),
            visibility=visibility,
            owner_subject=owner,
        )
        if clone_url is not None:
            request.clone_url = clone_url
        if checkout_path is not None:
            request.checkout_path = checkout_path
        return (await self.stub.RegisterRepository(request)).repository

    async def sync(self, repository_id: str, *, force_relink: bool = False) -> pb.Sync:
        response = await self.stub.SyncRepository(
            pb.SyncRepositoryRequest(repository_id=repository_id, wait=True, force_relink=force_relink),
            timeout=SYNC_TIMEOUT,
        )
        return response.sync

    async def documents(self, repository_id: str) -> dict[str, pb.DocumentSummary]:
        """Every document by path."""
        response = await self.stub.ListDocuments(
            pb.ListDocumentsRequest(repository_id=repository_id, page=pb.Page(page_size=500))
        )
        return {d.path: d for d in response.documents}


def counters(sync: pb.Sync) -> tuple[int, int, int, int, int, int]:
    """(discovered, indexed, chunks, unchanged, deleted, replaced)."""
    c = sync.counters
    return (
        c.discovered_files,
        c.indexed_documents,
        c.indexed_chunks,
        c.unchanged_documents,
        c.deleted_documents,
        c.replaced_files,
    )


@contextlib.asynccontextmanager
async def running_service(
    settings: Settings, database: str, embedder: EmbeddingProvider, *, sync_interval: float = 0.0
) -> AsyncIterator[Running]:
    """The repodocs service on loopback over a fresh database (no schedule unless asked for)."""
    settings = msgspec.structs.replace(
        settings, repodocs=msgspec.structs.replace(settings.repodocs, sync_interval_seconds=sync_interval)
    )
    provider = ProbeProvider(embedder)
    host = await create_service(settings, database, provider)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", settings.grpc)
    try:
        yield Running(host, pb_grpc.RepoDocsServiceStub(channel), provider, settings)
    finally:
        await channel.close(None)
        await host.stop()
