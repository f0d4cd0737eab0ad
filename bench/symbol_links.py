"""How well a sync links doc mentions to the symbols they mean, on a real repository whose docs say
which symbol each mention means (mkdocstrings cross-references, see bench/symbol_links_gold.py).

    .venv/bin/python bench/symbol_links.py [--corpus textual|griffe] [--archive PATH]
                                          [--mode stripped|explicit|plain] [--rounds 1]
                                          [--baseline WORKTREE]

Two real repositories, each with its gold set and hand-labelled negatives beside this file:
`textual` (../shared/corpora/textual.tar.gz) and `griffe` (outside the project: made by
bench/fetch_griffe.sh at /work/corpora/griffe-2.4.1.tar.gz). The archive is unpacked to a temporary
directory, its docs rewritten per --mode, and synced through the real repodocs service (gRPC,
embedded PostgreSQL) as a local checkout; the stored mentions are read back from the database and
scored:

- recall: of the gold (document, mention, definition) triples, the share for which the document
  stores a link from that mention text to that definition's code node (a node in the definition's
  file, of its name, whose lines hold the definition's line);
- negatives left unlinked: of the hand-labelled non-symbol code spans
  (bench/symbol_links_negatives[_griffe].json), the share whose text the document links to
  nothing, also for those whose name collides with a member of the library.

Modes: `stripped` rewrites `[text][pkg.mod.Name]` to `[text][]`, the autorefs form that marks a
reference and leaves its identifier to be resolved (the author's mark stays, the answer goes);
`plain` drops the link to its visible text only; `explicit` leaves the targets in place.

Embedding is not what is measured: a deterministic hashing provider stands in for the model, and
the sync time is taken from the sync's own record, with the time spent in the provider subtracted.
With --baseline, the same run is made with another tree's repodocs service first (a git worktree of
an earlier head): its package directory goes first on PYTHONPATH of a child process.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import msgspec

from cograph.repodocs.v1 import repodocs_service_pb2 as pb
from cograph.repodocs.v1 import repodocs_service_pb2_grpc as pb_grpc
from cograph_db import EmbeddedPostgres
from cograph_embeddings import EmbeddingProvider, ModelInfo
from cograph_grpc import open_channel
from cograph_repodocs.app import create_service
from cograph_settings import Settings

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Corpus:
    archive: Path
    gold: Path
    negatives: Path


CORPORA = {
    "textual": Corpus(
        HERE.parent.parent / "shared" / "corpora" / "textual.tar.gz",
        HERE / "symbol_links_gold.json",
        HERE / "symbol_links_negatives.json",
    ),
    "griffe": Corpus(
        Path("/work/corpora/griffe-2.4.1.tar.gz"),
        HERE / "symbol_links_gold_griffe.json",
        HERE / "symbol_links_negatives_griffe.json",
    ),
}
REFERENCE = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[([A-Za-z_][\w.]*)\]")
DIMENSION = 64


class HashingProvider(EmbeddingProvider):
    """Deterministic vectors from a text's hash: cheap, and the linker never looks at them."""

    kind = "hashing"

    def __init__(self) -> None:
        super().__init__(256)
        self.seconds = 0.0

    async def info(self) -> ModelInfo:
        return ModelInfo("bench-hashing", DIMENSION)

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        vectors = []
        for text in texts:
            digest = hashlib.sha512(text.encode()).digest()
            raw = [b - 127.5 for b in digest[:DIMENSION]]
            norm = math.sqrt(sum(x * x for x in raw)) or 1.0
            vectors.append([x / norm for x in raw])
        self.seconds += time.perf_counter() - started
        return vectors


def unpack(archive_path: Path, directory: Path, mode: str) -> Path:
    with tarfile.open(archive_path) as archive:
        archive.extractall(directory, filter="data")
    root = next(p for p in directory.iterdir() if p.is_dir())
    if mode == "explicit":
        return root
    replacement = (lambda m: f"[{m.group(1)}][]") if mode == "stripped" else (lambda m: m.group(1))
    for path in (root / "docs").rglob("*.md"):
        text = path.read_text()
        rewritten = REFERENCE.sub(replacement, text)
        if rewritten != text:
            path.write_text(rewritten)
    return root


