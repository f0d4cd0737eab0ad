"""The dense stream sees the whole chunk: a chunk longer than the model's input is embedded window
by window and found by its nearest window; what is embedded carries the document's title and the
chunk's headings, by a recipe stored with the vectors, so vectors of another recipe are stale."""

from __future__ import annotations

import re
import uuid

import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_db import connect
from cograph_embeddings import EmbeddingProvider
from support.collections import Running

GARDEN = [
    "Tomato seedlings want a sunny windowsill and soil that drains well. Water them from below so"
    " the stems stay dry, and turn the trays every day so they grow straight rather than leaning"
    " toward the glass.",
    "Before planting out, harden the young plants for a week: a few hours outdoors on the first day, a"
    " little longer each day after, and always indoors again before frost is forecast.",
    "Compost made from kitchen scraps and autumn leaves feeds the beds through the season. Turn the heap"
    " every fortnight and keep it as damp as a wrung-out sponge.",
    "Mulch keeps moisture in and weeds down. Straw works for vegetables, bark chips for shrubs, and a"
    " layer five centimetres deep is plenty for most borders.",
    "Prune roses in late winter, cutting above an outward-facing bud at a slant, and remove any dead,"
    " crossing or diseased canes first.",
    "Slugs come out on damp evenings. Copper tape around pots, beer traps sunk level with the soil and a"
    " nightly walk with a torch all keep their numbers down.",
    "Crop rotation moves each family of vegetables to a new bed every year, so soil pests and diseases"
    " that favour one family find nothing to live on the next season.",
    "Seeds saved from open-pollinated varieties come true the following year; dry them on paper for a"
    " week and store them in labelled envelopes somewhere cool and dark.",
    "Raised beds warm up sooner in spring and drain better after heavy rain. Fill them with a mix of"
    " topsoil and well-rotted manure, and top them up each autumn.",
    "Herbs such as thyme, sage and rosemary prefer poor, gritty soil and full sun; basil and parsley"
    " want richer ground and regular watering through the summer.",
    "Fruit trees planted in winter while dormant settle in fastest. Stake them for the first two years"
    " and keep a circle of bare ground around the trunk free of grass.",
    "Greenhouse ventilation matters as much as heat: open the vents on sunny mornings even in March, and"
    " close them again in the afternoon to hold the warmth overnight.",
    "Succession sowing of lettuce, radish and spinach every three weeks gives a steady harvest instead"
    " of a glut followed by nothing.",
    "Pollinators visit open, single flowers far more than double ones; a strip of lavender, borage and"
    " marigolds near the vegetables brings them in.",
    "Watering deeply twice a week is better than a daily sprinkle: the roots follow the water down and"
    " the plants cope with dry spells much better.",
    "Potatoes are earthed up as the shoots appear, drawing soil around the stems so the tubers stay"
    " covered and never turn green in the light.",
    "Leaf mould takes two years to make, but a sack of it is the best thing for seed compost and for"
    " opening up heavy clay soil.",
    "Tomato seedlings want a sunny windowsill and soil that drains well. Water them from below so"
    " the stems stay dry, and turn the trays every day so they grow straight rather than leaning"
    " toward the glass.",
    "Compost made from kitchen scraps and autumn leaves feeds the beds through the season. Turn the heap"
    " every fortnight and keep it as damp as a wrung-out sponge.",
    "Beans climb any support they are given; hazel poles tied at the top make a wigwam that lasts for"
    " several seasons and is easy to pick from on both sides.",
    "Onion sets go in early, pointed end up, with only the tips showing; birds pull them out for fun,"
    " so net the bed until the roots take hold.",
    "Garlic cloves planted in autumn need the cold to split into bulbs; lift them in midsummer when half"
    " the leaves have yellowed.",
]
FACT = (
    "Marmalade, the ginger tabby owned by our lighthouse keeper, has one habit everybody on the island"
    " knows. Every January, once the sun has set, she climbs the spiral stairs of the tower, jumps onto"
    " the brass housing of the lamp, which stays warm all through its turning, and curls up there asleep"
    " until dawn. Visitors who climb up see her purring beside the lens, tail wrapped around her paws,"
    " while the light sweeps across the rocks and the sea below."
)
LONG = "# Garden notes\n\n" + "\n\n".join([*GARDEN, FACT]) + "\n"
QUERY = "feline snoozing atop beacon"  # not one word of it in the document
OTHERS = [
    ("harbour.md", b"# Harbour\n\nFishing boats and a few yachts are moored along the stone quay."),
    (
        "stars.md",
        b"# Stars\n\nOn clear nights away from town you can see the Milky Way and meteors in August.",
    ),
]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


