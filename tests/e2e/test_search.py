"""Search through the search service: code with its docs, repository docs, routing, scope, failures."""

from __future__ import annotations

import asyncio
import socket
import time
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import asyncpg
import grpc
import httpx
import msgspec
import pytest
from grpc import aio
from integration.repodocs.helpers import SYNC_TIMEOUT, GitRepo

from cograph.collections.v1 import collections_service_pb2 as cpb
from cograph.collections.v1 import collections_service_pb2_grpc as cpb_grpc
from cograph.repodocs.v1 import repodocs_service_pb2 as rpb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as rpb_grpc
from cograph.search.v1 import search_service_pb2 as pb
from cograph.search.v1 import search_service_pb2_grpc as pb_grpc
from cograph_cli.runtime import System
from cograph_embeddings.openai import OpenAIProvider
from cograph_grpc import check_health, open_channel
from cograph_search.app import create_service as create_search_service

CONFIG_PY = '''"""Configuration loading."""

DEFAULT_TIMEOUT = 30


class ConfigLoader:
    def load_settings(self, path: str) -> dict:
        return {}


def parse_config(text: str) -> dict:
    """Turn the text of a config file into settings."""
    return {}
'''
README = """# Billing service

Start with `parse_config` to read the file, then `ConfigLoader.load_settings` applies it.

## Retention

Invoices are archived after seven years in the vault.
"""


class Stubs:
    def __init__(self, system: System) -> None:
        grpc_settings = system.settings.grpc
        self.channels = [
            open_channel(f"127.0.0.1:{system.hosts[name].grpc.port}", grpc_settings)
            for name in ("search", "repodocs", "collections")
        ]
        self.search = pb_grpc.SearchServiceStub(self.channels[0])
        self.repodocs = rpb_grpc.RepoDocsServiceStub(self.channels[1])
        self.collections = cpb_grpc.CollectionsServiceStub(self.channels[2])

    async def glossary(self, documents: dict[str, bytes]) -> str:
        """A public collection holding these documents (source key to content); answers its id."""
        created = await self.collections.CreateCollection(
            cpb.CreateCollectionRequest(name="Glossary", visibility=cpb.VISIBILITY_PUBLIC, owner="alice")
        )
        await self.collections.UploadDocuments(
            cpb.UploadDocumentsRequest(
                collection_id=created.collection.id,
                documents=[cpb.DocumentContent(source_key=k, content=v) for k, v in documents.items()],
            )
        )
        return created.collection.id

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close(None)


@pytest.fixture
async def stubs(system: System) -> AsyncIterator[Stubs]:
    opened = Stubs(system)
    yield opened
    await opened.close()


@pytest.fixture
async def repository(stubs: Stubs, tmp_path: Path) -> rpb.Repository:
    repo = GitRepo(tmp_path / "billing")
    repo.commit("code and docs", {"src/billing/config.py": CONFIG_PY, "README.md": README})
    registered = (
        await stubs.repodocs.RegisterRepository(
            rpb.RegisterRepositoryRequest(
                ref=rpb.RepositoryRef(host="example.com", owner="acme", name="billing"),
                clone_url=str(repo.root),
                visibility=rpb.VISIBILITY_PRIVATE,
                owner_subject="alice",
            )
        )
    ).repository
    sync = await stubs.repodocs.SyncRepository(
        rpb.SyncRepositoryRequest(repository_id=registered.id, wait=True), timeout=SYNC_TIMEOUT
    )
    assert sync.sync.status == rpb.SYNC_STATUS_SUCCESS, sync.sync.error
    return registered


async def test_an_exact_identifier_finds_its_symbol_first_with_its_docs(
    stubs: Stubs, repository: rpb.Repository
) -> None:
    scope = pb.Scope(repository_ids=[repository.id])
    for query, expected in [
        ("parse_config", "billing.config.parse_config"),
        ("ConfigLoader.load_settings", "billing.config.ConfigLoader.load_settings"),
        ("DEFAULT_TIMEOUT", "billing.config.DEFAULT_TIMEOUT"),
    ]:
        found = await stubs.search.Retrieve(
            pb.RetrieveRequest(query=query, mode=pb.RETRIEVE_MODE_CODE, scope=scope, limit=5)
        )
        assert list(found.failures) == []
        assert found.code[0].hit.node.qualified_name == expected, query
        assert found.code[0].hit.ranks.symbol == 1
    # The README mentions parse_config: the code hit carries that doc chunk, heading-anchored.
    found = await stubs.search.Retrieve(
        pb.RetrieveRequest(query="parse_config", mode=pb.RETRIEVE_MODE_CODE, scope=scope, limit=1)
    )
    related = found.code[0].related_repo_doc_chunks
    assert [r.chunk.heading_anchor for r in related] == ["billing-service"]
    assert related[0].chunk.path == "README.md"


