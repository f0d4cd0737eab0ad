"""Both embedding providers, on real parts: the packaged model, and a local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar, Request, post
from litestar.response import Stream

from cograph_embeddings import EmbeddingError, EmbeddingProvider, LocalProvider, OpenAIProvider, local
from cograph_embeddings.local import Runtime
from cograph_service import HttpServer


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_local_model_gives_unit_vectors_of_384_dimensions(embedder: EmbeddingProvider) -> None:
    info = await embedder.info()
    assert (info.name, info.dimension) == ("all-MiniLM-L6-v2", 384)
    vectors = await embedder.embed(["The cat sat on the mat.", "Rotate the signing keys every quarter."])
    assert [len(v) for v in vectors] == [384, 384]
    for vector in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, abs_tol=1e-4)


async def test_similar_sentences_are_closer_than_unrelated_ones(embedder: EmbeddingProvider) -> None:
    deploy, rollout, soup = await embedder.embed(
        [
            "How do I deploy the service to production?",
            "Steps for rolling out the application to the live environment",
            "A recipe for tomato soup with basil",
        ]
    )
    assert cosine(deploy, rollout) > cosine(deploy, soup) + 0.2


QUESTIONS = [
    "How do I deploy the service to production?",
    "Where are the nightly database snapshots kept?",
    "Rotate the signing keys every quarter.",
    "What is a zorblax?",
    "A recipe for tomato soup with basil",
    "Which port does the gateway listen on?",
]


async def test_concurrent_requests_share_forward_passes_and_each_gets_its_own_vectors(
    embedder: EmbeddingProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = [await embedder.embed_query(question) for question in QUESTIONS]
    passes: list[int] = []
    encode = local._encode

    def counted(model: Any, texts: list[str]) -> list[list[float]]:
        passes.append(len(texts))
        return encode(model, texts)

    monkeypatch.setattr(local, "_encode", counted)
    together = await asyncio.gather(*(embedder.embed_query(question) for question in QUESTIONS))
    assert sum(passes) == len(QUESTIONS)
    assert len(passes) < len(QUESTIONS)  # requests that waited for the model went through it together
    for mine, reference in zip(together, alone, strict=True):
        assert cosine(mine, reference) > 0.9999  # each caller its own vector, in its own order


async def test_a_caller_that_gives_up_does_not_disturb_the_others(embedder: EmbeddingProvider) -> None:
    first = asyncio.ensure_future(embedder.embed_query(QUESTIONS[0]))
    abandoned = asyncio.ensure_future(embedder.embed_query(QUESTIONS[1]))
    last = asyncio.ensure_future(embedder.embed_query(QUESTIONS[2]))
    await asyncio.sleep(0)
    abandoned.cancel()
    vectors = await asyncio.gather(first, last)
    assert abandoned.cancelled()
    assert [len(vector) for vector in vectors] == [384, 384]
    assert cosine(vectors[1], await embedder.embed_query(QUESTIONS[2])) > 0.9999


async def test_a_query_is_answered_while_ingestion_embeds(embedder: EmbeddingProvider) -> None:
    """A search waits for its query's vector: it must not queue behind an ingestion batch."""
    await embedder.embed_query(QUESTIONS[0])  # the queries' instance is ready
    passage = " ".join(QUESTIONS * 8)  # longer than the model reads: every text a full window
    ingestion = asyncio.ensure_future(embedder.embed([f"{n} {passage}" for n in range(32)]))
    await asyncio.sleep(0.2)  # the batch is in the model
    assert not ingestion.done()
    query = await embedder.embed_query(QUESTIONS[1])
    assert not ingestion.done()  # answered while the batch still runs, not after it
    assert len(query) == 384
    assert all(len(vector) == 384 for vector in await ingestion)


