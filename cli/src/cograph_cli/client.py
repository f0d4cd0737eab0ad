"""The client commands (`repo`, `collection`, `search`): a thin client of the REST gateway.

Every error the gateway answers is RFC 9457 problem+json; its detail is printed as
`cograph: <detail>` with exit status 1. The wiki mode of `search` has no REST endpoint and is
asked of the gateway's MCP endpoint (its `cograph_retrieve` tool), with the same token.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import httpx
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

URL_VARIABLE = "COGRAPH_URL"
TOKEN_VARIABLE = "COGRAPH_TOKEN"  # noqa: S105 (the name of a variable, not a secret)
DEFAULT_URL = "http://127.0.0.1:8080"
MARKDOWN_SUFFIXES = (".md", ".mdx")
# Documents per batch upload, and content bytes: well inside the gateway's defaults
# (COGRAPH_COLLECTIONS__MAX_BATCH_DOCUMENTS 1000, COGRAPH_GATEWAY__MAX_UPLOAD_BYTES 64 MiB).
BATCH_DOCUMENTS = 100
BATCH_BYTES = 8 * 2**20
# The collections service's refusal of a batch larger than its COGRAPH_COLLECTIONS__MAX_BATCH_DOCUMENTS.
_BATCH_LIMIT = re.compile(r"a batch holds at most (\d+) documents")
TIMEOUT = httpx.Timeout(30.0, read=300.0)
SNIPPET_CHARS = 200
_SLUG = re.compile(r"^([^/\s]+)/([^/\s]+)/([^/\s]+)$")


class ClientError(Exception):
    """A failure to report on one line, as `cograph: <message>`."""


def fail(message: str) -> NoReturn:
    sys.exit(f"cograph: {message}")


class Gateway:
    """The REST gateway at `url`, with a bearer token when one is given."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url = url.rstrip("/")
        if token is not None and not token.isascii():
            raise ClientError("the token has characters that cannot be sent in a header: check --token")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            self._client = httpx.Client(base_url=self.url, headers=headers, timeout=TIMEOUT)
        except httpx.InvalidURL as error:
            raise ClientError(
                f"{url!r} is not a gateway URL: {error} (check --url or {URL_VARIABLE})"
            ) from None

    def close(self) -> None:
        self._client.close()

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The answer, whatever its status; a gateway that cannot be reached is a ClientError."""
        try:
            return self._client.request(method, path, **kwargs)
        except httpx.ConnectError:
            raise ClientError(
                f"no Cograph gateway answers at {self.url} (start one with `cograph up`, "
                f"or give --url or {URL_VARIABLE})"
            ) from None
        except httpx.TimeoutException:
            raise ClientError(f"the gateway at {self.url} did not answer in time") from None
        except httpx.HTTPError as error:
            raise ClientError(f"cannot reach the gateway at {self.url}: {error}") from None

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer; a problem answer is a ClientError with its detail."""
        return self.answer(self.send(method, path, **kwargs))

    def answer(self, response: httpx.Response) -> Any:
        """The JSON of a response; a problem answer is a ClientError with its detail."""
        if response.is_error:
            raise ClientError(problem_detail(response))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise ClientError(
                f"{self.url} answered {response.status_code} with something other than JSON: "
                "is it a Cograph gateway?"
            ) from None

    def upload_one(self, collection_id: str, source_key: str, content: bytes) -> tuple[int, Any]:
        """One document as a multipart file; answers (status, body) so a refusal is that document's."""
        response = self.send(
            "POST",
            f"/api/md-collections/{collection_id}/documents",
            files={"file": (Path(source_key).name or "document.md", content, "text/markdown")},
            data={"source_key": source_key},
        )
        body: Any = None
        if response.content:
            try:
                body = response.json()
            except ValueError:
                body = None
        return response.status_code, body