async def test_names_with_a_dollar_or_letters_beyond_ascii_are_found_as_written(
    stubs: Stubs, tmp_path: Path
) -> None:
    """'$' (JavaScript) and letters of any script (Python) belong to a name: the exact symbol
    stream finds it first, not the name without its '$' or a fragment cut at a letter."""
    repo = GitRepo(tmp_path / "web")
    repo.commit(
        "names",
        {
            "web/app.js": "export function $http(url) { return 1 }\nexport function http(url) { return 2 }\n"
            "class Router { $route() { return 3 } }\n",
            "calc/rechner.py": "def größe_berechnen(wert: float) -> float:\n    return wert\n\n\n"
            "def groesse(x):\n    return x\n\n\ndef getÉtat():\n    return 1\n\n\n"
            "def get_user():\n    return 2\n",
        },
    )
    registered = (
        await stubs.repodocs.RegisterRepository(
            rpb.RegisterRepositoryRequest(
                ref=rpb.RepositoryRef(host="example.com", owner="acme", name="web"),
                clone_url=str(repo.root),
                visibility=rpb.VISIBILITY_PUBLIC,
                owner_subject="alice",
            )
        )
    ).repository
    sync = await stubs.repodocs.SyncRepository(
        rpb.SyncRepositoryRequest(repository_id=registered.id, wait=True), timeout=SYNC_TIMEOUT
    )
    assert sync.sync.status == rpb.SYNC_STATUS_SUCCESS, sync.sync.error
    scope = pb.Scope(repository_ids=[registered.id])
    for query, expected in [
        ("$http", "web.app.$http"),
        ("$route", "web.app.Router.$route"),
        ("Router.$route", "web.app.Router.$route"),
        ("größe_berechnen", "calc.rechner.größe_berechnen"),
    ]:
        found = await stubs.search.Retrieve(
            pb.RetrieveRequest(query=query, mode=pb.RETRIEVE_MODE_CODE, scope=scope, limit=5)
        )
        assert found.code[0].hit.node.qualified_name == expected, query
        assert found.code[0].hit.ranks.symbol == 1, query
        assert found.code[0].hit.ranks.text >= 1, query  # its name is a lexeme, as written
    # A decomposed É is no capital starting a camelCase part: 'getÉtat' does not find get_user.
    for query in ("getÉtat", unicodedata.normalize("NFD", "getÉtat")):
        found = await stubs.search.Retrieve(
            pb.RetrieveRequest(query=query, mode=pb.RETRIEVE_MODE_CODE, scope=scope, limit=10)
        )
        by_text = [hit.hit.node.name for hit in found.code if hit.hit.ranks.text]
        assert by_text == ["getÉtat"], ascii(query)


async def test_identifier_parts_match_by_full_text(stubs: Stubs, repository: rpb.Repository) -> None:
    found = await stubs.search.Retrieve(
        pb.RetrieveRequest(
            query="load settings", mode=pb.RETRIEVE_MODE_CODE, scope=pb.Scope(repository_ids=[repository.id])
        )
    )
    assert found.code[0].hit.node.name == "load_settings"
    assert found.code[0].hit.ranks.text == 1


