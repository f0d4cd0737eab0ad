"""One hybrid retriever for every chunk table: a dense stream (pgvector cosine on an HNSW
index per dimension) and a BM25 full-text stream. Prose is fused by the streams' scores, full
text's weight set by how much of the query its best chunk holds (coverage.py); code nodes, with
their symbol stream, by reciprocal rank fusion (fusion.py).

Each store describes its table with a ChunkTable; the SQL is built once here from those
trusted identifiers and always restricted to the scope ids passed in, so an empty scope
finds nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import asyncpg
import msgspec

from cograph_db import Connection
from cograph_retrieval.bm25 import K1, B, TermWeights, weigh
from cograph_retrieval.coverage import coverage, query_idf, trusted_weights
from cograph_retrieval.fusion import DEFAULT_RRF_K, Scored, convex_combination, reciprocal_rank_fusion

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
# How many windows the dense stream reads for each chunk it ranks: a long chunk's windows may
# all be nearer than the best window of the next chunk.
WINDOWS_DEPTH = 3


def _decomposed(lexemes: list[str]) -> dict[str, str]:
    """Each lexeme's decomposed form, where it has another: 'café' typed as e + U+0301 (macOS
    input, a copy from a PDF) is another lexeme to PostgreSQL than the composed one, and stored
    text may hold either. Derived from the query's composed lexemes, not by splitting decomposed
    text again, which would cut words anew (a combining mark after a capital starts a camelCase part)."""
    variants = {lexeme: unicodedata.normalize("NFD", lexeme) for lexeme in lexemes if not lexeme.isascii()}
    return {lexeme: variant for lexeme, variant in variants.items() if variant != lexeme}


# Invisible format characters (category Cf) pasted text carries: PostgreSQL keeps them inside
# a word ('deployment\u200b' is another lexeme than 'deployment'), so no chunk would match it. A
# zero-width space or a byte order mark separates words; the others (a soft hyphen, joiners,
# direction marks) are inside one, and go.
_WORD_SEPARATORS = frozenset("\u200b\ufeff")


def without_format_characters(text: str) -> str:
    """Text with its format characters dealt with, as the stores index chunks (the SQL
    function searchable_text, ddl/searchable_text.sql, does the same)."""
    return "".join(
        " " if ch in _WORD_SEPARATORS else "" if unicodedata.category(ch) == "Cf" else ch for ch in text
    )


def searchable(text: str) -> str:
    """The query text full text is searched by: composed (NFC), and where it holds format
    characters, both with them dealt with and as written (a chunk indexed by an earlier release
    may hold a word as written: a Persian word keeps its zero-width non-joiner)."""
    text = unicodedata.normalize("NFC", text)
    if text.isascii():
        return text
    cleaned = without_format_characters(text)
    return cleaned if cleaned == text else f"{cleaned} {text}"


# An underscore between two letters or digits: snake_case and SCREAMING_SNAKE names, which full
# text splits into their parts (COGRAPH_SEARCH__RRF_K is 'cograph', 'search', 'rrf', 'k'). Dotted
# names, URLs and paths stay one lexeme, and need nothing more.
_COMPOUND_NAME = re.compile(r"\w*[^\W_]_+[^\W_]\w*")


def compound_names(text: str) -> list[str]:
    """The query's names that full text splits into parts, each once, in order."""
    return list(dict.fromkeys(_COMPOUND_NAME.findall(text)))


def names_only(text: str) -> bool:
    """Whether the query is nothing but such names (`parse_config()`, COGRAPH_SEARCH__RRF_K): a
    lookup, which the dense stream cannot serve. A sentence embedding of a name stands for the
    words of its parts, and ranks pages about those words above the one that writes the name."""
    rest = _COMPOUND_NAME.sub(" ", text)
    return rest != text and not any(ch.isalnum() for ch in rest)