QUERY = """
SELECT d.path AS document, m.mention, n.path, n.name, n.start_line, n.end_line, n.qualified_name
       {reason}
FROM repo_document_chunk_mentions m
JOIN repo_document_chunks k ON k.id = m.chunk_id
JOIN repo_documents d ON d.id = k.document_id
JOIN code_nodes n ON n.id = m.code_node_id
"""


async def sync_and_read(root: Path, directory: Path) -> dict[str, object]:
    embedded = EmbeddedPostgres(directory / "postgres")
    dsn = embedded.start()
    defaults = Settings()
    settings = msgspec.structs.replace(
        defaults,
        repodocs=msgspec.structs.replace(
            defaults.repodocs, checkout_dir=str(directory / "checkouts"), sync_interval_seconds=0
        ),
    )
    provider = HashingProvider()
    host = await create_service(settings, dsn, provider)
    await host.start("127.0.0.1", 0, 0)
    channel = open_channel(f"127.0.0.1:{host.grpc.port}", settings.grpc)
    try:
        stub = pb_grpc.RepoDocsServiceStub(channel)
        repository = (
            await stub.RegisterRepository(
                pb.RegisterRepositoryRequest(
                    ref=pb.RepositoryRef(host="bench.local", owner="bench", name=root.name),
                    checkout_path=str(root),
                    visibility=pb.VISIBILITY_PUBLIC,
                    owner_subject="bench",
                )
            )
        ).repository
        sync = await finished(stub, repository.id, repository.last_sync.id)
        seconds = (sync.finished_at.ToDatetime() - sync.started_at.ToDatetime()).total_seconds()
        connection = await asyncpg.connect(dsn, server_settings={"search_path": "repodocs, public"})
        try:
            has_reason = await connection.fetchval(
                "SELECT count(*) FROM information_schema.columns"
                " WHERE table_name = 'repo_document_chunk_mentions' AND column_name = 'reason'"
            )
            rows = await connection.fetch(QUERY.format(reason=", m.reason" if has_reason else ""))
        finally:
            await connection.close()
    finally:
        await channel.close(None)
        await host.stop()
        embedded.stop()
    return {
        "seconds": seconds - provider.seconds,
        "code_nodes": sync.code_nodes,
        "mentions": sync.mentions,
        "phases": {k: round(v, 2) for k, v in sync.progress.phase_seconds.items()},
        "rows": [dict(row) for row in rows],
    }


async def finished(stub: pb_grpc.RepoDocsServiceAsyncStub, repository_id: str, sync_id: str) -> pb.Sync:
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        syncs = (await stub.ListSyncs(pb.ListSyncsRequest(repository_id=repository_id))).syncs
        sync = next(s for s in syncs if s.id == sync_id)
        if sync.status == pb.SYNC_STATUS_ERROR:
            raise SystemExit(f"sync failed: {sync.error}")
        if sync.status == pb.SYNC_STATUS_SUCCESS:
            return sync
        await asyncio.sleep(0.1)
    raise SystemExit("the sync did not finish in 30 minutes")


def covers(row: dict[str, object], definition: dict[str, object]) -> bool:
    line = definition["line"]
    assert isinstance(line, int)
    start, end = row["start_line"], row["end_line"]
    assert isinstance(start, int)
    assert isinstance(end, int)
    return row["path"] == definition["path"] and row["name"] == definition["name"] and start <= line <= end