async def test_wiki_mode_searches_repository_documents(stubs: Stubs, repository: rpb.Repository) -> None:
    found = await stubs.search.Retrieve(
        pb.RetrieveRequest(
            query="how long are invoices archived",
            mode=pb.RETRIEVE_MODE_WIKI,
            scope=pb.Scope(repository_ids=[repository.id]),
            limit=3,
        )
    )
    assert found.docs[0].chunk.path == "README.md"
    assert found.docs[0].chunk.heading_anchor == "retention"
    assert found.docs[0].chunk.slug == "readme"
    workflows_only = await stubs.search.Retrieve(
        pb.RetrieveRequest(
            query="invoices archived",
            mode=pb.RETRIEVE_MODE_WIKI,
            scope=pb.Scope(repository_ids=[repository.id]),
            kinds=[rpb.DOCUMENT_KIND_WORKFLOW],
        )
    )
    assert list(workflows_only.docs) == []


async def test_wiki_mode_finds_a_setting_where_it_is_written(stubs: Stubs, tmp_path: Path) -> None:
    """A setting pasted into wiki search: full text splits COGRAPH_SEARCH__RRF_K into parts that
    other pages hold apart and more often, and its embedding stands for those parts' words. The
    section that writes it comes first, found by full text alone."""
    repo = GitRepo(tmp_path / "handbook")
    repo.commit(
        "docs",
        {
            "docs/operations.md": (
                "# Operations\n\n## Tuning fusion\n\nSet COGRAPH_SEARCH__RRF_K on the search pods to"
                " change the fusion constant, then restart them.\n\n## Backups\n\nSnapshots run nightly.\n"
            ),
            "docs/search.md": (
                "# Search\n\nCograph search fuses a dense and a full-text stream with RRF; the top k hits"
                " are returned. Cograph search runs on the search pods. Search, search, search.\n"
            ),
            "docs/ranking.md": "# Ranking\n\nRRF adds 1/(k + rank); Cograph keeps k small. Search for k.\n",
        },
    )
    registered = await stubs.repodocs.RegisterRepository(
        rpb.RegisterRepositoryRequest(
            ref=rpb.RepositoryRef(host="example.com", owner="acme", name="handbook"),
            clone_url=str(repo.root),
            visibility=rpb.VISIBILITY_PRIVATE,
            owner_subject="alice",
        )
    )
    sync = await stubs.repodocs.SyncRepository(
        rpb.SyncRepositoryRequest(repository_id=registered.repository.id, wait=True), timeout=SYNC_TIMEOUT
    )
    assert sync.sync.status == rpb.SYNC_STATUS_SUCCESS, sync.sync.error
    found = await stubs.search.Retrieve(
        pb.RetrieveRequest(
            query="COGRAPH_SEARCH__RRF_K",
            mode=pb.RETRIEVE_MODE_WIKI,
            scope=pb.Scope(repository_ids=[registered.repository.id]),
            limit=3,
        )
    )
    assert list(found.failures) == []
    first = found.docs[0]
    assert (first.chunk.path, first.chunk.heading_anchor) == ("docs/operations.md", "tuning-fusion")
    assert (first.ranks.text, first.ranks.dense) == (1, 0)
    # Route measures the pool against the streams that ran: first in full text is all there was.
    routed = await stubs.search.Route(
        pb.RouteRequest(
            query="COGRAPH_SEARCH__RRF_K", scope=pb.Scope(repository_ids=[registered.repository.id]), limit=3
        )
    )
    assert routed.repo_docs[0].chunk.path == "docs/operations.md"
    [docs_pool] = [pool for pool in routed.pools if pool.store == pb.STORE_REPO_DOCS]
    assert docs_pool.confidence == pytest.approx(1.0)


async def test_an_empty_scope_finds_nothing(stubs: Stubs, repository: rpb.Repository) -> None:
    for mode in (pb.RETRIEVE_MODE_CODE, pb.RETRIEVE_MODE_WIKI):
        found = await stubs.search.Retrieve(
            pb.RetrieveRequest(query="parse_config", mode=mode, scope=pb.Scope())
        )
        assert (list(found.code), list(found.docs), list(found.failures)) == ([], [], [])