def problem_detail(response: httpx.Response) -> str:
    """The detail of a problem+json answer; a hint about the token on a 401."""
    detail = ""
    try:
        body = response.json()
        if isinstance(body, dict):
            detail = str(body.get("detail") or body.get("title") or "")
    except ValueError:  # not JSON: a proxy's page (an HTML 504) says nothing in its first line
        detail = ""
    detail = detail or f"HTTP {response.status_code} {response.reason_phrase}"
    if response.status_code == 401:
        detail += f" (give --token or {TOKEN_VARIABLE}; `cograph up` prints a dev token)"
    return detail


def repository_ref(slug: str) -> tuple[str, str, str]:
    match = _SLUG.match(slug.strip())
    if not match:
        raise ClientError(f"{slug!r} is not a repository: give HOST/OWNER/NAME, e.g. github.com/acme/tools")
    return match.group(1), match.group(2), match.group(3)


# Uploads.


@dataclass
class LocalDocument:
    source_key: str
    path: Path


def _warn(message: str) -> None:
    print(f"cograph: warning: {message}", file=sys.stderr)


def _directory_documents(given: Path) -> list[LocalDocument]:
    """Every .md/.mdx under `given`, keyed by its path inside it.

    A symbolic link is followed while its target stays inside `given`; one that points outside,
    leads nowhere, or back to a directory it is in (a loop) is skipped with a warning.
    """
    root = Path(os.path.realpath(given))
    found: list[LocalDocument] = []

    def skip(path: Path, why: str) -> None:
        _warn(f"skipped {path}: {why}")

    def walk(directory: Path, ancestors: frozenset[Path]) -> None:
        try:
            entries = sorted(directory.iterdir())
        except OSError as error:
            skip(directory, f"cannot be read ({error.strerror or error})")
            return
        for path in entries:
            markdown = path.suffix.lower() in MARKDOWN_SUFFIXES
            if path.is_symlink():
                target = Path(os.path.realpath(path))
                if not target.exists():
                    if markdown:
                        skip(path, f"a symbolic link to {os.readlink(path)}, which leads to no file")
                    continue
                if not target.is_relative_to(root):
                    if markdown or target.is_dir():
                        skip(path, f"a symbolic link to {target}, outside {given}")
                    continue
                if target in ancestors:
                    skip(path, f"a symbolic link to {target}, a directory it is in (a loop)")
                    continue
            if path.is_dir():
                walk(path, ancestors | {Path(os.path.realpath(path))})
            elif markdown and path.is_file():
                found.append(LocalDocument(path.relative_to(given).as_posix(), path))

    walk(given, frozenset({root}))
    return found


def markdown_files(paths: list[Path]) -> list[LocalDocument]:
    """Files as given (keyed by their name), and every .md/.mdx under a directory (keyed relative to it)."""
    found: list[LocalDocument] = []
    for given in paths:
        if given.is_dir():
            found.extend(_directory_documents(given))
        elif given.is_file():
            found.append(LocalDocument(given.name, given))
        else:
            raise ClientError(f"{given}: no such file or directory")
    return found


