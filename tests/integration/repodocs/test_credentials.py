"""Git credentials from the credentials file, against real git servers on loopback: a token over
HTTP (git http-backend behind a server that wants it) and a key over SSH (an sshd with a test key
and a host key checked against known_hosts). They clone, rotate without a restart, fail in words
that say where credentials go, and appear in no log line, response or database dump.
"""

from __future__ import annotations

import base64
import logging
import os
import tempfile
import uuid
from pathlib import Path

import httpx
import msgspec
import pytest
from e2e.gateway.helpers import is_problem
from integration.repodocs.helpers import GitRepo, running_service

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph_embeddings import EmbeddingProvider
from cograph_repodocs.remotes import HOST_KEY_REFUSED, NOT_AUTHORIZED
from cograph_settings import Settings
from support.embedded_postgres import dump
from support.git_servers import SSHD, bare_clone, keygen, sshd, token_git_server

Auth = dict[str, dict[str, str]]
REPO = "/api/repos/example.com/acme/tools"


def credentials_path(tmp_path: Path) -> Path:
    return tmp_path / "secret" / "credentials.toml"


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """The service as an administrator with an internal git server runs it: http and loopback
    allowed, credentials from a file (not there until a test writes it)."""
    credentials_path(tmp_path).parent.mkdir()
    repodocs = msgspec.structs.replace(
        settings.repodocs,
        clone_allowed_schemes=["https", "ssh", "http"],
        clone_allowed_hosts=["127.0.0.1"],
        credentials_file=str(credentials_path(tmp_path)),
    )
    return msgspec.structs.replace(settings, repodocs=repodocs)


def rotate(path: Path, text: str) -> None:
    """As a Secret's update does: the new file beside, then renamed over the old one."""
    fresh = path.with_name(f".{uuid.uuid4().hex}")
    fresh.write_text(text)
    os.replace(fresh, path)


def https_entry(token: str, path: str = "") -> str:
    return f'[[https]]\nhost = "127.0.0.1"\npath = "{path}"\ntoken = "{token}"\n'


def leftover_secrets() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("cograph-git-")}