async def test_route_fills_collections_even_when_no_word_matches(
    stubs: Stubs, repository: rpb.Repository
) -> None:
    collection_id = await stubs.glossary(
        {f"term-{i}.md": f"# Term {i}\n\nDefinition {i}.".encode() for i in range(4)}
    )
    # Wait until the chunks are embedded: the dense stream finds them with no shared word.
    for _ in range(600):
        status = await stubs.collections.GetEmbedStatus(
            cpb.GetEmbedStatusRequest(collection_id=collection_id)
        )
        if status.total_chunks and status.embedded_chunks == status.total_chunks:
            break
        await asyncio.sleep(0.1)
    routed = await stubs.search.Route(
        pb.RouteRequest(
            query="zyxwv qwerty",
            scope=pb.Scope(repository_ids=[repository.id], collection_ids=[collection_id]),
            limit=3,
        )
    )
    assert len(routed.collections) == 3
    assert {pool.store for pool in routed.pools} == {pb.STORE_CODE, pb.STORE_REPO_DOCS, pb.STORE_COLLECTIONS}
    assert all(0.0 <= pool.confidence <= 1.0 for pool in routed.pools)


async def test_a_store_that_is_down_is_named_and_the_rest_answers(
    system: System, stubs: Stubs, repository: rpb.Repository
) -> None:
    await system.hosts.pop("repodocs").stop()
    routed = await stubs.search.Route(
        pb.RouteRequest(query="parse config", scope=pb.Scope(repository_ids=[repository.id]), limit=3)
    )
    assert {failure.store for failure in routed.failures} == {pb.STORE_CODE, pb.STORE_REPO_DOCS}
    assert all(
        "UNAVAILABLE" in failure.message or "no answer" in failure.message for failure in routed.failures
    )
    assert [pool.store for pool in routed.pools] == [pb.STORE_COLLECTIONS]


async def test_a_store_with_nothing_in_scope_is_not_asked_so_it_cannot_fail(
    system: System, stubs: Stubs
) -> None:
    """A caller who may read no repository: repodocs is not asked, so its being down costs nothing
    (a stuck one would have cost the whole store deadline) and is no failure of this answer."""
    collection_id = await stubs.glossary({"a.md": b"# Alpha\n\nThe billing batch runs nightly.\n"})
    await system.hosts.pop("repodocs").stop()
    routed = await stubs.search.Route(
        pb.RouteRequest(query="billing batch", scope=pb.Scope(collection_ids=[collection_id]), limit=3)
    )
    assert list(routed.failures) == []
    assert [hit.chunk.source_key for hit in routed.collections] == ["a.md"]
    assert {pool.store for pool in routed.pools} == {pb.STORE_CODE, pb.STORE_REPO_DOCS, pb.STORE_COLLECTIONS}
    for mode in (pb.RETRIEVE_MODE_CODE, pb.RETRIEVE_MODE_WIKI):
        found = await stubs.search.Retrieve(pb.RetrieveRequest(query="billing", mode=mode, scope=pb.Scope()))
        assert list(found.failures) == [], mode


async def test_a_search_of_one_store_that_is_down_names_the_store(system: System, stubs: Stubs) -> None:
    """Searching one collection: its store cannot say who may read it, so the answer is a 503
    (there is no partial answer to give), and it says which service failed."""
    collection_id = await stubs.glossary({"a.md": b"# Alpha\n\nThe billing batch runs nightly.\n"})
    await system.hosts.pop("collections").stop()
    async with httpx.AsyncClient(base_url=system.gateway_url, timeout=60) as gateway:
        answer = await gateway.post(
            f"/api/md-collections/{collection_id}/search",
            json={"query": "billing"},
            headers={"Authorization": "Bearer test-alice-token"},
        )
    assert answer.status_code == 503, answer.text
    assert answer.json()["detail"] == "the collections service is unavailable; try again in 5 s"
    assert answer.headers["retry-after"] == "5"


async def test_a_slow_store_costs_the_gateways_route_its_deadline_not_the_whole_request(
    system: System, stubs: Stubs, database: str
) -> None:
    """The gateway scopes a route by reading who may read what from both stores first: a store
    that is stuck is named failed after the store deadline, and the collections still answer."""
    await stubs.glossary({"a.md": b"# Alpha\n\nThe billing batch runs nightly.\n"})
    deadline = system.settings.search.store_deadline_seconds
    lock = await asyncpg.connect(database)
    try:
        await lock.execute("BEGIN; LOCK TABLE repodocs.repositories IN ACCESS EXCLUSIVE MODE")
        began = time.monotonic()
        async with httpx.AsyncClient(base_url=system.gateway_url, timeout=120) as gateway:
            routed = await gateway.post(
                "/api/search/route",
                json={"query": "billing batch", "limit": 3},
                headers={"Authorization": "Bearer test-alice-token"},
            )
        took = time.monotonic() - began
    finally:
        await lock.execute("ROLLBACK")
        await lock.close()
    assert routed.status_code == 200, routed.text
    assert took < deadline + 5, took  # not the 30 s gRPC deadline
    assert {failure["store"] for failure in routed.json()["failures"]} == {"code", "repo_docs"}
    assert [hit["chunk"]["source_key"] for hit in routed.json()["collections"]][:1] == ["a.md"]