def batches(
    documents: list[tuple[str, bytes]], most: int = BATCH_DOCUMENTS
) -> Iterator[list[tuple[str, bytes]]]:
    """Batches of at most `most` documents and BATCH_BYTES of content (a larger document alone)."""
    batch: list[tuple[str, bytes]] = []
    size = 0
    for document in documents:
        if batch and (len(batch) >= most or size + len(document[1]) > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(document)
        size += len(document[1])
    if batch:
        yield batch


def smaller_batch(response: httpx.Response, size: int) -> int | None:
    """How many documents a batch of `size` may hold, when the gateway refused it for its count:
    the limit the refusal names, else half; None when the refusal is about something else."""
    if response.status_code not in (400, 422) or size < 2:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    detail = str(body.get("detail") or "") if isinstance(body, dict) else ""
    match = _BATCH_LIMIT.search(detail)
    if match is None:
        return None
    limit = int(match.group(1))
    return limit if 0 < limit < size else size // 2


def _progress(*columns: ProgressColumn) -> Progress:
    """Progress on stderr, drawn only on a terminal (stdout stays the command's answer), gone when done."""
    return Progress(*columns, console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty())


def _is_utf8(content: bytes) -> bool:
    try:
        content.decode()
    except UnicodeDecodeError:
        return False
    return True


def upload(gateway: Gateway, collection_id: str, paths: list[Path]) -> int:
    """Upload the documents in batches; prints failures, warnings and the counts. Answers the exit status."""
    documents = markdown_files(paths)
    if not documents:
        raise ClientError("no markdown files (.md, .mdx) found in " + ", ".join(map(str, paths)))
    # The collection is checked first: a wrong id is one line, not a failure per document.
    gateway.request("GET", f"/api/md-collections/{collection_id}")
    counts = {"created": 0, "replaced": 0, "unchanged": 0, "failed": 0}
    failures: list[str] = []
    warnings: list[str] = []

    def record(result: dict[str, Any]) -> None:
        key = result.get("source_key", "?")
        error = result.get("error")
        if error:
            failures.append(f"failed   {key}: {error.get('message')} ({error.get('reason')})")
        warnings.extend(f"warning  {key}: {w}" for w in result.get("warnings") or ())

    utf8: list[tuple[str, bytes]] = []
    other: list[tuple[str, bytes]] = []
    for document in documents:
        try:
            content = document.path.read_bytes()
        except OSError as error:
            failures.append(f"failed   {document.source_key}: {error.strerror or error} (unreadable)")
            counts["failed"] += 1
            continue
        (utf8 if _is_utf8(content) else other).append((document.source_key, content))

    def upload_one(key: str, content: bytes) -> None:
        status, answer = gateway.upload_one(collection_id, key, content)
        answer = answer if isinstance(answer, dict) else {}
        if status < 400:
            state = answer.get("state", "created")
            counts[state] = counts.get(state, 0) + 1
            record(answer)
        elif status in (413, 422):  # this document's refusal: the others go on
            counts["failed"] += 1
            reason = answer.get("reason") or ("too_large" if status == 413 else "refused")
            message = answer.get("detail") or f"HTTP {status}"
            record({"source_key": key, "error": {"reason": reason, "message": message}})
        else:
            raise ClientError(f"{key}: {answer.get('detail') or f'HTTP {status}'}")

    columns = (TextColumn("uploading"), BarColumn(), MofNCompleteColumn(), TextColumn("documents"))
    progress = _progress(*columns, TimeElapsedColumn())
    with progress:
        task = progress.add_task("upload", total=len(utf8) + len(other))
        pending = deque(batches(utf8))
        while pending:
            batch = pending.popleft()
            body = {"documents": [{"source_key": k, "content": c.decode()} for k, c in batch]}
            path = f"/api/md-collections/{collection_id}/documents/batch"
            response = gateway.send("POST", path, json=body)
            most = smaller_batch(response, len(batch))
            if most is not None:
                # The gateway takes fewer documents a batch (COGRAPH_COLLECTIONS__MAX_BATCH_DOCUMENTS):
                # this batch and the rest go in batches that small.
                rest = [document for waiting in (batch, *pending) for document in waiting]
                pending = deque(batches(rest, most))
                continue
            if response.status_code == 413:
                # Over the gateway's request limit as one body: each goes alone, and one too
                # large for any request is that document's failure, not the command's.
                for key, content in batch:
                    upload_one(key, content)
                    progress.advance(task)
                continue
            answer = gateway.answer(response)
            for result in answer["results"]:
                record(result)
            for name in counts:
                counts[name] += int(answer["counts"].get(name, 0))
            progress.advance(task, len(batch))
        # JSON carries text only: a document that is not UTF-8 goes as a file, for the
        # collection to judge (and refuse with its reason) like any other.
        for key, content in other:
            upload_one(key, content)
            progress.advance(task)
    for line in failures + warnings:
        print(line)
    print(
        f"{len(documents)} document(s): {counts['created']} created, {counts['replaced']} replaced, "
        f"{counts['unchanged']} unchanged, {counts['failed']} failed"
    )
    if counts["created"] or counts["replaced"]:  # unchanged and failed documents have nothing to embed
        print("embedding in the background; `cograph search` finds them once it is done")
    return 1 if counts["failed"] else 0


# Search.


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def _where(source: str, heading_path: list[str], anchor: str) -> str:
    parts = [source, *heading_path]
    return " › ".join(p for p in parts if p) + (f"  #{anchor}" if anchor else "")


def _score(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, int | float) else "-"


def _collection_hit(hit: dict[str, Any]) -> list[str]:
    chunk = hit["chunk"]
    where = _where(chunk["source_key"], chunk["heading_path"], chunk["section_anchor"])
    return [
        f"{_score(hit['score'])}  {where}",
        f"        {chunk['citation']}",
        f"        {_snippet(chunk['content'])}",
    ]


def _doc_hit(hit: dict[str, Any]) -> list[str]:
    chunk = hit["chunk"]
    where = _where(chunk["path"], chunk["heading_path"], chunk["heading_anchor"])
    return [f"{_score(hit.get('score'))}  {where}", f"        {_snippet(chunk['content'])}"]


def _code_hit(hit: dict[str, Any]) -> list[str]:
    node = hit["node"]
    lines = [
        f"{_score(hit['score'])}  {node['path']}:{node['start_line']}-{node['end_line']}  "
        f"{node['qualified_name']} ({node['kind']})",
    ]
    if node.get("signature"):
        lines.append(f"        {_snippet(node['signature'])}")
    for related in hit.get("related_repo_doc_chunks") or ():
        chunk = related["chunk"]
        lines.append(f"        doc: {_where(chunk['path'], chunk['heading_path'], chunk['heading_anchor'])}")
    return lines


def _mcp_doc_hit(hit: dict[str, Any]) -> list[str]:
    where = _where(hit["path"], hit["heading_path"], hit["citation"].partition("#")[2])
    return [f"{_score(hit.get('score'))}  {where}", f"        {_snippet(hit['content'])}"]


def _section(title: str, hits: list[dict[str, Any]], render: Any) -> list[str]:
    if not hits:
        return []
    lines = [title]
    for rank, hit in enumerate(hits, 1):
        first, *rest = render(hit)
        lines.append(f"{rank:>3}. {first}")
        lines.extend(rest)
    return lines


def _failures(failures: list[Any]) -> None:
    for failure in failures:
        message = (
            f"the {failure.get('store')} store failed: {failure.get('message')}"
            if isinstance(failure, dict)
            else str(failure)
        )
        _warn(message)


def _retrieve_wiki(gateway: Gateway, query: str, repository: str, limit: int | None) -> dict[str, Any]:
    """Wiki mode over MCP: the REST API has no repository-docs search of its own."""
    arguments: dict[str, Any] = {"query": query, "repository": repository, "mode": "wiki"}
    if limit is not None:
        arguments["limit"] = limit
    answer = gateway.request(
        "POST",
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "cograph_retrieve", "arguments": arguments},
        },
        headers={"Accept": "application/json, text/event-stream"},
    )
    if not isinstance(answer, dict):
        raise ClientError("the gateway's MCP endpoint answered nothing")
    if "error" in answer:
        raise ClientError(str(answer["error"].get("message", answer["error"])))
    result = answer.get("result") or {}
    if result.get("isError"):
        texts = [c.get("text", "") for c in result.get("content") or () if isinstance(c, dict)]
        raise ClientError(" ".join(t for t in texts if t) or "the search failed")
    structured = result.get("structuredContent")
    if not isinstance(structured, dict):
        raise ClientError("the gateway's MCP endpoint answered no structured result")
    return structured


