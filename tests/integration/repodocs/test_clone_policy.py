"""The clone policy through the real service and the real git: internal remotes are refused before
git runs, redirects are not followed, and a remote that cannot be read answers fixed words (git's
own are in the log), at registration and in a sync's error alike.

Every server here is on loopback, allowed through the settings where a test needs git to reach it.
"""

from __future__ import annotations

import contextlib
import http.server
import logging
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import ClassVar

import grpc
import msgspec
import pytest
from grpc import aio
from integration.repodocs.helpers import GitRepo, Running, running_service

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_embeddings import EmbeddingProvider
from cograph_repodocs.remotes import FETCH_FAILED
from cograph_settings import Settings
from support.cograph_process import free_port

INVALID = grpc.StatusCode.INVALID_ARGUMENT
# What git and curl say about a port: none of it may reach whoever registered the URL.
PORT_WORDS = ("refused", "connect", "Could not read", "returned error", "unable to access", "fatal")


def registration(clone_url: str, name: str = "probe") -> pb.RegisterRepositoryRequest:
    return pb.RegisterRepositoryRequest(
        ref=pb.RepositoryRef(host="example.com", owner="acme", name=name),
        visibility=pb.VISIBILITY_PRIVATE,
        owner_subject="alice",
        clone_url=clone_url,
    )


async def refused(call: Awaitable[object]) -> str:
    with pytest.raises(aio.AioRpcError) as error:
        await call
    assert error.value.code() == INVALID, error.value.details()
    return error.value.details() or ""


