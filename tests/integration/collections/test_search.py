"""Hybrid search over a collection's chunks: BM25 full text, dense vectors, fusion, and the scope."""

from __future__ import annotations

import math
import time
import unicodedata
import uuid
from typing import Any

import grpc
import msgspec
import pytest
from grpc import aio

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.app import MIGRATIONS
from cograph_collections.application.search import ChunkSearch
from cograph_collections.stores.chunks import TABLE
from cograph_db import Connection, apply_migrations, connect, create_pool
from cograph_embeddings import EmbeddingProvider
from cograph_retrieval import DEFAULT_RRF_K, HybridRetriever, Query, Stream, reciprocal_rank_fusion
from cograph_retrieval.hybrid import without_format_characters
from cograph_settings import Settings
from support.collections import Running

DOCUMENTS = [
    (
        "oncall.md",
        b"# On-call\n\nWhen the pager fires, acknowledge within five minutes and open an incident channel.",
    ),
    (
        "deploy.md",
        b"# Deploying\n\nShip a release by tagging the main branch; the pipeline builds and rolls out.",
    ),
    ("glossary.md", b"# Glossary\n\nA zorblax is the internal name of the billing reconciliation batch."),
    (
        "backup.md",
        b"# Backups\n\nDatabase snapshots are taken nightly and kept for thirty days in cold storage.",
    ),
]


# Three pages hold "long" and nothing else of the question below; the one that answers it holds
# no other of its words either, and is the longest of the three.
HOUSEKEEPING = [
    (
        "backup.md",
        b"# Backups\n\nDatabase snapshots are taken nightly and kept for thirty days in cold storage,"
        b" a long way from the servers they protect.",
    ),
    ("laptops.md", b"# Laptops\n\nHow long a laptop lasts varies; we replace each one after three years."),
    (
        "holidays.md",
        b"# Holidays\n\nTell us well ahead how long you will be away, and put the dates on the team"
        b" calendar for everyone.",
    ),
    *DOCUMENTS[:2],
]


async def search(
    service: Running, embedder: EmbeddingProvider, scope: list[str], text: str, *, dense: bool = True
) -> list[pb.ChunkHit]:
    return await weighted_search(
        service, embedder, scope, text, dense_weight=1.0 if dense else 0.0, text_weight=1.0
    )


async def weighted_search(
    service: Running,
    embedder: EmbeddingProvider,
    scope: list[str],
    text: str,
    *,
    dense_weight: float,
    text_weight: float,
    limit: int = 4,
) -> list[pb.ChunkHit]:
    """SearchChunks with each stream's weight given (0 leaves it out), the query embedded when dense runs."""
    response = await service.stub.SearchChunks(
        pb.SearchChunksRequest(
            collection_ids=scope,
            query=text,
            query_embedding=await embedder.embed_query(text) if dense_weight else [],
            embedding_model=(await embedder.info()).name,
            limit=limit,
            dense_weight=dense_weight,
            text_weight=text_weight,
        )
    )
    return list(response.hits)


async def glossary_query(collection: pb.Collection, embedder: EmbeddingProvider) -> Query:
    """A hybrid query, as the service builds it, that the glossary chunk answers best."""
    return Query(
        text="what is a zorblax",
        scope=[uuid.UUID(collection.id)],
        limit=4,
        embedding=await embedder.embed_query("what is a zorblax"),
        model=(await embedder.info()).name,
    )


async def test_a_term_only_one_document_has_is_found_by_full_text(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)
    hits = await search(service, embedder, [collection.id], "what is a zorblax", dense=False)
    assert hits[0].chunk.source_key == "glossary.md"
    assert hits[0].ranks.text == 1
    assert hits[0].ranks.dense == 0
    assert hits[0].document_title == "Glossary"
    assert len(hits) == 1  # no other chunk contains the word
    # Pasted with an invisible character (a zero-width space after it, a soft hyphen inside it):
    # still the word, not another lexeme no chunk holds.
    for pasted in (
        "what is a zorblax\u200b",
        "what is a zor\u00adblax",
        "\ufeffwhat is a\u200bzorblax\u200e",
    ):
        found = await search(service, embedder, [collection.id], pasted, dense=False)
        assert [hit.chunk.source_key for hit in found] == ["glossary.md"], pasted