def search(gateway: Gateway, args: argparse.Namespace) -> int:
    query: str = args.query
    body: dict[str, Any] = {"query": query}
    if args.limit is not None:
        body["limit"] = args.limit
    mode = args.mode or ("code" if args.repository else "route")
    if args.collection and (args.repository or args.mode not in (None, "route")):
        raise ClientError("--collection searches one collection: leave out --mode and --repository")
    lines: list[str]
    if args.collection:
        answer = gateway.request("POST", f"/api/md-collections/{args.collection}/search", json=body)
        lines = _section("collection", answer["hits"], _collection_hit)
        failures = answer["failures"]
    elif mode in ("code", "wiki"):
        if not args.repository:
            raise ClientError(f"--mode {mode} searches one repository: give --repository HOST/OWNER/NAME")
        host, owner, name = repository_ref(args.repository)
        if mode == "code":
            answer = gateway.request("POST", f"/api/repos/{host}/{owner}/{name}/code/search", json=body)
            lines = _section("code", answer["hits"], _code_hit)
        else:
            answer = _retrieve_wiki(gateway, query, f"{host}/{owner}/{name}", args.limit)
            lines = _section("repository docs", answer["docs"], _mcp_doc_hit)
        failures = answer.get("failures") or []
    else:
        if args.repository:
            raise ClientError("route searches everything you can read: leave out --repository")
        answer = gateway.request("POST", "/api/search/route", json=body)
        confidence = {p["store"]: p["confidence"] for p in answer["pools"]}

        def title(store: str, label: str) -> str:
            return f"{label} (confidence {confidence[store]:.2f})" if store in confidence else label

        lines = [
            *_section(title("collections", "collections"), answer["collections"], _collection_hit),
            *_section(title("repo_docs", "repository docs"), answer["repo_docs"], _doc_hit),
            *_section(title("code", "code"), answer["code"], _code_hit),
        ]
        failures = answer["failures"]
    if args.json:
        import json

        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print("\n".join(lines) if lines else "no results")
    _failures(failures)
    return 0


