"""Push webhooks as pure decisions: what each host's payload says (repository, branch, delivery
id, date), each host's proof checked against the secret (good, missing, wrong, over another
body), and the replay window."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from cograph_repodocs.application.scheduler import interval_in_force
from cograph_repodocs.domain.webhooks import (
    Location,
    Provider,
    Refused,
    Verdict,
    check_fresh,
    is_push,
    location,
    read,
    verify,
)

SECRET = "a-webhook-secret-of-some-length"
BODY = b'{"ref": "refs/heads/main"}'
DIGEST = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()


def test_a_github_push_names_its_repository_branch_delivery_and_date() -> None:
    body = {
        "ref": "refs/heads/main",
        "repository": {
            "clone_url": "https://github.com/Acme/API.git",
            "ssh_url": "git@github.com:Acme/API.git",
            "html_url": "https://github.com/Acme/API",
            "default_branch": "main",
            "pushed_at": 1_700_000_000,
        },
    }
    headers = {"x-github-event": "push", "x-github-delivery": "d-1"}
    delivery = read(Provider.GITHUB, headers, json.dumps(body).encode())
    assert is_push(delivery)
    assert delivery.delivery_id == "d-1"
    assert delivery.host == "github.com"
    assert delivery.locations == (Location("github.com", ("acme", "api")),)
    assert delivery.branch == "main"
    assert delivery.pushed_at == 1_700_000_000


def test_a_gitlab_push_reads_its_project_and_a_gitea_push_its_repository() -> None:
    gitlab = {
        "object_kind": "push",
        "ref": "refs/heads/dev",
        "project": {"git_http_url": "https://gitlab.corp/group/sub/api.git", "default_branch": "main"},
    }
    delivery = read(
        Provider.GITLAB,
        {"x-gitlab-event": "Push Hook", "x-gitlab-event-uuid": "u-1"},
        json.dumps(gitlab).encode(),
    )
    assert (is_push(delivery), delivery.delivery_id, delivery.branch) == (True, "u-1", "dev")
    assert delivery.locations == (Location("gitlab.corp", ("group", "sub", "api")),)
    assert delivery.pushed_at is None  # GitLab dates no push
    gitea = {"ref": "refs/tags/v1", "repository": {"clone_url": "https://gitea.corp/o/r.git"}}
    tag = read(
        Provider.GITEA, {"x-forgejo-event": "push", "x-forgejo-delivery": "f-1"}, json.dumps(gitea).encode()
    )
    assert (is_push(tag), tag.delivery_id, tag.branch, tag.host) == (True, "f-1", None, "gitea.corp")


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_body_that_is_no_json_object_needs_no_work(body: bytes) -> None:
    with pytest.raises(Refused) as refused:
        read(Provider.GITHUB, {"x-github-event": "push"}, body)
    assert refused.value.verdict is Verdict.IGNORED


def test_an_event_without_a_repository_names_no_host() -> None:
    delivery = read(Provider.GITHUB, {"x-github-event": "ping"}, b'{"zen": "Keep it simple."}')
    assert delivery.host is None
    assert not is_push(delivery)


def test_a_clone_url_and_a_web_url_are_one_location() -> None:
    assert location("git@github.com:acme/api.git") == location("https://GitHub.com/acme/API/")
    assert location("/srv/git/api") is None
    assert location("ext::sh -c x") is None


@pytest.mark.parametrize(
    ("provider", "headers"),
    [
        (Provider.GITHUB, {"x-hub-signature-256": f"sha256={DIGEST}"}),
        (Provider.GITHUB, {"x-hub-signature-256": f"sha256={DIGEST.upper()}"}),
        (Provider.GITEA, {"x-gitea-signature": DIGEST}),
        (Provider.GITEA, {"x-forgejo-signature": DIGEST}),
        (Provider.GITLAB, {"x-gitlab-token": SECRET}),
    ],
)
def test_each_hosts_proof_of_the_secret_is_accepted(provider: Provider, headers: dict[str, str]) -> None:
    verify(provider, headers, BODY, SECRET)


OTHER = hmac.new(SECRET.encode(), BODY + b" ", hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("provider", "headers", "said"),
    [
        (Provider.GITHUB, {}, "no X-Hub-Signature-256 header"),
        (Provider.GITHUB, {"x-hub-signature-256": DIGEST}, "is not sha256=<hex>"),
        (Provider.GITHUB, {"x-hub-signature-256": f"sha256={OTHER}"}, "does not match"),
        (Provider.GITHUB, {"x-hub-signature": "sha1=" + "0" * 40}, "no X-Hub-Signature-256 header"),
        (Provider.GITEA, {}, "no X-Gitea-Signature header"),
        (Provider.GITEA, {"x-gitea-signature": OTHER}, "does not match"),
        (Provider.GITLAB, {}, "no X-Gitlab-Token header"),
        (Provider.GITLAB, {"x-gitlab-token": SECRET + "x"}, "is not this host's webhook secret"),
    ],
)
def test_a_missing_or_wrong_proof_is_unauthenticated(
    provider: Provider, headers: dict[str, str], said: str
) -> None:
    with pytest.raises(Refused) as refused:
        verify(provider, headers, BODY, SECRET)
    assert refused.value.verdict is Verdict.UNAUTHENTICATED
    assert said in refused.value.reason
    assert SECRET not in refused.value.reason


def test_a_push_dated_outside_the_window_is_a_replay() -> None:
    body = json.dumps({"ref": "refs/heads/main", "repository": {"pushed_at": 1000}}).encode()
    delivery = read(Provider.GITHUB, {"x-github-event": "push"}, body)
    check_fresh(delivery, now=1000 + 599, window_seconds=600)
    with pytest.raises(Refused) as refused:
        check_fresh(delivery, now=1000 + 601, window_seconds=600)
    assert refused.value.verdict is Verdict.FORBIDDEN
    undated = read(Provider.GITLAB, {}, body)
    check_fresh(undated, now=10**10, window_seconds=600)  # no date: only the delivery id tells


@pytest.mark.parametrize(
    ("interval", "webhook_interval", "on", "in_force"),
    [
        (3600, 86400, False, 3600),
        (3600, 86400, True, 86400),  # webhooks on: the schedule is the safety net
        (3600, 0, True, 3600),  # 0: unchanged
        (172800, 86400, True, 172800),  # never shorter than asked
        (0, 86400, True, 0),  # no schedule stays none
    ],
)
def test_webhooks_lengthen_the_scheduled_sync(
    interval: float, webhook_interval: float, on: bool, in_force: float
) -> None:
    assert interval_in_force(interval, webhook_interval, on) == in_force