async def test_hits_score_their_share_of_each_streams_best(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """Prose is fused by the streams' scores: alone, each stream's first hit scores its weight and
    the others less, by how far behind they are; the glossary, first in both streams for a query in
    its own words, scores the sum of the weights, and what one stream alone found scores less."""
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)

    async def hits(dense: float, text: float) -> list[pb.ChunkHit]:
        return await weighted_search(
            service, embedder, [collection.id], "what is a zorblax", dense_weight=dense, text_weight=text
        )

    dense_alone = await hits(0.5, 0.0)
    assert dense_alone[0].score == pytest.approx(0.5)
    assert all(0 <= later.score < 0.5 for later in dense_alone[1:])
    assert [hit.score for hit in dense_alone] == sorted((hit.score for hit in dense_alone), reverse=True)
    [text_alone] = await hits(0.0, 2.0)
    assert text_alone.score == pytest.approx(2.0)
    both = await hits(0.5, 2.0)
    assert both[0].chunk.source_key == "glossary.md"
    assert (both[0].ranks.dense, both[0].ranks.text) == (1, 1)
    assert both[0].score == pytest.approx(2.5)
    # The others hold none of its words: full text's part of their score is 0.
    assert [hit.score for hit in both[1:]] == pytest.approx([hit.score for hit in dense_alone[1:]])