# Repositories and collections.


def _sync_summary(sync: dict[str, Any]) -> str:
    counters = sync.get("counters") or {}
    summary = ", ".join(f"{value} {name.replace('_', ' ')}" for name, value in counters.items())
    return f"sync {sync.get('status')}: {summary}" + (
        f"; error: {sync['error']}" if sync.get("error") else ""
    )


def repo(gateway: Gateway, args: argparse.Namespace) -> int:
    host, owner, name = repository_ref(args.repository)
    if args.repo_command == "add":
        body: dict[str, Any] = {"host": host, "owner": owner, "name": name, "visibility": args.visibility}
        if args.clone_url:
            body["clone_url"] = args.clone_url
        else:
            body["checkout_path"] = str(Path(args.checkout).resolve())
        if args.branch:
            body["default_branch"] = args.branch
        if args.web_url:
            body["web_url"] = args.web_url
        created = gateway.request("POST", "/api/repos", json=body)
        print(f"registered {host}/{owner}/{name} ({created['id']}); `cograph repo sync` indexes it")
        return 0
    if args.repo_command == "update":
        return _update(gateway, args, f"{host}/{owner}/{name}")
    if args.repo_command == "delete":
        return _delete(gateway, args, f"{host}/{owner}/{name}")
    slug = f"{host}/{owner}/{name}"
    sync = gateway.request("POST", f"/api/repos/{slug}/sync")
    if not args.wait:
        print(f"sync {sync.get('status', 'queued')} ({sync['id']})")
        return 0
    sync = _watch_sync(gateway, slug, sync)
    print(_sync_summary(sync))
    for skipped in sync.get("skipped") or ():
        print(f"skipped  {skipped['path']}: {skipped['reason']}")
    return 1 if sync.get("status") == "error" else 0