async def test_code_hits_stand_when_their_related_docs_are_late(
    system: System, stubs: Stubs, repository: rpb.Repository, database: str
) -> None:
    """The code search is slow, then the related doc chunks never come: the code hits are
    answered, without related chunks, at the one deadline of the code pool, with the failure."""
    deadline = system.settings.search.store_deadline_seconds
    scope = pb.Scope(repository_ids=[repository.id])
    code_statistics, mentions = await asyncpg.connect(database), await asyncpg.connect(database)
    try:
        # Held in open transactions: SearchCode waits on the one, GetRelatedDocChunks on the other.
        await code_statistics.execute("BEGIN; LOCK TABLE repodocs.code_term_stats IN ACCESS EXCLUSIVE MODE")
        await mentions.execute(
            "BEGIN; LOCK TABLE repodocs.repo_document_chunk_mentions IN ACCESS EXCLUSIVE MODE"
        )
        started = time.monotonic()
        asked = asyncio.gather(
            stubs.search.Retrieve(
                pb.RetrieveRequest(query="parse_config", mode=pb.RETRIEVE_MODE_CODE, scope=scope, limit=3)
            ),
            stubs.search.Route(pb.RouteRequest(query="parse_config", scope=scope, limit=3)),
        )
        await asyncio.sleep(deadline * 0.6)
        await code_statistics.execute("ROLLBACK")
        retrieved, routed = await asked
        elapsed = time.monotonic() - started
    finally:
        await code_statistics.close()
        await mentions.close()
    for answer in (retrieved, routed):
        assert answer.code[0].hit.node.qualified_name == "billing.config.parse_config"
        assert all(list(result.related_repo_doc_chunks) == [] for result in answer.code)
        assert [failure.store for failure in answer.failures] == [pb.STORE_REPO_DOCS]
        assert "without their related doc chunks" in answer.failures[0].message
        assert f"no answer within {deadline:g} s" in answer.failures[0].message
    assert pb.STORE_CODE in {pool.store for pool in routed.pools}
    # One deadline for the whole code pool, not one for each of its two calls.
    assert elapsed < deadline * 1.3


async def test_a_store_call_past_its_deadline_stops_the_stores_work(
    system: System, stubs: Stubs, repository: rpb.Repository, database: str
) -> None:
    """The deadline travels with the store call: the store cancels its statement when the search
    service gives up, instead of going on until the channel's 30 s default, holding a pooled
    connection that healthy searches then lack."""
    scope = pb.Scope(repository_ids=[repository.id])
    lock = await asyncpg.connect(database)
    try:
        await lock.execute("BEGIN; LOCK TABLE repodocs.code_term_stats IN ACCESS EXCLUSIVE MODE")
        answers = await asyncio.gather(
            *(
                stubs.search.Retrieve(
                    pb.RetrieveRequest(query="parse_config", mode=pb.RETRIEVE_MODE_CODE, scope=scope)
                )
                for _ in range(3)
            )
        )
        assert all([failure.store for failure in answer.failures] == [pb.STORE_CODE] for answer in answers)
        waiting = -1
        for _ in range(20):  # the cancellation reaches PostgreSQL within moments
            waiting = await lock.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if waiting == 0:
                break
            await asyncio.sleep(0.1)
    finally:
        await lock.execute("ROLLBACK")
        await lock.close()
    assert waiting == 0, f"{waiting} store statements still wait on the lock after the answer"