async def test_a_word_spelt_with_a_format_character_finds_the_chunks_spelt_so(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """A zero-width non-joiner is part of Persian spelling: a query typed with it finds the chunk
    that holds the word so, as well as one that holds it without."""
    await service.upload(
        collection.id,
        ("joined.md", "# Persian\n\nمی\u200cخواهم یک کتاب\n".encode()),
        ("plain.md", "# Plain\n\nمیخواهم\n".encode()),
        ("other.md", b"# Other\n\nUnrelated words.\n"),
    )
    await service.wait_for_jobs(collection.id)
    found = await search(service, embedder, [collection.id], "می\u200cخواهم", dense=False)
    assert sorted(hit.chunk.source_key for hit in found) == ["joined.md", "plain.md"]


async def test_a_word_stored_with_an_invisible_character_is_found_by_the_word(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """Text pasted from a PDF or a web page holds soft hyphens and zero-width spaces. PostgreSQL
    stored 'zor<soft hyphen>blax' as 'zor<soft hyphen>' and 'alpha<ZWSP>omega' as one word:
    no query found either. Chunks are indexed as queries are read."""
    await service.upload(
        collection.id,
        ("hyphenated.md", "# Glos\u00adsary\n\nA zor\u00adblax reconciles bil\u2060ling.\n".encode()),
        ("joined.md", "# Joined\n\nalpha\u200bomega, then \ufeffquasar\n".encode()),
        ("other.md", b"# Other\n\nUnrelated words.\n"),
    )
    await service.wait_for_jobs(collection.id)
    for query, source_key in [
        ("zorblax", "hyphenated.md"),
        ("glossary billing", "hyphenated.md"),
        ("omega", "joined.md"),
        ("alpha", "joined.md"),
        ("quasar", "joined.md"),
        ("zor\u00adblax", "hyphenated.md"),  # typed as stored
    ]:
        found = await search(service, embedder, [collection.id], query, dense=False)
        assert [hit.chunk.source_key for hit in found] == [source_key], query


async def test_chunks_are_indexed_with_the_format_characters_a_query_drops(database: str) -> None:
    """The store's searchable_text and the query's without_format_characters treat every format
    character (Unicode category Cf) alike: a zero-width space or a byte order mark separates
    words, the others go. A Unicode release with new ones fails here until both know them."""
    characters = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    connection = await connect(database)
    try:
        await apply_migrations(connection, MIGRATIONS)
        stored = await connection.fetch(
            "SELECT c, collections.searchable_text('a' || c || 'b') AS text FROM unnest($1::text[]) AS c",
            characters,
        )
    finally:
        await connection.close()
    differing = {
        f"U+{ord(row['c']):04X}": row["text"]
        for row in stored
        if row["text"] != without_format_characters(f"a{row['c']}b")
    }
    assert differing == {}
    assert without_format_characters("a\u200bb\u00adc") == "a bc"


async def test_full_text_ranks_by_term_frequency_and_by_rarity(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider, database: str
) -> None:
    await service.upload(
        collection.id,
        ("once.md", b"# Notes\n\nThe cache holds warm entries for the service."),
        ("thrice.md", b"# Notes\n\nThe cache, the cache and the cache hold entries."),
        ("rare.md", b"# Notes\n\nA quasar of entries, kept for the service."),
        ("filler.md", b"# Notes\n\nThe service keeps entries of every kind for later."),
    )
    await service.wait_for_jobs(collection.id)
    by_frequency = await search(service, embedder, [collection.id], "cache", dense=False)
    assert [hit.chunk.source_key for hit in by_frequency] == ["thrice.md", "once.md"]
    # BM25 marks the query's lexemes with weight A: no stored position may carry it already
    connection = await connect(database)
    try:
        marked = "SELECT count(*) FROM collections.md_chunks WHERE ts_filter(search_text, '{a}') <> ''"
        assert await connection.fetchval(marked) == 0
    finally:
        await connection.close()
    # "quasar" is in one chunk, "service" in three of four: the rare word decides; in a scope
    # this small every word brings its chunks in, so those with "service" alone follow.
    by_rarity = await search(service, embedder, [collection.id], "quasar service", dense=False)
    keys = [hit.chunk.source_key for hit in by_rarity]
    assert keys[0] == "rare.md"
    assert sorted(keys[1:]) == ["filler.md", "once.md"]


async def test_a_paraphrase_with_no_shared_words_is_found_by_the_dense_stream(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)
    hits = await search(service, embedder, [collection.id], "how long do we retain copies of our data")
    assert hits[0].chunk.source_key == "backup.md"
    assert hits[0].ranks.dense == 1
    assert hits[0].chunk.section_anchor == "backups"
    assert list(hits[0].chunk.heading_path) == ["Backups"]


async def test_streams_take_a_connection_each_and_never_a_second(
    service: Running,
    collection: pb.Collection,
    embedder: EmbeddingProvider,
    settings: Settings,
    database: str,
) -> None:
    """The streams of one search run at once, each on a pooled connection of its own; one that
    waited for a second connection could deadlock a busy pool. A one-connection pool still
    answers, its streams taking turns."""
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)
    one = msgspec.structs.replace(settings.database, pool_min_size=1, pool_max_size=1)
    pool = await create_pool(database, one, schema=MIGRATIONS.schema)
    try:
        hits = await ChunkSearch(pool).search(await glossary_query(collection, embedder))
    finally:
        await pool.close()
    assert hits[0].chunk.source_key == "glossary.md"
    assert hits[0].ranks["text"] == 1
    assert set(hits[0].ranks) == {"dense", "text"}


async def test_a_failing_stream_fails_the_search_at_once_and_gives_every_connection_back(
    service: Running,
    collection: pb.Collection,
    embedder: EmbeddingProvider,
    settings: Settings,
    database: str,
) -> None:
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)

    async def slow(connection: Connection) -> list[uuid.UUID]:
        await connection.fetchval("SELECT pg_sleep(30)")
        return []

    async def failing(connection: Connection) -> list[uuid.UUID]:
        await connection.fetchval("SELECT pg_sleep(0.2)")
        raise ValueError("this stream broke")

    pool = await create_pool(database, settings.database, schema=MIGRATIONS.schema)
    retriever = HybridRetriever(TABLE)
    try:
        query = await glossary_query(collection, embedder)
        began = time.monotonic()
        with pytest.raises(ValueError, match="this stream broke"):
            await retriever.search(pool, query, {"slow": Stream(1.0, slow), "broken": Stream(1.0, failing)})
        assert time.monotonic() - began < 10  # the slow stream was cancelled, not waited for
        assert pool.get_idle_size() == pool.get_size()  # and no stream still holds a connection
        assert len(await retriever.search(pool, query)) == 4  # the pool still serves
    finally:
        await pool.close()