async def test_an_https_token_from_the_file_clones_rotates_and_is_never_shown(
    gateway: httpx.AsyncClient,
    auth: Auth,
    database: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    before = leftover_secrets()
    origin = GitRepo(tmp_path / "work" / "tools")
    origin.commit("first", {"README.md": "# Tools\n\nFirst words.\n"})
    served = bare_clone(origin.root, tmp_path / "served" / "tools.git")
    first, second = f"tok-{uuid.uuid4().hex}", f"tok-{uuid.uuid4().hex}"
    answers: list[httpx.Response] = []
    path = credentials_path(tmp_path)
    with token_git_server(served.parent, first) as server:
        body = {
            "host": "example.com",
            "owner": "acme",
            "name": "tools",
            "clone_url": server.url("tools.git"),
            "visibility": "private",
        }
        # No file yet: the server's refusal says where credentials go.
        answers.append(await gateway.post("/api/repos", json=body, headers=auth["alice"]))
        refused = is_problem(answers[-1], 400)
        assert refused["detail"].startswith(NOT_AUTHORIZED), refused["detail"]

        # A URL carrying the token is refused before anything is fetched, whoever registers it.
        asked = len(server.refused)
        for carrying in (
            f"http://x-access-token:{first}@127.0.0.1:{server.port}/tools.git",
            f"http://{first}@127.0.0.1:{server.port}/tools.git",
        ):
            answer = await gateway.post(
                "/api/repos", json={**body, "clone_url": carrying}, headers=auth["admin"]
            )
            answers.append(answer)
            detail = is_problem(answer, 400)["detail"]
            assert "clone_url carries credentials" in detail, detail
            assert "COGRAPH_REPODOCS__CREDENTIALS_FILE" in detail, detail
        assert len(server.refused) == asked

        # An entry for another owner path does not match this repository.
        rotate(path, https_entry(first, path="someone-else"))
        answers.append(await gateway.post("/api/repos", json=body, headers=auth["alice"]))
        assert is_problem(answers[-1], 400)["detail"].startswith(NOT_AUTHORIZED)

        # The token in the file (read again: no restart) lets git clone.
        rotate(path, https_entry("wrong") + https_entry(first, path="tools.git"))
        registered = await gateway.post("/api/repos", json=body, headers=auth["alice"])
        answers.append(registered)
        assert registered.status_code == 201, registered.text
        synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
        answers.append(synced)
        assert synced.json()["status"] == "success", synced.text

        # The server rotates its token: the old one is refused, and the sync says why.
        server.token = second
        origin.commit("second", {"README.md": "# Tools\n\nSecond words.\n"})
        origin.git("push", "--quiet", str(served), "main")
        failed = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
        answers.append(failed)
        assert failed.json()["status"] == "error", failed.text
        assert failed.json()["error"].startswith(NOT_AUTHORIZED), failed.text
        assert any(first.encode() in _basic(given) for given in server.refused), "the old token was sent"

        # The file follows: the next sync uses the new token, without a restart.
        path.write_text(https_entry(second))  # in place this time, as an editor would
        synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
        answers.append(synced)
        assert synced.json()["status"] == "success", synced.text
        docs = await gateway.get(f"{REPO}/documents", headers=auth["alice"])
        answers.append(docs)
        assert docs.status_code == 200, docs.text

    for reader in (auth["admin"], auth["alice"]):
        answers.append(await gateway.get(REPO, headers=reader))
        answers.append(await gateway.get(f"{REPO}/syncs", headers=reader))
        answers.append(await gateway.get("/api/repos", headers=reader))
    shown = "\n".join(answer.text for answer in answers)
    everything = {"responses": shown, "logs": caplog.text, "database": dump(database)}
    for token in (first, second):
        for where, text in everything.items():
            assert token not in text, f"a token is in the {where}"
    assert "Second words" in dump(database)  # the dump is of the synced repository's database
    assert leftover_secrets() == before, "a credential stayed on disk after git ended"


def _basic(header: str) -> bytes:
    scheme, _, encoded = header.partition(" ")
    return base64.b64decode(encoded) if scheme == "Basic" else b""


@pytest.mark.skipif(SSHD is None, reason="sshd is not installed (apt-get install openssh-server)")
async def test_an_ssh_key_from_the_file_clones_and_a_wrong_host_key_is_refused(
    settings: Settings,
    database: str,
    embedder: EmbeddingProvider,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    origin = GitRepo(tmp_path / "work" / "tools")
    origin.commit("first", {"README.md": "# Tools\n\nOver ssh.\n"})
    served = bare_clone(origin.root, tmp_path / "served" / "tools.git")
    private_key, public_key = keygen(tmp_path / "client_key")
    _, stranger = keygen(tmp_path / "stranger_key")
    path = credentials_path(tmp_path)

    def ssh_entry(known_hosts: str) -> str:
        return (
            f'[[ssh]]\nhost = "127.0.0.1"\nprivate_key = """{private_key}"""\nknown_hosts = "{known_hosts}"\n'
        )

    with sshd(tmp_path / "sshd", public_key) as server:
        rotate(path, ssh_entry(server.known_hosts()))
        async with running_service(settings, database, embedder) as service:
            repository = await service.register("tools", clone_url=server.url(served))
            synced = await service.sync(repository.id)
            assert synced.status == pb.SYNC_STATUS_SUCCESS, synced.error
            assert "README.md" in await service.documents(repository.id)

            # known_hosts that names another key for the host: ssh refuses to talk to it.
            rotate(path, ssh_entry(server.known_hosts(" ".join(stranger.split()[:2]))))
            refused = await service.sync(repository.id)
            assert refused.status == pb.SYNC_STATUS_ERROR
            assert refused.error.startswith(HOST_KEY_REFUSED), refused.error

            listed = await service.stub.ListRepositories(pb.ListRepositoriesRequest())
            syncs = await service.stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository.id))
    key_body = "".join(private_key.strip().splitlines()[1:-1])
    shown = "\n".join(str(message) for message in (repository, synced, refused, listed, syncs))
    for where, text in {"responses": shown, "logs": caplog.text, "database": dump(database)}.items():
        for line in private_key.strip().splitlines()[1:-1]:
            assert line not in text, f"the private key is in the {where}"
    assert key_body
    assert "Over ssh" in dump(database)