@pytest.mark.parametrize("runtime", ["onnx", "onnx-int8", "openvino"])
async def test_onnx_runtime_gives_the_models_vectors_from_an_export_made_once(
    embedder: EmbeddingProvider, runtime: Runtime, tmp_path: Path
) -> None:
    """ONNX Runtime on an export of the packaged model: the same model name and dimension, the same
    windows, vectors as close to PyTorch's as int8 weights allow, and the export made once."""
    texts = [*QUESTIONS, " ".join(QUESTIONS * 10)]  # short texts, and one the model truncates
    reference = await embedder.embed(texts)
    first = LocalProvider("all-MiniLM-L6-v2", None, batch_size=4, runtime=runtime, export_dir=tmp_path)
    try:
        assert await first.info() == await embedder.info()
        vectors = await first.embed(texts)
        query = await first.embed_query(QUESTIONS[0])
        windows, torch_windows = await first.input_windows(), await embedder.input_windows()
        assert windows is not None
        assert torch_windows is not None
        assert windows.max_tokens == torch_windows.max_tokens
        assert windows.spans(texts) == torch_windows.spans(texts)
    finally:
        await first.close()
    # int8 weights move each vector a little, bfloat16 arithmetic (openvino, on CPUs that have it) less.
    closest = {"onnx": 0.9999, "openvino": 0.999}.get(runtime, 0.98)
    assert min(cosine(mine, theirs) for mine, theirs in zip(vectors, reference, strict=True)) > closest
    assert cosine(query, reference[0]) > closest
    made = exports(tmp_path)
    assert len(made) == 1
    again = LocalProvider("all-MiniLM-L6-v2", None, batch_size=4, runtime=runtime, export_dir=tmp_path)
    try:
        # The same batch: int8 activations are scaled per forward pass, so a text's vector moves
        # a little with the texts it is embedded beside.
        assert min(map(cosine, await again.embed(texts), vectors)) > 0.9999
    finally:
        await again.close()
    assert exports(tmp_path) == made  # not exported again


# A Python without PyTorch, as the image's is: importing torch or sentence-transformers fails.
WITHOUT_PYTORCH = """
import asyncio, json, sys
sys.modules["torch"] = None
sys.modules["sentence_transformers"] = None
from cograph_embeddings import EmbeddingError, LocalProvider

async def main():
    runtime, model, export_dir, texts = sys.argv[1], sys.argv[2] or None, sys.argv[3], json.loads(sys.argv[4])
    provider = LocalProvider("all-MiniLM-L6-v2", model, batch_size=4, runtime=runtime, export_dir=export_dir)
    try:
        print(json.dumps(await provider.embed(texts)))
    except EmbeddingError as error:
        print(error, file=sys.stderr)
        sys.exit(3)
    finally:
        await provider.close()

asyncio.run(main())
"""