# What the bar counts in each phase of a sync: (done, total) in its progress; fetch and link have none.
_PHASE_COUNTS = {
    "discover": ("files_read", "files_total", "files read"),
    "chunk": ("documents_chunked", "documents_to_chunk", "documents chunked"),
    "embed": ("vectors_embedded", "vectors_to_embed", "vectors embedded"),
}
POLL_SECONDS = 0.5


def _watch_sync(gateway: Gateway, slug: str, sync: dict[str, Any]) -> dict[str, Any]:
    """Follow a sync until it ends, a bar per phase with its counts as they grow; answers the ended
    sync."""
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with _progress(*columns) as progress:
        shown = "queued"
        task = progress.add_task(f"{slug}: queued", total=None)
        while sync.get("status") not in ("success", "error"):
            time.sleep(POLL_SECONDS)
            sync = _sync_of(gateway, slug, sync["id"])
            phase = sync.get("phase") or "queued"
            done_key, total_key, what = _PHASE_COUNTS.get(phase, ("", "", ""))
            counts = sync.get("progress") or {}
            if phase != shown:  # the phase that ended is drawn whole, and the next one begins
                ended = next(t for t in progress.tasks if t.id == task)
                progress.update(task, completed=ended.total or 0)
                progress.stop_task(task)
                shown = phase
                label = f"{slug}: {phase}" + (f" ({what})" if what else "")
                task = progress.add_task(label, total=counts.get(total_key) or None)
            if counts.get(total_key):
                progress.update(task, completed=counts.get(done_key, 0), total=counts[total_key])
    return sync


def _sync_of(gateway: Gateway, slug: str, sync_id: str) -> dict[str, Any]:
    """One sync of the repository, from its newest syncs."""
    page = gateway.request("GET", f"/api/repos/{slug}/syncs", params={"page_size": 20})
    for sync in page.get("items") or ():
        if sync.get("id") == sync_id:
            return dict(sync)
    raise ClientError(f"sync {sync_id} of {slug} is no longer listed")


def _update(gateway: Gateway, args: argparse.Namespace, slug: str) -> int:
    body: dict[str, Any] = {}
    if args.visibility is not None:
        body["visibility"] = args.visibility
    if args.branch is not None:
        body["default_branch"] = args.branch
    if args.sync_interval is not None:
        body["sync_interval_seconds"] = args.sync_interval
    if not body:
        raise ClientError("nothing to change: give --visibility, --branch or --sync-interval")
    changed = gateway.request("PATCH", f"/api/repos/{slug}", json=body)
    interval = changed.get("sync_interval_seconds")
    schedule = (
        "the default interval" if interval is None else "never" if interval == 0 else f"every {interval} s"
    )
    print(
        f"{slug}: {changed['visibility']}, branch {changed['default_branch'] or '(the default)'},"
        f" scheduled {schedule}"
    )
    if "default_branch" in body and (changed.get("last_sync") or {}).get("status") in ("queued", "running"):
        print("syncing the new branch: `cograph repo sync --wait` shows it end")
    return 0


