"""/api/webhooks/{provider}: push webhooks of GitHub, GitLab and Gitea/Forgejo.

No bearer token: a delivery proves itself with its host's signature or secret token, which
repodocs checks against the credentials file (docs/operations.md, "Push webhooks").
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from cograph_gateway import schemas as s
from cograph_gateway.errors import problem_responses
from cograph_gateway.operations.webhooks import WebhookOperations


class WebhooksController(Controller):
    path = "/api/webhooks"
    tags = ("webhooks",)

    @post(
        "/{provider:str}",
        summary="A git host's push webhook (github, gitlab, gitea or forgejo): 202 when a sync is queued",
        description="Authenticated by the delivery's signature (X-Hub-Signature-256, X-Gitea-Signature)"
        " or secret token (X-Gitlab-Token), not by a bearer token. A push to the tracked branch of a"
        " registered repository queues one sync (202); anything else answers 200 without work.",
        responses={
            **problem_responses(403, 404),
            HTTP_200_OK: ResponseSpec(
                data_container=s.WebhookReceipt,
                description="Nothing to do: another event, branch or repository, or a delivery seen before",
            ),
        },
        security=[],
        status_code=HTTP_202_ACCEPTED,
    )
    async def deliver(
        self,
        provider: FromPath[str],
        request: Request[Any, Any, Any],
        webhooks: NamedDependency[WebhookOperations],
    ) -> Response[s.WebhookReceipt]:
        status, receipt = await webhooks.deliver(provider, dict(request.headers), await request.body())
        return Response(receipt, status_code=status)