async def without_pytorch(
    runtime: str, model: Path | None, export_dir: Path, texts: list[str]
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WITHOUT_PYTORCH,
        runtime,
        str(model or ""),
        str(export_dir),
        json.dumps(texts),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_an_installation_without_pytorch_runs_an_export_made_where_it_was(
    embedder: EmbeddingProvider, tmp_path: Path
) -> None:
    """The image: the export is made where PyTorch is (`cograph prepare`), then PyTorch is left
    out. The model copied elsewhere, its files with new times, as an image layer's may be, still
    finds its export, and gives PyTorch's vectors; with no export, or asked for the torch
    runtime, it says what to do."""
    made = LocalProvider(
        "all-MiniLM-L6-v2", None, batch_size=4, runtime="openvino", export_dir=tmp_path / "built"
    )
    try:
        await made.info()
    finally:
        await made.close()
    model = shutil.copytree(local.default_model_path(), tmp_path / "model", copy_function=shutil.copyfile)
    status, out, err = await without_pytorch("openvino", model, tmp_path / "built", QUESTIONS)
    assert status == 0, err
    reference = await embedder.embed(QUESTIONS)
    assert min(map(cosine, json.loads(out), reference)) > 0.999

    status, _, err = await without_pytorch("openvino", None, tmp_path / "empty", QUESTIONS)
    assert status == 3
    assert "no PyTorch here to make one: run `cograph prepare`" in err
    assert str(tmp_path / "empty") in err
    status, _, err = await without_pytorch("torch", None, tmp_path / "built", QUESTIONS)
    assert status == 3
    assert "set COGRAPH_EMBEDDING__RUNTIME=openvino" in err


def exports(directory: Path) -> dict[str, int]:
    """The exports in a directory, with the time each was made."""
    return {p.name: p.stat().st_mtime_ns for p in directory.iterdir()}


class FakeRemote:
    """A real HTTP server that speaks the OpenAI embeddings protocol (deterministic vectors)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.requests: list[dict[str, object]] = []
        self.authorization: list[str | None] = []

        @post("/v1/embeddings", status_code=200)
        async def embeddings(request: Request[Any, Any, Any]) -> dict[str, object]:
            body = await request.json()
            self.requests.append(body)
            self.authorization.append(request.headers.get("authorization"))
            await asyncio.sleep(self.delay)
            texts = body["input"]
            # Answer out of order: the client must sort by index.
            data = [
                {"object": "embedding", "index": i, "embedding": [float(len(t)), float(i), 1.0]}
                for i, t in reversed(list(enumerate(texts)))
            ]
            return {"object": "list", "model": body["model"], "data": data}

        @post("/slow/embeddings", status_code=200)
        async def slow(request: Request[Any, Any, Any]) -> Stream:
            """Headers at once, then the body a byte a second: each read is quick, the whole is not."""

            async def drip() -> AsyncIterator[bytes]:
                for byte in b'{"data": []}':
                    await asyncio.sleep(1)
                    yield bytes([byte])

            return Stream(drip(), media_type="application/json")

        self.app = Litestar([embeddings, slow], logging_config=None)


@pytest.fixture
async def remote() -> AsyncIterator[tuple[FakeRemote, str]]:
    fake = FakeRemote()
    server = HttpServer("fake-openai", fake.app)
    port = await server.start("127.0.0.1", 0)
    yield fake, f"http://127.0.0.1:{port}/v1"
    await server.stop()


def _refusing_url() -> str:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def test_openai_provider_batches_and_keeps_order(remote: tuple[FakeRemote, str]) -> None:
    fake, url = remote
    provider = OpenAIProvider(
        base_url=url, model="text-embedding-3-small", api_key="k", batch_size=2, timeout_seconds=5
    )
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = await provider.embed(texts)
    await provider.close()
    assert [v[0] for v in vectors] == [1.0, 2.0, 3.0, 4.0, 5.0]
    # One probe for the dimension, then ceil(5 / 2) batches of at most two texts.
    batches = [r["input"] for r in fake.requests[1:]]
    assert batches == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert all(r["model"] == "text-embedding-3-small" for r in fake.requests)
    assert (await provider.info()).dimension == 3


async def test_openai_provider_refused_connection_is_a_clear_error() -> None:
    provider = OpenAIProvider(
        base_url=_refusing_url(), model="m", api_key="", batch_size=8, timeout_seconds=5
    )
    with pytest.raises(EmbeddingError, match=r"http://127.0.0.1:\d+/v1/embeddings is unreachable"):
        await provider.embed(["hello"])
    await provider.close()


async def test_openai_provider_timeout_is_a_clear_error(remote: tuple[FakeRemote, str]) -> None:
    fake, url = remote
    fake.delay = 2.0
    provider = OpenAIProvider(
        base_url=url, model="m", api_key="", batch_size=8, timeout_seconds=0.3, dimensions=3
    )
    with pytest.raises(EmbeddingError, match=r"did not answer within 0.3 s"):
        await provider.embed(["hello"])
    await provider.close()


async def test_openai_provider_error_status_is_reported(remote: tuple[FakeRemote, str]) -> None:
    _, url = remote
    provider = OpenAIProvider(
        base_url=url.replace("/v1", "/nope"),
        model="m",
        api_key="",
        batch_size=8,
        timeout_seconds=5,
        dimensions=3,
    )
    with pytest.raises(EmbeddingError, match="answered 404"):
        await provider.embed(["hello"])
    await provider.close()


async def test_an_endpoint_that_ignores_the_configured_dimension_is_a_clear_error(
    remote: tuple[FakeRemote, str],
) -> None:
    """Many OpenAI-compatible servers ignore `dimensions`: their vectors would fail every write
    to an index built for the configured dimension, with a database error about neither."""
    fake, url = remote
    provider = OpenAIProvider(
        base_url=url, model="m", api_key="", batch_size=8, timeout_seconds=5, dimensions=256
    )
    with pytest.raises(
        EmbeddingError, match="returned 3-dimension vectors although COGRAPH_EMBEDDING__DIMENSIONS"
    ):
        await provider.embed(["hello"])
    assert fake.requests[0]["dimensions"] == 256
    await provider.close()


async def test_openai_liveness_asks_the_endpoint_even_with_the_dimension_configured() -> None:
    provider = OpenAIProvider(
        base_url=_refusing_url(), model="m", api_key="", batch_size=8, timeout_seconds=5, dimensions=3
    )
    assert (await provider.info()).dimension == 3  # answered without the endpoint
    with pytest.raises(EmbeddingError, match=r"/v1/embeddings is unreachable"):
        await provider.check_alive()
    await provider.close()


async def test_openai_liveness_embeds_one_word(remote: tuple[FakeRemote, str]) -> None:
    fake, url = remote
    provider = OpenAIProvider(
        base_url=url, model="m", api_key="", batch_size=8, timeout_seconds=5, dimensions=3
    )
    await provider.check_alive()
    await provider.close()
    assert [r["input"] for r in fake.requests] == [["ping"]]


async def test_openai_liveness_gives_a_slow_endpoint_a_short_deadline(remote: tuple[FakeRemote, str]) -> None:
    fake, url = remote
    fake.delay = 5.0
    provider = OpenAIProvider(base_url=url, model="m", api_key="", batch_size=8, timeout_seconds=30)
    started = asyncio.get_running_loop().time()
    with pytest.raises(EmbeddingError, match=r"did not answer within 2 s"):
        await provider.check_alive()
    assert asyncio.get_running_loop().time() - started < 3.0
    await provider.close()


async def test_local_liveness_is_the_model_loaded(embedder: EmbeddingProvider) -> None:
    assert not embedder.remote
    await embedder.check_alive()
    broken = local.LocalProvider("m", "/nonexistent-model", batch_size=8)
    with pytest.raises(EmbeddingError, match="no sentence-transformers model"):
        await broken.check_alive()
    await broken.close()


async def test_an_api_key_read_from_a_file_is_sent_without_its_newline(
    remote: tuple[FakeRemote, str],
) -> None:
    """A Secret made with --from-file ends the key with a newline: the header would be invalid,
    and httpx's error about it quotes the header, key and all."""
    fake, url = remote
    provider = OpenAIProvider(
        base_url=url, model="m", api_key="  sk-test-key\n", batch_size=8, timeout_seconds=5, dimensions=3
    )
    await provider.embed(["hello"])
    await provider.close()
    assert fake.authorization == ["Bearer sk-test-key"]


@pytest.mark.parametrize("key", ["sk-one\nsk-two", "sk-\u201ctest\u201d", "sk-\x00"])
async def test_an_api_key_no_header_can_carry_is_refused_without_quoting_it(key: str) -> None:
    with pytest.raises(EmbeddingError, match="COGRAPH_EMBEDDING__API_KEY holds a character") as refused:
        OpenAIProvider(
            base_url="http://127.0.0.1:1/v1", model="m", api_key=key, batch_size=8, timeout_seconds=5
        )
    assert "sk-" not in str(refused.value)


async def test_the_timeout_bounds_the_whole_request_not_each_read(remote: tuple[FakeRemote, str]) -> None:
    _, url = remote
    provider = OpenAIProvider(
        base_url=url.replace("/v1", "/slow"), model="m", api_key="", batch_size=8, timeout_seconds=1.5
    )
    started = asyncio.get_running_loop().time()
    with pytest.raises(EmbeddingError, match=r"did not answer within 1.5 s"):
        await provider.embed(["hello"])
    assert asyncio.get_running_loop().time() - started < 3.0  # the body alone drips for 12 s
    await provider.close()