async def dense_search(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider, query: str
) -> list[pb.ChunkHit]:
    response = await service.stub.SearchChunks(
        pb.SearchChunksRequest(
            collection_ids=[collection.id],
            query=query,
            query_embedding=await embedder.embed_query(query),
            embedding_model=(await embedder.info()).name,
            limit=10,
            dense_weight=1.0,
            text_weight=0.0,
            rrf_k=60,
        )
    )
    return list(response.hits)


async def test_a_fact_at_the_end_of_a_long_chunk_is_found_by_the_dense_stream_alone(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider, database: str
) -> None:
    """A 4,000-character chunk whose last 600 characters alone say it: the model reads about the
    first 1,000, so a single vector of it was about gardening and ranked below the other pages."""
    assert 3800 <= len(LONG) <= 4000
    assert LONG.index(FACT) >= len(LONG) - 600
    assert not words(QUERY) & words(LONG)
    await service.upload(collection.id, ("garden.md", LONG.encode()), *OTHERS)
    await service.wait_for_jobs(collection.id)

    hits = await dense_search(service, collection, embedder, QUERY)
    assert hits[0].chunk.source_key == "garden.md"
    assert hits[0].ranks.dense == 1
    # Still one hit per chunk, the chunk whole: windows are how it is found, not what is returned.
    assert len(hits) == 3
    assert hits[0].chunk.content == LONG.rstrip("\n")
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.total_chunks, status.embedded_chunks, status.stale_chunks) == (3, 3, 0)

    connection = await connect(database)
    try:
        windows = dict(
            await connection.fetch(
                "SELECT d.source_key, count(w.chunk_id) FROM collections.md_documents d"
                " JOIN collections.md_chunks k ON k.document_id = d.id"
                " LEFT JOIN collections.md_chunk_windows w ON w.chunk_id = k.id"
                " WHERE d.collection_id = $1 GROUP BY d.source_key",
                uuid.UUID(collection.id),
            )
        )
    finally:
        await connection.close()
    # The long chunk has windows beside its own vector; a chunk that fits stays one vector.
    assert windows["garden.md"] >= 3
    assert windows["harbour.md"] == windows["stars.md"] == 0


async def test_the_title_is_embedded_with_the_chunk(
    service: Running, collection: pb.Collection, embedder: EmbeddingProvider
) -> None:
    """A section that never names what it is about, in a document whose title does: embedded
    alone, a page that names it but says nothing to the question ranked above it."""
    await service.upload(
        collection.id,
        (
            "volcanoes.md",
            b"---\ntitle: Volcanoes\n---\n\n## Warning signs\n\n"
            b"Small tremors come first, then the ground swells and gas escapes from new cracks.\n",
        ),
        (
            "facts.md",
            b"# Volcano facts\n\nAbout 1,350 volcanoes on Earth are potentially active, most of them"
            b" around the Pacific.\n",
        ),
    )
    await service.wait_for_jobs(collection.id)
    hits = await dense_search(service, collection, embedder, "how do you know a volcano is going to erupt")
    assert [hit.chunk.source_key for hit in hits] == ["volcanoes.md", "facts.md"]


@pytest.mark.parametrize("recipe", [None, "an older recipe"])
async def test_vectors_of_another_recipe_are_stale_until_a_re_embed(
    service: Running, collection: pb.Collection, database: str, recipe: str | None
) -> None:
    """Vectors made before the recipe was recorded, or by another: embed-status counts them stale,
    and a re-embed makes them current again."""
    await service.upload(collection.id, ("garden.md", LONG.encode()), *OTHERS)
    await service.wait_for_jobs(collection.id)
    connection = await connect(database)
    try:
        await connection.execute(
            "UPDATE collections.md_chunks SET embedding_recipe = $2 WHERE collection_id = $1",
            uuid.UUID(collection.id),
            recipe,
        )
    finally:
        await connection.close()
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.embedded_chunks, status.pending_chunks, status.stale_chunks) == (0, 0, 3)

    await service.stub.ReEmbedCollection(
        pb.ReEmbedCollectionRequest(collection_id=collection.id, requested_by="alice")
    )
    jobs = await service.wait_for_jobs(collection.id)
    assert all(job.status == pb.JOB_STATUS_SUCCESS for job in jobs)
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert (status.embedded_chunks, status.pending_chunks, status.stale_chunks) == (3, 0, 0)