def _delete(gateway: Gateway, args: argparse.Namespace, slug: str) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            raise ClientError(f"deleting {slug} cannot be undone: give --yes to confirm")
        answer = input(f"delete {slug} and everything indexed of it? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("not deleted")
            return 1
    gateway.request("DELETE", f"/api/repos/{slug}")
    print(f"deleted {slug}")
    return 0


def _sync_interval(value: str) -> int | str:
    """--sync-interval: seconds (0: never), or `default`."""
    if value == "default":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds nor 'default'") from None


def collection(gateway: Gateway, args: argparse.Namespace) -> int:
    if args.collection_command == "create":
        body = {"name": args.name, "description": args.description, "visibility": args.visibility}
        created = gateway.request("POST", "/api/md-collections", json=body)
        print(created["id"])
        return 0
    return upload(gateway, args.collection_id, args.paths)


# The command line.


def add_parsers(commands: Any) -> None:
    """`repo`, `collection` and `search`, each with --url and --token."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=os.environ.get(URL_VARIABLE) or DEFAULT_URL,
        help=f"the gateway (default: {URL_VARIABLE}, else {DEFAULT_URL})",
    )
    common.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VARIABLE) or None,
        help=f"bearer token (default: {TOKEN_VARIABLE}; `cograph up` prints a dev token)",
    )

    repo_parser = commands.add_parser("repo", help="register, sync, change and delete repositories")
    repo_commands = repo_parser.add_subparsers(dest="repo_command", required=True)
    add = repo_commands.add_parser("add", parents=[common], help="register a repository")
    add.add_argument("repository", metavar="HOST/OWNER/NAME")
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--clone-url", help="an https or ssh URL (the schemes and hosts the server allows)")
    source.add_argument(
        "--checkout", help="an existing checkout on the repodocs service's host (administrators)"
    )
    add.add_argument("--visibility", choices=("private", "public"), default="private")
    add.add_argument("--branch", help="the branch to index (default: the remote's default)")
    add.add_argument("--web-url", help="base URL of file links, e.g. https://github.com/o/n/blob/main")
    sync = repo_commands.add_parser("sync", parents=[common], help="sync a repository")
    sync.add_argument("repository", metavar="HOST/OWNER/NAME")
    sync.add_argument(
        "--wait", action="store_true", help="follow the sync with a progress bar, then print its counters"
    )
    update = repo_commands.add_parser(
        "update", parents=[common], help="change a repository's visibility, branch or schedule"
    )
    update.add_argument("repository", metavar="HOST/OWNER/NAME")
    update.add_argument("--visibility", choices=("private", "public"))
    update.add_argument("--branch", help="the branch to track ('' for the remote's default); synced at once")
    update.add_argument(
        "--sync-interval",
        type=_sync_interval,
        metavar="SECONDS|default",
        help="seconds between scheduled syncs (60 to a year), 0 for none, or default",
    )
    remove = repo_commands.add_parser(
        "delete", parents=[common], help="delete a repository and everything indexed of it"
    )
    remove.add_argument("repository", metavar="HOST/OWNER/NAME")
    remove.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    collection_parser = commands.add_parser("collection", help="create markdown collections, upload to them")
    collection_commands = collection_parser.add_subparsers(dest="collection_command", required=True)
    create = collection_commands.add_parser(
        "create", parents=[common], help="create a collection; prints its id"
    )
    create.add_argument("name")
    create.add_argument("--description", default="")
    create.add_argument("--visibility", choices=("private", "public", "admin_only"), default="private")
    put = collection_commands.add_parser(
        "upload", parents=[common], help="upload markdown files, or every .md/.mdx under directories"
    )
    put.add_argument("collection_id", metavar="COLLECTION_ID")
    put.add_argument("paths", metavar="PATH", nargs="+", type=Path)

    find = commands.add_parser(
        "search", parents=[common], help="search collections, repository docs and code"
    )
    find.add_argument("query")
    find.add_argument("--collection", metavar="ID", help="search one collection")
    find.add_argument(
        "--mode",
        choices=("route", "code", "wiki"),
        help="route (default): everything you can read; code or wiki: one --repository",
    )
    find.add_argument("--repository", metavar="HOST/OWNER/NAME")
    find.add_argument("--limit", type=int, help="most hits (per pool when routing)")
    find.add_argument("--json", action="store_true", help="print the gateway's answer as JSON")


COMMANDS = {"repo": repo, "collection": collection, "search": search}


def run(args: argparse.Namespace) -> None:
    """Run a client command; exits with its status, or 1 with one line on an error."""
    try:
        gateway = Gateway(args.url, args.token)
    except ClientError as error:
        fail(str(error))
    try:
        status = COMMANDS[args.command](gateway, args)
    except ClientError as error:
        fail(str(error))
    except KeyboardInterrupt:
        status = 130
    finally:
        gateway.close()
    if status:
        sys.exit(status)
