"""The packaged model behind the OpenAI embeddings protocol, as TEI or vLLM would serve it.

A `cograph up` configured with `COGRAPH_EMBEDDING__PROVIDER=openai` embeds through it over real HTTP;
a test starts it late, or stops it, to give the system an embedding endpoint that is down and then
comes back.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, post
from litestar.params import JSONBody

from cograph_embeddings import EmbeddingProvider
from cograph_service.http import HttpServer


class _EmbeddingsRequest(msgspec.Struct):
    model: str
    input: list[str]


class ModelEndpoint:
    """POST /v1/embeddings answered by a real EmbeddingProvider, on a loopback port."""

    def __init__(self, provider: EmbeddingProvider) -> None:
        @post("/v1/embeddings", status_code=200)
        async def embeddings(data: JSONBody[_EmbeddingsRequest]) -> dict[str, Any]:
            vectors = await provider.embed(data.input)
            items = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
            return {"object": "list", "model": data.model, "data": items}

        self._server = HttpServer("model-endpoint", Litestar([embeddings], logging_config=None))

    async def start(self, port: int) -> str:
        """Listen on 127.0.0.1:port; answers the base URL a provider is configured with."""
        await self._server.start("127.0.0.1", port)
        return f"http://127.0.0.1:{port}/v1"

    async def stop(self) -> None:
        await self._server.stop()