@contextlib.contextmanager
def listening() -> Iterator[socket.socket]:
    """A socket listening on a loopback port that nothing should ever connect to."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def accepted_nothing(sock: socket.socket) -> bool:
    try:
        connection, _ = sock.accept()
    except BlockingIOError:
        return True
    connection.close()
    return False


@contextlib.asynccontextmanager
async def repodocs(
    settings: Settings, database: str, embedder: EmbeddingProvider, *, schemes: list[str], hosts: list[str]
) -> AsyncIterator[Running]:
    """The service with the clone policy widened as an administrator would."""
    config = msgspec.structs.replace(
        settings.repodocs, clone_allowed_schemes=schemes, clone_allowed_hosts=hosts
    )
    async with running_service(
        msgspec.structs.replace(settings, repodocs=config), database, embedder
    ) as running:
        yield running


async def test_by_default_internal_and_unencrypted_remotes_are_refused_before_git_runs(
    service: Running,
) -> None:
    with listening() as sock:
        port = sock.getsockname()[1]
        for url, why in [
            (f"http://127.0.0.1:{port}/x.git", "clone URLs must use https or ssh (this one uses http)"),
            (f"git://127.0.0.1:{port}/x.git", "clone URLs must use https or ssh (this one uses git)"),
            (f"https://127.0.0.1:{port}/x.git", "host 127.0.0.1 is an internal address (loopback)"),
            (f"ssh://git@127.0.0.1:{port}/x.git", "host 127.0.0.1 is an internal address (loopback)"),
            (f"https://localhost:{port}/x.git", "host localhost resolves to an internal address (loopback)"),
            (f"[git@localhost:{port}]:x.git", "host localhost resolves to an internal address (loopback)"),
            (f"https://[::ffff:127.0.0.1]:{port}/x.git", "is an internal address (loopback)"),
            (f"https://2130706433:{port}/x.git", "resolves to an internal address (loopback)"),
            (f"ext::nc 127.0.0.1 {port}", "names a git remote helper (ext::)"),
        ]:
            details = await refused(service.stub.RegisterRepository(registration(url)))
            assert why in details, url
            assert "COGRAPH_REPODOCS__CLONE_ALLOWED_" in details or "remote helper" in details, details
        assert accepted_nothing(sock)
    assert not (await service.stub.ListRepositories(pb.ListRepositoriesRequest())).repositories


async def test_an_unreachable_remote_answers_fixed_words_and_git_tells_the_log(
    settings: Settings, database: str, embedder: EmbeddingProvider, caplog: pytest.LogCaptureFixture
) -> None:
    closed = free_port()
    allowed = ["https", "ssh", "http"]
    async with repodocs(
        settings, database, embedder, schemes=allowed, hosts=["127.0.0.1", "localhost"]
    ) as service:
        for url in (f"http://127.0.0.1:{closed}/x.git", f"https://localhost:{closed}/x.git"):
            with caplog.at_level(logging.WARNING, logger="cograph_repodocs"):
                caplog.clear()
                details = await refused(service.stub.RegisterRepository(registration(url)))
            assert details.startswith(FETCH_FAILED), details
            assert not [word for word in PORT_WORDS if word in details], details
            # git's own words, with the URL they are about, are in the server's log.
            assert f"git could not read {url}: git ls-remote failed: fatal: unable to access" in caplog.text


class _Redirect(http.server.BaseHTTPRequestHandler):
    target: ClassVar[str] = ""
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        self.send_response(302)
        self.send_header("Location", f"{self.target}{self.path}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def redirecting_to(target: str) -> Iterator[tuple[int, list[str]]]:
    """An HTTP server on loopback that redirects every request to `target`; its port and the
    paths it was asked for."""
    asked: list[str] = []
    handler = type("Redirect", (_Redirect,), {"target": target, "asked": asked})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


async def test_a_redirect_is_not_followed(
    settings: Settings, database: str, embedder: EmbeddingProvider, caplog: pytest.LogCaptureFixture
) -> None:
    """The host checked is the host contacted: a redirect would take git anywhere, unchecked."""
    async with repodocs(settings, database, embedder, schemes=["http"], hosts=["127.0.0.1"]) as service:
        with (
            listening() as inside,
            redirecting_to(f"http://127.0.0.1:{inside.getsockname()[1]}") as (port, asked),
        ):
            with caplog.at_level(logging.WARNING, logger="cograph_repodocs"):
                details = await refused(
                    service.stub.RegisterRepository(registration(f"http://127.0.0.1:{port}/x.git"))
                )
            assert asked, "git asked the allowed server first"
            assert accepted_nothing(inside)
    assert details.startswith(FETCH_FAILED), details
    assert "returned error: 302" in caplog.text


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """`git daemon` serving the repositories under `base` on a loopback port, stopped after."""
    port = free_port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert daemon.poll() is None, "git daemon exited"
            assert time.monotonic() < deadline, "git daemon did not listen within 10 s"
            time.sleep(0.05)
        yield port
    finally:
        daemon.terminate()
        daemon.wait(10)


async def test_a_sync_that_cannot_fetch_records_fixed_words_and_a_narrowed_policy_is_applied_on_sync(
    settings: Settings, database: str, embedder: EmbeddingProvider, tmp_path: Path
) -> None:
    origin = GitRepo(tmp_path / "served" / "tools")
    origin.commit("first", {"README.md": "# Tools\n\nFirst.\n"})
    git_too = ["https", "ssh", "git"]
    async with repodocs(settings, database, embedder, schemes=git_too, hosts=["127.0.0.0/8"]) as service:
        with git_daemon(tmp_path / "served") as port:
            url = f"git://127.0.0.1:{port}/tools"
            repository = await service.register("tools", clone_url=url)
            assert (await service.sync(repository.id)).status == pb.SYNC_STATUS_SUCCESS
        # The remote stops answering: readers of the repository see what to check, not git's words.
        origin.commit("second", {"README.md": "# Tools\n\nSecond.\n"})
        lost = await service.sync(repository.id)
        assert lost.status == pb.SYNC_STATUS_ERROR
        assert lost.error.startswith(FETCH_FAILED), lost.error
        assert not [word for word in PORT_WORDS if word in lost.error], lost.error

    # The administrator narrows the policy again: the repository's next sync is refused, in words.
    async with running_service(settings, database, embedder) as strict:
        refused_sync = await strict.sync(repository.id)
    assert refused_sync.status == pb.SYNC_STATUS_ERROR
    assert refused_sync.error.startswith("clone URLs must use https or ssh (this one uses git)"), (
        refused_sync.error
    )