async def test_search_never_leaves_the_scope(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    other = (
        await service.stub.CreateCollection(
            pb.CreateCollectionRequest(name="Secret", visibility=pb.VISIBILITY_PRIVATE, owner="bob")
        )
    ).collection
    await service.upload(collection.id, *DOCUMENTS)
    await service.upload(other.id, ("zorblax.md", b"# Zorblax secrets\n\nThe zorblax zorblax zorblax."))
    await service.wait_for_jobs(collection.id)
    await service.wait_for_jobs(other.id)
    hits = await search(service, embedder, [collection.id], "zorblax secrets")
    assert {hit.chunk.collection_id for hit in hits} == {collection.id}
    assert await search(service, embedder, [], "zorblax secrets") == []
    both = await search(service, embedder, [collection.id, other.id], "zorblax secrets")
    assert both[0].chunk.collection_id == other.id


async def test_chunk_lexemes_are_stored_inside_the_row(
    service: Running, collection: pb.Collection, database: str
) -> None:
    """BM25 reads every candidate's tsvector: it must not live out of line (TOAST), where each
    read costs an index lookup and more pages, even for a chunk near the size limit."""
    words = " ".join(f"term{number}" for number in range(420))  # ~3,800 characters, 420 lexemes
    await service.upload(collection.id, ("long.md", f"# Long\n\n{words}\n".encode()))
    connection = await connect(database)
    try:
        rows = await connection.fetch(
            "SELECT pg_column_size(search_text) AS size, pg_column_toast_chunk_id(search_text) AS toast"
            " FROM collections.md_chunks WHERE collection_id = $1",
            uuid.UUID(collection.id),
        )
    finally:
        await connection.close()
    assert len(rows) == 1
    assert rows[0]["size"] > 2_000  # large enough that the default storage would move it out
    assert rows[0]["toast"] is None


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ({"rrf_k": -60.0}, "rrf_k must be a positive number"),
        ({"limit": 1001}, "limit must be between 1 and 1000"),
        ({"dense_weight": math.inf}, "stream weights must be finite and not negative"),
        ({"text_weight": -1.0}, "stream weights must be finite and not negative"),
        ({"query_embedding": [math.nan] * 384}, "not a finite number"),
    ],
)
async def test_numbers_the_ranking_cannot_take_are_refused(
    service: Running, collection: pb.Collection, numbers: dict[str, Any], message: str
) -> None:
    with pytest.raises(aio.AioRpcError) as refused:
        await service.stub.SearchChunks(
            pb.SearchChunksRequest(collection_ids=[collection.id], query="restart", **{"limit": 3, **numbers})
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (refused.value.details() or "")


async def test_full_text_ranks_every_chunk_of_a_small_collection_that_holds_query_words(
    service: Running, collection: pb.Collection
) -> None:
    """In a glossary-sized collection, the chunk holding most of a question comes first by full
    text, not only chunks holding its rarest word."""
    documents = {
        "restart-worker.md": b"# Worker restart\n\nTo restart a stuck worker, drain it, then restart it.",
        "ledger.md": b"# Ledger\n\nThe ledger records each payment.",
        "billing.md": b"# Billing\n\nA payment is settled nightly.",
        "cache.md": b"# Cache\n\nRestart the cache after a deploy.",
        "pool.md": b"# Pool\n\nEach worker takes jobs from the queue.",
    } | {f"filler-{i}.md": f"# Filler {i}\n\nunrelated{i} entry{i}".encode() for i in range(15)}
    await service.upload(collection.id, *documents.items())
    found = await service.stub.SearchChunks(
        pb.SearchChunksRequest(
            collection_ids=[collection.id],
            query="how do I restart the payment worker",
            limit=10,
            dense_weight=0,
            text_weight=1,
        )
    )
    keys = [hit.chunk.source_key for hit in found.hits]
    assert keys[0] == "restart-worker.md"
    assert set(keys) == {"restart-worker.md", "ledger.md", "billing.md", "cache.md", "pool.md"}


async def test_a_route_search_is_filled_to_its_limit_and_a_collection_search_is_not(
    service: Running, collection: pb.Collection
) -> None:
    """Without a query vector and with no word in common, the streams find nothing: a route's
    collection search (fill_to_limit) still answers its count, at score 0; a plain one does not."""
    await service.upload(
        collection.id, *[(f"term-{i}.md", f"# Term {i}\n\nDefinition {i}.".encode()) for i in range(4)]
    )
    request = pb.SearchChunksRequest(
        collection_ids=[collection.id], query="zyxwv qwerty", limit=3, text_weight=1
    )
    assert list((await service.stub.SearchChunks(request)).hits) == []
    request.fill_to_limit = True
    filled = list((await service.stub.SearchChunks(request)).hits)
    assert len({hit.chunk.id for hit in filled}) == 3
    assert all(hit.score == 0.0 and (hit.ranks.dense, hit.ranks.text) == (0, 0) for hit in filled)


async def test_the_largest_page_a_store_gives_is_searched_by_both_streams(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """A limit of 1000 asks the HNSW scan for 1000 candidates, pgvector's most (a larger
    ef_search was an internal error)."""
    await service.upload(collection.id, *DOCUMENTS)
    await service.wait_for_jobs(collection.id)
    hits = await weighted_search(
        service, embedder, [collection.id], "nightly snapshots", dense_weight=1.0, text_weight=1.0, limit=1000
    )
    assert len(hits) == len(DOCUMENTS)  # the dense stream ranks every chunk
    assert hits[0].chunk.source_key == "backup.md"


async def test_a_word_is_found_whichever_unicode_form_it_was_typed_and_stored_in(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """'café' composed or as e + U+0301 (macOS input, a copy from a PDF): either form of the
    query finds either form of the text."""
    composed, decomposed = "café", unicodedata.normalize("NFD", "café")
    assert decomposed != composed
    await service.upload(
        collection.id,
        ("menu.md", f"# Menu\n\nThe {composed} opens at seven.".encode()),
        ("pdf.md", f"# Copied\n\nThe {decomposed} closes at ten.".encode()),
    )
    for query in (composed, decomposed):
        hits = await search(service, embedder, [collection.id], query, dense=False)
        assert sorted(hit.chunk.source_key for hit in hits) == ["menu.md", "pdf.md"], ascii(query)


# Documentation that names a setting once, among pages that hold the setting's parts apart and often.
SETTING_DOCUMENTS = [
    (
        "fusion.md",
        b"# Fusion constant\n\nThe streams are fused by reciprocal rank fusion. To change its constant,"
        b" set COGRAPH_SEARCH__RRF_K in the environment of the search pods and restart them; smaller"
        b" values favour the first ranks of each stream over agreement between the streams.",
    ),
    (
        "search.md",
        b"# Search\n\nCograph search runs a dense stream and a full-text stream. Search results show the"
        b" rank of each hit in each stream (RRF), and the top k hits are returned. Cograph search is"
        b" served by the search pods: search, search, search.",
    ),
    (
        "ranking.md",
        b"# Ranking\n\nRRF adds 1/(k + rank) over the streams; k is the constant. Cograph keeps k"
        b" small so that a first rank counts. Search for k and RRF in the Cograph search docs.",
    ),
    ("backup.md", DOCUMENTS[3][1]),
]


async def test_a_setting_named_as_written_is_found_where_it_is_written(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """Full text splits COGRAPH_SEARCH__RRF_K into 'cograph', 'search', 'rrf' and 'k', which
    other pages hold, apart and more often. The chunk that writes the name comes first in the
    full-text stream; a query that is nothing but the name is a lookup, which a sentence
    embedding of 'cograph search rrf k' cannot serve, so the dense stream does not run for it."""
    await service.upload(collection.id, *SETTING_DOCUMENTS)
    await service.wait_for_jobs(collection.id)

    for lookup in ("COGRAPH_SEARCH__RRF_K", "`COGRAPH_SEARCH__RRF_K`"):
        hits = await search(service, embedder, [collection.id], lookup)
        assert hits[0].chunk.source_key == "fusion.md", lookup
        assert (hits[0].ranks.text, hits[0].ranks.dense) == (1, 0)
        assert all(hit.ranks.dense == 0 for hit in hits)

    # In a sentence the dense stream runs as ever; the full-text stream still puts the name first.
    hits = await search(service, embedder, [collection.id], "how do I set COGRAPH_SEARCH__RRF_K for search?")
    [written] = [hit for hit in hits if hit.chunk.source_key == "fusion.md"]
    assert written.ranks.text == 1
    assert all(hit.ranks.dense for hit in hits)

    # A name written nowhere is still looked up by its parts, in full text alone.
    hits = await search(service, embedder, [collection.id], "COGRAPH_SEARCH_PODS")
    assert hits
    assert all(hit.ranks.dense == 0 and hit.ranks.text for hit in hits)
    # Asked for dense alone, a name is searched by the dense stream: nothing else would run.
    dense_only = await weighted_search(
        service, embedder, [collection.id], "COGRAPH_SEARCH__RRF_K", dense_weight=1.0, text_weight=0.0
    )
    assert len(dense_only) == 4
    assert all(hit.ranks.dense and hit.ranks.text == 0 for hit in dense_only)


async def test_full_text_holding_little_of_a_question_does_not_outvote_the_dense_stream(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """A question in other words than its answer's: full text ranks first a short page sharing one
    common word with it. Equal votes by rank would put that page first in the fusion too; its best
    chunk holds a small share of the question, so full text's weight is less, its scores say how
    far behind its first page the answer is, and the dense stream's answer comes first."""
    await service.upload(collection.id, *HOUSEKEEPING)
    await service.wait_for_jobs(collection.id)
    question = "how long do we retain copies of our data"

    async def ranked(dense: float, text: float) -> list[pb.ChunkHit]:
        return await weighted_search(
            service, embedder, [collection.id], question, dense_weight=dense, text_weight=text, limit=5
        )

    dense_alone = [hit.chunk.source_key for hit in await ranked(1.0, 0.0)]
    text_alone = [hit.chunk.source_key for hit in await ranked(0.0, 1.0)]
    assert dense_alone[0] == "backup.md"
    assert text_alone[0] != "backup.md"
    assert "backup.md" in text_alone
    # Equal votes by rank, the fusion this one replaced, put full text's first page on top.
    equal_votes = reciprocal_rank_fusion({"dense": dense_alone, "text": text_alone}, {}, DEFAULT_RRF_K, 5)
    assert equal_votes[0].key == text_alone[0]

    hybrid = await ranked(1.0, 1.0)
    assert hybrid[0].chunk.source_key == "backup.md"
    assert hybrid[0].ranks.dense == 1
    assert hybrid[0].ranks.text == text_alone.index("backup.md") + 1