async def test_a_caller_with_a_short_deadline_still_gets_the_partial_answer(
    stubs: Stubs, repository: rpb.Repository, database: str
) -> None:
    """The stores' deadline is 5 s; a caller that gives 2 s gets, within them, what answered and
    the store that did not, rather than DEADLINE_EXCEEDED and nothing."""
    scope = pb.Scope(repository_ids=[repository.id])
    lock = await asyncpg.connect(database)
    try:
        await lock.execute("BEGIN; LOCK TABLE repodocs.code_term_stats IN ACCESS EXCLUSIVE MODE")
        began = time.monotonic()
        routed = await stubs.search.Route(
            pb.RouteRequest(query="parse_config", scope=scope, limit=3), timeout=2
        )
        took = time.monotonic() - began
    finally:
        await lock.execute("ROLLBACK")
        await lock.close()
    assert took < 2
    code = [failure for failure in routed.failures if failure.store == pb.STORE_CODE]
    assert [failure.message for failure in code] == ["no answer before the caller's deadline"]
    assert pb.STORE_REPO_DOCS in {pool.store for pool in routed.pools}


async def test_empty_and_over_long_queries_are_refused(stubs: Stubs) -> None:
    for query, message in [
        ("   ", "the query is empty"),
        ("\u200b \ufeff\u2060", "the query is empty"),  # zero-width characters only: nothing to find
        ("x" * 5000, "at most 2000 are accepted"),
    ]:
        with pytest.raises(aio.AioRpcError) as refused:
            await stubs.search.Route(pb.RouteRequest(query=query))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in (refused.value.details() or "")


