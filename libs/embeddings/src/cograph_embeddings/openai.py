"""Any OpenAI-compatible /v1/embeddings endpoint: OpenAI, Azure, TEI, vLLM, Ollama, Infinity."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx
import msgspec

from cograph_embeddings.base import EmbeddingError, EmbeddingProvider, ModelInfo


class _Item(msgspec.Struct):
    index: int
    embedding: list[float]


class _Response(msgspec.Struct):
    data: list[_Item]


# A liveness check answers quickly or counts as a failure: a probe must not wait on a slow endpoint.
LIVENESS_TIMEOUT_SECONDS = 2.0


def _header_safe_key(api_key: str) -> str:
    """The key without the whitespace around it (a key read from a file or a Secret made from
    one ends with a newline); EmbeddingError, not quoting it, when what is left cannot be sent
    in a header."""
    key = api_key.strip()
    if not (key.isascii() and key.isprintable()):
        raise EmbeddingError(
            "COGRAPH_EMBEDDING__API_KEY holds a character an HTTP header cannot carry (a control"
            " character, or a letter outside ASCII such as a typographic quote): set the key alone"
        )
    return key


class OpenAIProvider(EmbeddingProvider):
    kind = "openai"
    remote = True

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        batch_size: int,
        timeout_seconds: float,
        dimensions: int = 0,
    ) -> None:
        super().__init__(batch_size)
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._dimensions = dimensions
        self._timeout = timeout_seconds
        key = _header_safe_key(api_key)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(timeout_seconds))
        self._info: ModelInfo | None = None
        self._info_lock = asyncio.Lock()

    async def info(self) -> ModelInfo:
        async with self._info_lock:
            if self._info is None:
                dimension = self._dimensions or len((await self._embed_batch(["dimension probe"]))[0])
                self._info = ModelInfo(self._model, dimension)
        return self._info

    async def check_alive(self) -> None:
        """Embed one word: info() is remembered for good, and with dimensions configured it never
        asks the endpoint at all, so it says nothing about the endpoint now."""
        timeout = min(self._timeout, LIVENESS_TIMEOUT_SECONDS)
        try:
            await asyncio.wait_for(self._embed_batch(["ping"]), timeout)
        except TimeoutError:
            raise EmbeddingError(
                f"the embedding endpoint {self._url} did not answer within {timeout:g} s"
            ) from None

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        body: dict[str, object] = {"model": self._model, "input": list(texts)}
        if self._dimensions:
            body["dimensions"] = self._dimensions
        try:
            # httpx's timeout bounds each read: a body sent a little at a time never trips it
            response = await asyncio.wait_for(self._client.post(self._url, json=body), self._timeout)
        except (httpx.TimeoutException, TimeoutError):
            raise EmbeddingError(
                f"the embedding endpoint {self._url} did not answer within {self._timeout:g} s"
            ) from None
        except httpx.LocalProtocolError:  # its words would quote the headers, the key among them
            raise EmbeddingError(
                f"the request to the embedding endpoint {self._url} could not be written"
            ) from None
        except httpx.TransportError as exc:
            raise EmbeddingError(f"the embedding endpoint {self._url} is unreachable: {exc}") from None
        if response.status_code != 200:
            raise EmbeddingError(
                f"the embedding endpoint {self._url} answered {response.status_code}: {response.text[:300]}"
            )
        try:
            items = msgspec.json.decode(response.content, type=_Response).data
        except msgspec.DecodeError as exc:
            raise EmbeddingError(
                f"the embedding endpoint {self._url} answered malformed JSON: {exc}"
            ) from None
        if len(items) != len(texts):
            raise EmbeddingError(
                f"the embedding endpoint {self._url} returned {len(items)} vectors for {len(texts)} texts"
            )
        vectors = [item.embedding for item in sorted(items, key=lambda item: item.index)]
        self._check_dimension(vectors)
        return vectors

    def _check_dimension(self, vectors: list[list[float]]) -> None:
        """Every vector has the model's one dimension: the stores index by it, and a vector of
        another length would fail each write with an error about the database, not the model."""
        expected = self._dimensions or (
            self._info.dimension if self._info else len(vectors[0]) if vectors else 0
        )
        wrong = next((len(vector) for vector in vectors if len(vector) != expected), None)
        if wrong is None:
            return
        if self._dimensions:
            raise EmbeddingError(
                f"the embedding endpoint {self._url} returned {wrong}-dimension vectors although"
                f" COGRAPH_EMBEDDING__DIMENSIONS asks for {expected}: it ignores the dimensions"
                f" parameter, so set the variable to {wrong} or leave it unset"
            )
        raise EmbeddingError(
            f"the embedding endpoint {self._url} returned vectors of {expected} and {wrong} dimensions"
            f" for model {self._model!r}: a model has one dimension"
        )

    async def close(self) -> None:
        await self._client.aclose()
