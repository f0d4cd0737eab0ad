"""Push webhooks of git hosts: handed to repodocs as delivered, which verifies them with the
secrets it holds (the gateway holds none) and queues the syncs.

A delivery carries no bearer token: its signature (GitHub, Gitea/Forgejo) or secret token (GitLab)
is its authentication, so this group acts for no principal (policy.py: Rule.SIGNED_DELIVERY).
"""

from __future__ import annotations

from collections.abc import Mapping

from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph_gateway.backends import Backends
from cograph_gateway.errors import Problem
from cograph_gateway.schemas import WebhookReceipt

PROVIDERS = {
    "github": rpb.WEBHOOK_PROVIDER_GITHUB,
    "gitlab": rpb.WEBHOOK_PROVIDER_GITLAB,
    "gitea": rpb.WEBHOOK_PROVIDER_GITEA,
    "forgejo": rpb.WEBHOOK_PROVIDER_GITEA,  # Forgejo signs as Gitea does
}
# The headers the hosts' schemes read; no other (cookies, authorization) leaves the gateway.
_FORWARDED = ("x-github-", "x-hub-signature-256", "x-gitlab-", "x-gitea-", "x-forgejo-")
_MAX_HEADER_CHARS = 1000


class WebhookOperations:
    def __init__(self, backends: Backends) -> None:
        self._backends = backends

    async def deliver(
        self, provider: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, WebhookReceipt]:
        """The HTTP status and receipt of one delivery; Problem 401 or 403 when it is refused."""
        kind = PROVIDERS.get(provider)
        if kind is None:
            raise Problem(404, f"no webhook endpoint for {provider!r}: github, gitlab, gitea or forgejo")
        forwarded = {
            name.lower(): value[:_MAX_HEADER_CHARS]
            for name, value in headers.items()
            if name.lower().startswith(_FORWARDED)
        }
        response = await self._backends.repodocs.DeliverWebhook(
            rpb.DeliverWebhookRequest(provider=kind, headers=forwarded, body=body)
        )
        if response.verdict == rpb.WEBHOOK_VERDICT_UNAUTHENTICATED:
            raise Problem(401, response.reason)
        if response.verdict == rpb.WEBHOOK_VERDICT_FORBIDDEN:
            raise Problem(403, response.reason)
        if response.verdict == rpb.WEBHOOK_VERDICT_QUEUED:
            return 202, WebhookReceipt(verdict="queued", reason=response.reason, queued=response.queued)
        return 200, WebhookReceipt(verdict="ignored", reason=response.reason, queued=0)