def skips_dense(text: str, text_weight: float) -> bool:
    """Whether a search of doc or collection chunks runs without its dense stream: a lookup of
    names, when full text runs to serve it. Route measures those pools by the same rule."""
    return text_weight > 0 and names_only(text)


class ChunkTable(msgspec.Struct, frozen=True):
    """Where a store keeps its chunks and their term statistics. The statistics tables and the
    triggers that keep them are this library's DDL (ddl/, see its README), which the store's
    migrations include for these names."""

    # Columns: id, <scope_column>, search_text, embedding, embedding_model, embedding_dim.
    table: str
    scope_column: str  # the column the caller's readable scope restricts
    term_stats: str  # (scope_id, lexeme, df)
    scope_stats: str  # (scope_id, chunks, lexemes)
    text_config: str = "english"
    # A SQL function of the query text to the text[] of lexemes it is searched by, used instead of
    # to_tsvector(text_config, …) where the stored tsvector was built another way (code identifiers).
    lexemes_function: str = ""
    # False when the tsvector has no positions (array_to_tsvector): every lexeme then counts once,
    # and the whole vector is read, since ts_filter only keeps lexemes that have positions. When
    # True, no stored position may carry weight A (headings are B, text D): BM25 marks the query's
    # lexemes with it.
    positional: bool = True
    # The table of the vectors of a long chunk's windows after its first (ddl/chunk_windows.sql),
    # or "" where every row has one vector (code nodes).
    windows: str = ""

    def __post_init__(self) -> None:
        names = (self.table, self.scope_column, self.term_stats, self.scope_stats, self.text_config)
        for name in (*names, self.lexemes_function or "none", self.windows or "none"):
            if not _IDENTIFIER.match(name):
                raise ValueError(f"{name!r} is not a plain SQL identifier")


async def ensure_vector_index(connection: Connection, table: ChunkTable, dimension: int) -> None:
    """The HNSW index dense_stream is planned on, for one dimension (vectors are stored untyped,
    so there is one per dimension, over that dimension's rows). Looked up first: CREATE INDEX
    takes a SHARE lock on the table, which waits for and then blocks every writer, even when
    the index already exists."""
    for vectors in (table.table, table.windows) if table.windows else (table.table,):
        name = f"{vectors}_embedding_{dimension:d}"
        if await connection.fetchval("SELECT to_regclass($1) IS NOT NULL", name):
            continue
        # IF NOT EXISTS is not race-free: another worker or replica may create it at the same moment.
        with contextlib.suppress(asyncpg.DuplicateTableError, asyncpg.UniqueViolationError):
            await connection.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON {vectors}"
                f" USING hnsw ((embedding::vector({dimension:d})) vector_cosine_ops)"
                f" WHERE embedding_dim = {dimension:d}"
            )


class Query(msgspec.Struct, frozen=True):
    text: str
    scope: Sequence[uuid.UUID]
    limit: int
    embedding: Sequence[float] | None = None  # None or empty: no dense stream
    model: str = ""
    dense_weight: float = 1.0
    text_weight: float = 1.0
    rrf_k: float = DEFAULT_RRF_K  # for rank-fused streams (code nodes); prose is fused by scores
    candidates: int = 100  # per stream, before fusion
    # Optional extra condition on the chunk row `k`, with its own parameters ($1… renumbered).
    condition: str = ""
    condition_args: tuple[object, ...] = ()


class Stream(NamedTuple):
    """A ranked stream: its weight in the fusion, and how it ranks chunk ids on a connection."""

    weight: float
    rank: Callable[[Connection], Awaitable[Sequence[uuid.UUID]]]


class Ranking(list[uuid.UUID]):
    """Chunk ids best first, with their scores: what prose is fused by (fusion.Scored)."""

    def __init__(
        self, ids: Iterable[uuid.UUID] = (), scores: Sequence[float] = (), floor: float = 0.0
    ) -> None:
        super().__init__(ids)
        self.scored = Scored(self, list(scores), floor)