async def test_a_query_with_a_control_character_is_refused(stubs: Stubs) -> None:
    scope = pb.Scope(repository_ids=["00000000-0000-0000-0000-000000000001"])
    for query in ["parse\x00config", "parse\x1bconfig", "\x7f"]:
        for call in (
            stubs.search.Route(pb.RouteRequest(query=query, scope=scope)),
            stubs.search.Retrieve(pb.RetrieveRequest(query=query, mode=pb.RETRIEVE_MODE_CODE, scope=scope)),
            stubs.search.SearchCollection(pb.SearchCollectionRequest(query=query, collection_id="c")),
        ):
            with pytest.raises(aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "the query contains a control character" in (refused.value.details() or ""), repr(query)
    # Tabs and line breaks are white space.
    routed = await stubs.search.Route(pb.RouteRequest(query="parse\tconfig\r\n", scope=scope))
    assert list(routed.failures) == []


@pytest.mark.parametrize("endpoint", ["refuses connections", "never answers"])
async def test_a_query_the_model_cannot_embed_is_answered_by_full_text(
    system: System, stubs: Stubs, endpoint: str
) -> None:
    """A real OpenAI-compatible provider whose endpoint is down or silent: the search answers
    from full text within the embedding deadline and says the dense stream did not run; a route
    still fills its collections up to the count it was asked for."""
    silent = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    if endpoint == "refuses connections":
        silent.close()
        await silent.wait_closed()
    provider = OpenAIProvider(
        base_url=f"http://127.0.0.1:{port}/v1", model="remote", api_key="", batch_size=8, timeout_seconds=30
    )
    search_settings = msgspec.structs.replace(system.settings.search, embedding_deadline_seconds=0.5)
    settings = msgspec.structs.replace(system.settings, search=search_settings)
    host = await create_search_service(settings, provider)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", settings.grpc)
    try:
        collection_id = await stubs.glossary(
            {"zorblax.md": b"# Zorblax\n\nThe billing batch.", "other.md": b"# Other\n\nUnrelated words."}
        )
        search = pb_grpc.SearchServiceStub(channel)
        started = time.monotonic()
        found = await search.SearchCollection(
            pb.SearchCollectionRequest(query="what is a zorblax", collection_id=collection_id, limit=5)
        )
        routed = await search.Route(
            pb.RouteRequest(query="zorblax", scope=pb.Scope(collection_ids=[collection_id]), limit=5)
        )
        elapsed = time.monotonic() - started
        # A caller who may read nothing: no store is asked, so the model is not waited for either.
        started = time.monotonic()
        unrouted = await search.Route(pb.RouteRequest(query="zorblax", scope=pb.Scope(), limit=5))
        nothing = [list(unrouted.failures)]
        for mode in (pb.RETRIEVE_MODE_CODE, pb.RETRIEVE_MODE_WIKI):
            retrieved = await search.Retrieve(
                pb.RetrieveRequest(query="zorblax", mode=mode, scope=pb.Scope())
            )
            nothing.append(list(retrieved.failures))
        unscoped_elapsed = time.monotonic() - started
    finally:
        await channel.close(None)
        await host.stop()
        silent.close()
    # A route still answers collections up to its count: what matched, then the rest at score 0.
    assert [(hit.chunk.source_key, hit.score) for hit in routed.collections[1:]] == [("other.md", 0.0)]
    assert (routed.collections[1].ranks.dense, routed.collections[1].ranks.text) == (0, 0)
    for hits, failures in ((found.hits, found.failures), (routed.collections[:1], routed.failures)):
        assert [hit.chunk.source_key for hit in hits] == ["zorblax.md"]
        assert (hits[0].ranks.dense, hits[0].ranks.text) == (0, 1)
        assert [failure.store for failure in failures] == [pb.STORE_EMBEDDING]
        assert "the query was not embedded" in failures[0].message
        assert ("unreachable" if endpoint == "refuses connections" else "no answer within 0.5 s") in (
            failures[0].message
        )
    assert elapsed < 3.0  # two searches, each bounded by the embedding deadline
    assert nothing == [[], [], []]
    assert unscoped_elapsed < 1.0  # waiting for the model would take 0.5 s for each of the three


async def test_a_down_embedding_endpoint_is_reported_but_leaves_search_ready(system: System) -> None:
    """With the dimension configured the provider never needs the endpoint to start, so only a
    real call shows it is down; search still answers (full text), so it stays ready and says why."""
    with socket.socket() as sock:  # a port nothing listens on: the endpoint refuses connections
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAIProvider(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="remote",
        api_key="",
        batch_size=8,
        timeout_seconds=30,
        dimensions=8,
    )
    host = await create_search_service(system.settings, provider)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", system.settings.grpc)
    try:
        async with httpx.AsyncClient() as client:
            response = await client.get(f"http://127.0.0.1:{host.http.port}/readyz")
        health = await check_health(channel)
    finally:
        await channel.close(None)
        await host.stop()
        await provider.close()
    assert response.status_code == 200
    report = response.json()
    assert (report["status"], report["checks"]) == ("ready", {})
    assert "/v1/embeddings is unreachable" in report["dependencies"]["embedding"]
    assert (report["dependencies"]["collections"], report["dependencies"]["repodocs"]) == ("ok", "ok")
    assert health == "SERVING"


async def test_malformed_scope_ids_are_refused_not_reported_as_store_failures(stubs: Stubs) -> None:
    for call in (
        stubs.search.Route(pb.RouteRequest(query="billing", scope=pb.Scope(repository_ids=["nope"]))),
        stubs.search.Retrieve(
            pb.RetrieveRequest(
                query="billing", mode=pb.RETRIEVE_MODE_WIKI, scope=pb.Scope(collection_ids=["nope"])
            )
        ),
        stubs.search.SearchCollection(pb.SearchCollectionRequest(query="billing", collection_id="nope")),
    ):
        with pytest.raises(aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "'nope' is not a valid id" in (refused.value.details() or "")


async def test_a_related_limit_out_of_bounds_or_an_unknown_kind_is_refused_not_a_store_failure(
    stubs: Stubs, repository: rpb.Repository
) -> None:
    scope = pb.Scope(repository_ids=[repository.id])
    for request, message in (
        *(
            (
                pb.RetrieveRequest(
                    query="parse_config", mode=pb.RETRIEVE_MODE_CODE, scope=scope, related_limit=related
                ),
                "related_limit must be between 1 and 50 (0: three)",
            )
            for related in (-1, 51)
        ),
        (
            pb.RetrieveRequest(
                query="billing",
                mode=pb.RETRIEVE_MODE_WIKI,
                scope=scope,
                kinds=[cast(Any, 99)],  # no such kind
            ),
            "document kind 99 is not one of the five kinds",
        ),
    ):
        with pytest.raises(aio.AioRpcError) as refused:
            await stubs.search.Retrieve(request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in (refused.value.details() or "")
