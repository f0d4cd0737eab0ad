"""Push webhooks end to end, for GitHub, GitLab and Gitea: deliveries to the real gateway, verified
by the real repodocs against the secret in its credentials file, syncing a repository served by
git http-backend on loopback. A good delivery queues exactly one sync; a bad or missing signature
is a 401; a replayed delivery id queues nothing; a push GitHub dates outside the window is a 403;
a burst coalesces; other branches, repositories and hosts get no work.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from integration.repodocs.helpers import GitRepo

from cograph_settings import Settings
from support.git_servers import TokenGitServer, bare_clone, token_git_server

Auth = dict[str, dict[str, str]]
REPO = "/api/repos/example.com/acme/tools"
SECRET = f"hook-{uuid.uuid4().hex}"
TOKEN = f"tok-{uuid.uuid4().hex}"
PROVIDERS = ("github", "gitlab", "gitea")


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """http and loopback allowed; the git server's token and the hosts' webhook secret on file."""
    path = tmp_path / "credentials.toml"
    path.write_text(
        f'[[https]]\nhost = "127.0.0.1"\ntoken = "{TOKEN}"\n\n'
        f'[[webhooks]]\nhost = "127.0.0.1"\nsecret = "{SECRET}"\n'
    )
    repodocs = msgspec.structs.replace(
        settings.repodocs,
        clone_allowed_schemes=["https", "ssh", "http"],
        clone_allowed_hosts=["127.0.0.1"],
        credentials_file=str(path),
        sync_interval_seconds=0,  # no scheduled sync may be counted as the push's
    )
    return msgspec.structs.replace(settings, repodocs=repodocs)


def payload(
    provider: str, url: str, *, ref: str = "refs/heads/main", pushed_at: float | None = None
) -> bytes:
    """A push event as each host shapes it (the fields repodocs reads, and a few more)."""
    web = url.removesuffix(".git")
    if provider == "gitlab":
        body: dict[str, Any] = {
            "object_kind": "push",
            "ref": ref,
            "project": {"git_http_url": url, "web_url": web, "default_branch": "main"},
            "commits": [],
        }
    else:
        repository: dict[str, Any] = {"clone_url": url, "html_url": web, "default_branch": "main"}
        if provider == "github":
            repository["pushed_at"] = int(pushed_at or time.time())
        body = {"ref": ref, "repository": repository, "commits": []}
    return json.dumps(body).encode()


def signed(
    provider: str, body: bytes, *, secret: str = SECRET, delivery: str | None = None
) -> dict[str, str]:
    """The headers a host sends with `body`, signed with `secret`."""
    delivery = delivery or str(uuid.uuid4())
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if provider == "github":
        return {
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": f"sha256={digest}",
        }
    if provider == "gitlab":
        return {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Event-UUID": delivery, "X-Gitlab-Token": secret}
    return {"X-Gitea-Event": "push", "X-Gitea-Delivery": delivery, "X-Gitea-Signature": digest}


async def webhook_syncs(gateway: httpx.AsyncClient, auth: Auth) -> list[dict[str, Any]]:
    answer = await gateway.get(f"{REPO}/syncs", headers=auth["alice"])
    assert answer.status_code == 200, answer.text
    return [sync for sync in answer.json()["items"] if sync["trigger"] == "webhook"]


async def settled(gateway: httpx.AsyncClient, auth: Auth) -> list[dict[str, Any]]:
    """The webhook syncs once none is queued or running (30 s at most), after a moment for one
    just queued to be recorded."""
    await asyncio.sleep(0.3)
    deadline = time.monotonic() + 30
    while True:
        syncs = await webhook_syncs(gateway, auth)
        if all(sync["status"] in ("success", "error") for sync in syncs):
            return syncs
        assert time.monotonic() < deadline, f"webhook syncs still running after 30 s: {syncs}"
        await asyncio.sleep(0.2)


async def registered(gateway: httpx.AsyncClient, auth: Auth, server: TokenGitServer) -> None:
    body = {
        "host": "example.com",
        "owner": "acme",
        "name": "tools",
        "clone_url": server.url("tools.git"),
        "visibility": "private",
    }
    answer = await gateway.post("/api/repos", json=body, headers=auth["alice"])
    assert answer.status_code == 201, answer.text
    # Joins the registration's sync and waits for it: a push must not join that one.
    synced = await gateway.post(f"{REPO}/sync", params={"wait": "true"}, headers=auth["admin"])
    assert synced.json()["status"] == "success", synced.text


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_signed_push_queues_one_sync_and_nothing_else_does(
    provider: str,
    gateway: httpx.AsyncClient,
    auth: Auth,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    origin = GitRepo(tmp_path / "work" / "tools")
    origin.commit("first", {"README.md": "# Tools\n\nFirst.\n"})
    served = bare_clone(origin.root, tmp_path / "served" / "tools.git")
    endpoint = f"/api/webhooks/{provider}"

    async def deliver(body: bytes, headers: dict[str, str]) -> httpx.Response:
        return await gateway.post(
            endpoint, content=body, headers={**headers, "Content-Type": "application/json"}
        )

    with token_git_server(served.parent, TOKEN) as server:
        await registered(gateway, auth, server)
        url = server.url("tools.git")
        push = payload(provider, url)

        # Unsigned, signed with another secret, or (HMAC hosts) a body other than the one signed:
        # 401, and no work.
        unsigned = {
            k: v for k, v in signed(provider, push).items() if "Signature" not in k and "Token" not in k
        }
        bad = [unsigned, signed(provider, push, secret=f"other-{SECRET}")]
        if provider != "gitlab":  # GitLab's token signs no body
            bad.append(signed(provider, payload(provider, url, ref="refs/heads/dev")))
        for headers in bad:
            refused = await deliver(push, headers)
            assert refused.status_code == 401, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
        assert await webhook_syncs(gateway, auth) == []

        # A good delivery: one sync, which fetches the new commit.
        origin.commit("second", {"README.md": "# Tools\n\nSecond.\n"})
        origin.git("push", "--quiet", str(served), "main")
        headers = signed(provider, push)
        accepted = await deliver(push, headers)
        assert accepted.status_code == 202, accepted.text
        assert accepted.json() == {"verdict": "queued", "reason": accepted.json()["reason"], "queued": 1}
        syncs = await settled(gateway, auth)
        assert len(syncs) == 1, syncs
        assert syncs[0]["status"] == "success", syncs
        assert syncs[0]["commit_sha"] == origin.git("rev-parse", "HEAD").strip()

        # The same delivery again: received before, nothing queued.
        replayed = await deliver(push, headers)
        assert replayed.status_code == 200, replayed.text
        assert replayed.json()["verdict"] == "ignored"
        assert "received before" in replayed.json()["reason"]

        # Another branch, another repository, a tag: answered without work.
        for body in (
            payload(provider, url, ref="refs/heads/dev"),
            payload(provider, server.url("elsewhere.git")),
            payload(provider, url, ref="refs/tags/v1"),
        ):
            ignored = await deliver(body, signed(provider, body))
            assert ignored.status_code == 200, ignored.text
            assert ignored.json()["verdict"] == "ignored"

        # A host with no secret on file is refused.
        foreign = payload(provider, "https://git.example.org/acme/tools.git")
        forbidden = await deliver(foreign, signed(provider, foreign))
        assert forbidden.status_code == 403, forbidden.text
        assert "no webhook secret for host git.example.org" in forbidden.json()["detail"]

        if provider == "github":
            # GitHub dates the push: one from two hours ago is a replay, whatever its id.
            stale = payload(provider, url, pushed_at=time.time() - 7200)
            late = await deliver(stale, signed(provider, stale))
            assert late.status_code == 403, late.text
            assert "refused as a replay" in late.json()["detail"]
        assert len(await settled(gateway, auth)) == 1

        # A burst of five pushes: one sync, and at most one more for those that came during it.
        bursts = await asyncio.gather(*(deliver(push, signed(provider, push)) for _ in range(5)))
        assert [answer.status_code for answer in bursts] == [202] * 5
        after = await settled(gateway, auth)
        assert 2 <= len(after) <= 3, after

    assert SECRET not in caplog.text
    assert TOKEN not in caplog.text