class TextRanking(Ranking):
    """Chunk ids by BM25 score, best first, and the share of the query's information the best of
    them holds (coverage.py), which sets full text's weight in the fusion."""

    def __init__(
        self, ids: Iterable[uuid.UUID] = (), scores: Sequence[float] = (), coverage: float = 0.0
    ) -> None:
        super().__init__(ids, scores)  # a chunk not returned holds none of the selecting lexemes
        self.coverage = coverage


class StreamHit(msgspec.Struct, frozen=True):
    id: uuid.UUID
    score: float
    ranks: dict[str, int]


class HybridRetriever:
    def __init__(self, table: ChunkTable) -> None:
        self.table = table
        t = table
        # The query is split into lexemes the way the stored vectors were built, or they don't meet.
        self._lexemes_sql = (
            f"SELECT array_agg(DISTINCT lexeme) FROM unnest({t.lexemes_function}($1)) AS u(lexeme)"
            if t.lexemes_function
            else f"SELECT array_agg(DISTINCT lexeme) FROM unnest(to_tsvector('{t.text_config}', $1))"
        )
        self._stats_sql = f"""
            SELECT coalesce(sum(chunks), 0) AS chunks, coalesce(sum(lexemes), 0) AS length,
                   (SELECT coalesce(jsonb_object_agg(lexeme, df), '{{}}') FROM (
                        SELECT lexeme, sum(df) AS df FROM {t.term_stats}
                        WHERE scope_id = ANY($1::uuid[]) AND lexeme = ANY($2::text[])
                        GROUP BY lexeme) s) AS df
            FROM {t.scope_stats} WHERE scope_id = ANY($1::uuid[])"""

    def _condition(self, query: Query, first_free: int) -> tuple[str, list[object]]:
        if not query.condition:
            return "", []
        shifted = re.sub(r"\$(\d+)", lambda m: f"${int(m.group(1)) + first_free - 1}", query.condition)
        return f" AND ({shifted})", list(query.condition_args)

    async def text_stream(self, connection: Connection, query: Query) -> TextRanking:
        """Chunk ids by BM25 score, best first."""
        lexemes = await connection.fetchval(self._lexemes_sql, searchable(query.text))
        if not lexemes or not query.scope:
            return TextRanking()
        forms = _decomposed(lexemes)
        stats = await connection.fetchrow(self._stats_sql, list(query.scope), [*lexemes, *forms.values()])
        df = dict(stats["df"])
        # One term in either form: its document frequency is both forms' together, and each form
        # scores with the term's weight (a form no chunk holds matches nothing).
        together = {
            lexeme: df.get(lexeme, 0) + (df.get(forms[lexeme], 0) if lexeme in forms else 0)
            for lexeme in lexemes
        }
        chunks = int(stats["chunks"])
        weights = weigh(lexemes, together, chunks, int(stats["length"]))
        if weights is None:
            return TextRanking()
        names = compound_names(query.text) if self.table.positional else []
        rows = await self._bm25(connection, query, weights.with_forms(forms), names)
        information = query_idf(list(together.values()), chunks)
        best = coverage(rows[0]["matched_idf"], information) if rows else 0.0
        # A chunk that writes the query's names comes first (see _bm25): its score is raised by
        # the best BM25 score once per name, so the scores keep the stream's order.
        top = max((row["score"] for row in rows), default=0.0)
        scores = [row["score"] + row["written"] * top for row in rows]
        return TextRanking((row["id"] for row in rows), scores, best)

    async def _bm25(
        self, connection: Connection, query: Query, weights: TermWeights, names: list[str]
    ) -> list[asyncpg.Record]:
        """BM25 over the candidates. With compound names, the chunks that write them as written
        (a phrase of their parts) come first, most names first: a chunk that holds the parts
        apart is about something else, however often it holds them."""
        t = self.table
        extra, extra_args = self._condition(query, 8 if names else 7)
        # Only the query's own lexemes of each candidate are read: setweight marks them A and
        # ts_filter keeps them, in C, so a long chunk costs no more rows than a short one. Stored
        # vectors hold no A (see ChunkTable), so no earlier pass need clear it.
        matched = (
            "ts_filter(setweight(k.search_text, 'A', $1::text[]), '{a}')" if t.positional else "k.search_text"
        )
        selecting = "ARRAY(SELECT quote_literal(s) FROM unnest($4::text[]) s)"
        phrases, written = "", "0::bigint"
        if names:
            # A name full text keeps whole (one lexeme) is no phrase: BM25 ranks it already.
            phrases = f""",
            phrases AS MATERIALIZED (
                SELECT query FROM (SELECT phraseto_tsquery('{t.text_config}', name) AS query
                                   FROM unnest($7::text[]) AS name) p
                WHERE numnode(query) > 1)"""
            selecting += " || ARRAY(SELECT '(' || query::text || ')' FROM phrases)"
            written = "(SELECT count(*) FROM phrases p WHERE k.search_text @@ p.query)"
        sql = f"""
            WITH q(lexeme, idf) AS (SELECT * FROM unnest($1::text[], $2::float8[])){phrases},
            candidates AS (
                SELECT k.id, {matched} AS matched, length(k.search_text)::float8 AS chunk_length,
                       {written} AS written
                FROM {t.table} k
                WHERE k.{t.scope_column} = ANY($3::uuid[])
                  AND k.search_text @@ array_to_string({selecting}, ' | ')::tsquery
                  {extra})
            SELECT c.id, sum(q.idf) AS matched_idf, c.written,
                   sum(q.idf * (coalesce(array_length(u.positions, 1), 1) * ({K1}::float8 + 1))
                       / (coalesce(array_length(u.positions, 1), 1)
                          + {K1}::float8 * (1 - {B}::float8 + {B}::float8 * c.chunk_length / $5::float8)))
                       AS score
            FROM candidates c
            CROSS JOIN LATERAL unnest(c.matched) AS u(lexeme, positions, weights)
            JOIN q ON q.lexeme = u.lexeme
            GROUP BY c.id, c.chunk_length, c.written
            ORDER BY c.written DESC, score DESC, c.id
            LIMIT $6"""
        rows: list[asyncpg.Record] = await connection.fetch(
            sql,
            weights.lexemes,
            weights.idf,
            list(query.scope),
            weights.selective,
            weights.avg_length,
            query.candidates,
            *([names] if names else []),
            *extra_args,
        )
        return rows

    async def dense_stream(self, connection: Connection, query: Query) -> Ranking:
        """Chunk ids by cosine similarity to the query vector, nearest first (same model only)."""
        if not query.embedding or not query.scope:
            return Ranking()
        t = self.table
        dimension = len(query.embedding)
        extra, extra_args = self._condition(query, 5)
        # The expression and predicate match the index of ensure_vector_index.
        # relaxed_order may hand rows back slightly out of distance order: sorted again (the
        # "+ 0" keeps the planner from taking the inner order as already sorted), so the dense
        # rank each hit reports is its true one.
        vector = f"$1::vector({dimension:d})"
        sql = f"""
            WITH nearest AS MATERIALIZED (
                SELECT k.id, k.embedding::vector({dimension:d}) <=> {vector} AS distance
                FROM {t.table} k
                WHERE k.embedding_dim = {dimension:d} AND k.embedding_model = $2
                  AND k.{t.scope_column} = ANY($3::uuid[]) {extra}
                ORDER BY distance
                LIMIT $4)
            SELECT id, distance FROM nearest ORDER BY distance + 0, id"""
        if t.windows:
            # A chunk is as near as its nearest window. The chunk rows hold each chunk's first
            # window; the windows table the others, several a chunk, so it is read deeper for
            # as many chunks.
            joined = f"JOIN {t.table} k ON k.id = w.chunk_id" if extra else ""
            sql = f"""
                WITH nearest AS MATERIALIZED (
                    SELECT k.id, k.embedding::vector({dimension:d}) <=> {vector} AS distance
                    FROM {t.table} k
                    WHERE k.embedding_dim = {dimension:d} AND k.embedding_model = $2
                      AND k.{t.scope_column} = ANY($3::uuid[]) {extra}
                    ORDER BY distance
                    LIMIT $4),
                windows AS MATERIALIZED (
                    SELECT w.chunk_id AS id, w.embedding::vector({dimension:d}) <=> {vector} AS distance
                    FROM {t.windows} w {joined}
                    WHERE w.embedding_dim = {dimension:d} AND w.embedding_model = $2
                      AND w.{t.scope_column} = ANY($3::uuid[]) {extra}
                    ORDER BY distance
                    LIMIT $4 * {WINDOWS_DEPTH:d})
                SELECT id, min(distance) AS distance
                FROM (SELECT * FROM nearest UNION ALL SELECT * FROM windows) n
                GROUP BY id ORDER BY min(distance), id LIMIT $4"""
        async with connection.transaction():
            # Filtered HNSW scans keep going until enough rows pass the scope filter.
            await connection.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            # pgvector's range is 1 to 1000; past it the iterative scan fills a longer page.
            ef_search = min(max(40, query.candidates), 1000)
            await connection.execute(f"SET LOCAL hnsw.ef_search = {ef_search:d}")
            rows = await connection.fetch(
                sql, list(query.embedding), query.model, list(query.scope), query.candidates, *extra_args
            )
        # Cosine similarity, 0 where it is negative: opposite is no more relevant than unrelated,
        # and a fused score stays at or above 0, the score of Route's filler.
        similarities = [max(1.0 - row["distance"], 0.0) for row in rows]
        # A chunk beyond the candidates is at most as near as the last of them.
        return Ranking((row["id"] for row in rows), similarities, similarities[-1] if rows else 0.0)

    async def search(
        self, pool: asyncpg.Pool[Any], query: Query, extra: Mapping[str, Stream] | None = None
    ) -> list[StreamHit]:
        """The dense and text streams, and any extra ranked stream a store adds, fused. Streams
        with weight 0 are not run; the others run at once, each on a pooled connection of its
        own. A stream holds one connection and never waits for a second, so searches that
        outnumber the pool queue for it instead of deadlocking."""
        dense_weight = query.dense_weight
        if self.table.positional and skips_dense(query.text, query.text_weight):
            dense_weight = 0.0  # a lookup of names: full text finds where they are written
        streams: dict[str, Stream] = {
            "dense": Stream(dense_weight, lambda connection: self.dense_stream(connection, query)),
            "text": Stream(query.text_weight, lambda connection: self.text_stream(connection, query)),
            **(extra or {}),
        }
        running = {name: stream for name, stream in streams.items() if stream.weight > 0}

        async def run(stream: Stream) -> Sequence[uuid.UUID]:
            async with pool.acquire() as connection:
                return await stream.rank(connection)

        tasks = [asyncio.ensure_future(run(stream)) for stream in running.values()]
        try:
            ranked = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # one stream failed: the others' work is of no use now
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # their connections are back
            raise
        rankings = dict(zip(running, ranked, strict=True))
        weights = {name: stream.weight for name, stream in running.items()}
        scored = {name: ranking.scored for name, ranking in rankings.items() if isinstance(ranking, Ranking)}
        if self.table.positional and len(scored) == len(rankings):
            # Prose: full text's weight as far as its best chunk holds the query (coverage.py).
            text = rankings.get("text")
            if "dense" in running and isinstance(text, TextRanking):
                weights["dense"], weights["text"] = trusted_weights(
                    weights["dense"], weights["text"], text.coverage
                )
            fused = convex_combination(scored, weights, query.limit)
        else:
            fused = reciprocal_rank_fusion(rankings, weights, query.rrf_k, query.limit)
        return [StreamHit(uuid.UUID(str(hit.key)), hit.score, hit.ranks) for hit in fused]