def score(corpus: Corpus, rows: list[dict[str, object]], verbose: bool) -> dict[str, object]:
    gold = json.loads(corpus.gold.read_text())["mentions"]
    negatives = json.loads(corpus.negatives.read_text())["negatives"]
    by_mention: dict[tuple[object, object], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_mention[(row["document"], row["mention"])].append(row)
    triples = {(g["document"], g["identifier"], json.dumps(g["definition"], sort_keys=True)): g for g in gold}
    found = wrong = unlinked = 0
    reasons: dict[str, int] = defaultdict(int)
    misses: list[str] = []
    for (document, identifier, _), item in sorted(triples.items()):
        linked = by_mention.get((document, identifier), [])
        hit = [row for row in linked if covers(row, item["definition"])]
        if hit:
            found += 1
            reasons[str(hit[0].get("reason", "-"))] += 1
        else:
            if linked:
                wrong += 1
                got = ", ".join(sorted({str(r["qualified_name"]) for r in linked}))[:160]
            else:
                unlinked += 1
                got = "nothing"
            misses.append(f"  {document}: {identifier!r} -> {item['definition']['qualified']}; got {got}")
    left = collides_left = collides = 0
    linked_negatives: list[str] = []
    for negative in negatives:
        linked = by_mention.get((negative["document"], negative["identifier"]), [])
        collides += negative["collides"]
        if not linked:
            left += 1
            collides_left += negative["collides"]
        else:
            got = ", ".join(sorted({str(r["qualified_name"]) for r in linked}))[:120]
            linked_negatives.append(f"  {negative['document']}: {negative['identifier']!r} -> {got}")
    if verbose:
        print("missed gold mentions:", *misses, sep="\n")
        print("linked negatives:", *linked_negatives, sep="\n")
    return {
        "gold": len(triples),
        "recall": found / len(triples),
        "wrong": wrong,
        "unlinked": unlinked,
        "reasons": dict(reasons),
        "negatives": len(negatives),
        "negatives_unlinked": left / len(negatives),
        "colliding": collides,
        "colliding_unlinked": collides_left / collides if collides else 1.0,
    }


def run_once(corpus: Corpus, mode: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="symbol-links-") as name:
        directory = Path(name)
        root = unpack(corpus.archive, directory, mode)
        return asyncio.run(sync_and_read(root, directory))


def child(worktree: str, arguments: list[str]) -> dict[str, object]:
    """One run with the repodocs service of another tree."""
    environment = dict(os.environ)
    package = str(Path(worktree).resolve() / "services" / "repodocs" / "src")
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package, environment.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, __file__, *arguments, "--json"],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="textual")
    parser.add_argument("--archive", type=Path, help="the corpus's archive, if not where CORPORA says")
    parser.add_argument("--mode", choices=("stripped", "explicit", "plain"), default="stripped")
    parser.add_argument("--rounds", type=int, default=1, help="syncs per tree, for the time's median")
    parser.add_argument("--baseline", help="a worktree of the head to compare the sync time with")
    parser.add_argument("--verbose", action="store_true", help="list the misses and linked negatives")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = CORPORA[args.corpus]
    if args.archive:
        corpus = Corpus(args.archive.resolve(), corpus.gold, corpus.negatives)
    if not corpus.archive.exists():
        parser.error(f"{corpus.archive} is missing (for griffe, run bench/fetch_griffe.sh)")
    if args.json:
        result = run_once(corpus, args.mode)
        rows = result.pop("rows")
        assert isinstance(rows, list)
        result["score"] = score(corpus, rows, verbose=False)
        print(json.dumps(result, default=str))
        return
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        if args.baseline:
            arguments = ["--corpus", args.corpus, "--archive", str(corpus.archive), "--mode", args.mode]
            base = child(args.baseline, arguments)
            times["baseline"].append(float(str(base["seconds"])))
            print(f"baseline  ({args.baseline}): {describe(base, base['score'])}")
        result = run_once(corpus, args.mode)
        rows = result.pop("rows")
        assert isinstance(rows, list)
        scored = score(corpus, rows, args.verbose)
        times["this tree"].append(float(str(result["seconds"])))
        print(f"this tree ({args.mode}): {describe(result, scored)}")
    if args.baseline:
        ratio = statistics.median(times["this tree"]) / statistics.median(times["baseline"])
        print(f"sync time this tree / baseline (medians of {args.rounds}): {ratio:.2f} (target at most 1.2)")


def describe(result: dict[str, object], scored: object) -> str:
    assert isinstance(scored, dict)
    return (
        f"recall {scored['recall']:.3f} of {scored['gold']} (wrong link {scored['wrong']},"
        f" unlinked {scored['unlinked']}); negatives unlinked {scored['negatives_unlinked']:.3f}"
        f" of {scored['negatives']} (colliding {scored['colliding_unlinked']:.3f} of {scored['colliding']});"
        f" sync {float(str(result['seconds'])):.2f} s excluding embedding; code nodes {result['code_nodes']},"
        f" mentions {result['mentions']}; reasons {scored['reasons']}; phases {result.get('phases', {})}"
    )


if __name__ == "__main__":
    main()
