"""The cograph command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import secrets
import subprocess
import sys
from pathlib import Path

import asyncpg
import msgspec

from cograph_cli import client
from cograph_cli.runtime import database, start_service, start_system, wait_for_signal
from cograph_collections.app import MIGRATIONS as COLLECTIONS_MIGRATIONS
from cograph_db import MigrationError, apply_migrations, connect
from cograph_embeddings import EmbeddingError, create_provider, default_export_dir
from cograph_repodocs.app import MIGRATIONS as REPODOCS_MIGRATIONS
from cograph_settings import ApiToken, Settings, SettingsError, load_settings, settings_table
from cograph_telemetry import configure_logging, configure_tracing

SERVICES = ("gateway", "search", "collections", "repodocs")
log = logging.getLogger("cograph")


def _local_settings(settings: Settings, port: int | None, data_dir: Path | None) -> Settings:
    """`up` on a laptop: internal services on free loopback ports, state under one directory."""
    replace = msgspec.structs.replace
    if data_dir is not None:
        settings = replace(
            settings,
            database=replace(settings.database, data_dir=str(data_dir / "postgres")),
            repodocs=replace(settings.repodocs, checkout_dir=str(data_dir / "checkouts")),
        )
    settings = replace(
        settings,
        collections=replace(settings.collections, grpc_port=0, http_port=0),
        repodocs=replace(settings.repodocs, grpc_port=0, http_port=0),
        search=replace(settings.search, grpc_port=0, http_port=0),
        gateway=replace(settings.gateway, grpc_port=0, **({"port": port} if port is not None else {})),
    )
    if not settings.auth.api_tokens and not settings.auth.jwt_secret and not settings.auth.jwks_url:
        token = ApiToken(token=f"dev-{secrets.token_urlsafe(24)}", sub="dev", roles=["admin"])
        settings = replace(settings, auth=replace(settings.auth, api_tokens=[token]))
    return settings


async def _up(settings: Settings) -> None:
    async with database(settings) as dsn:
        embedder = create_provider(settings.embedding)
        print("Loading the embedding model…", file=sys.stderr)
        await embedder.info()
        system = await start_system(settings, dsn, embedder)
        try:
            await asyncio.wait_for(system.hosts["gateway"].ready.wait(), timeout=60)
            url = system.gateway_url
            print(f"\nCograph Document RAG is up at {url}")
            print(f"  web pages   {url}/docs  (sign in with a token)")
            print(f"  REST API    {url}/api  (OpenAPI: {url}/api/schema)")
            print(f"  readiness   {url}/readyz")
            tokens = system.settings.auth.api_tokens
            if tokens and tokens[0].sub == "dev":
                usage = "admin; sign in with it, or send 'Authorization: Bearer <token>'"
                print(f"  dev token   {tokens[0].token}   ({usage})")
            print("Press Ctrl-C to stop.", flush=True)
            await wait_for_signal()
            print("Stopping…", file=sys.stderr)
        finally:
            await system.stop()
            await embedder.close()


# The services that store nothing never open a database.
STATELESS = ("gateway", "search")


async def _serve(name: str, settings: Settings) -> None:
    opened = contextlib.nullcontext("") if name in STATELESS else database(settings)
    async with opened as dsn:
        host = await start_service(name, settings, dsn)
        try:
            await wait_for_signal()
        finally:
            await host.stop()


async def _migrate(settings: Settings) -> None:
    async with database(settings) as dsn:
        connection = await connect(dsn)
        try:
            for migrations in (COLLECTIONS_MIGRATIONS, REPODOCS_MIGRATIONS):
                applied = await apply_migrations(connection, migrations)
                print(f"{migrations.schema}: {len(applied)} migration(s) applied")
        finally:
            await connection.close()


async def _prepare(settings: Settings) -> None:
    """Load the embedding model as the services would, which makes its export (openvino, onnx,
    onnx-int8) if EXPORT_DIR holds none: done where the image is built, the image needs no PyTorch."""
    embedding = settings.embedding
    if embedding.provider != "local":
        print(f"nothing to prepare: the {embedding.provider} provider runs its model elsewhere")
        return
    embedder = create_provider(embedding)
    try:
        model = await embedder.info()
    finally:
        await embedder.close()
    where = (
        f"; its export is in {embedding.export_dir or default_export_dir()}"
        if embedding.runtime != "torch"
        else ""
    )
    print(f"{model.name} ({model.dimension} dimensions) is ready on {embedding.runtime}{where}")


def _port(text: str) -> int:
    """A TCP port, or 0 for a free one: checked before anything starts."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give 1-65535, or 0 for a free one")
    return port


# What the embedded PostgreSQL runs; their failure is the server's, told in its log.
_POSTGRES_PROGRAMS = ("initdb", "pg_ctl", "postgres")


def _embedded_failure(settings: Settings, error: subprocess.CalledProcessError) -> str | None:
    """One line about an embedded PostgreSQL that did not start, pointing at its log; None when
    the failed command is not the embedded server's."""
    command = error.cmd if isinstance(error.cmd, list | tuple) else str(error.cmd).split()
    program = Path(str(command[0])).name if command else ""
    if settings.database.dsn or program not in _POSTGRES_PROGRAMS:
        return None
    data_dir = Path(settings.database.data_dir).expanduser().resolve()
    log_file = data_dir / "log"
    where = f"its log says why: {log_file}" if log_file.is_file() else f"it wrote no log in {data_dir}"
    return (
        f"the embedded PostgreSQL in {data_dir} did not start ({program} exited {error.returncode}); {where}"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cograph", description="Cograph Document RAG")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="run all four services in one process on the embedded defaults")
    up.add_argument("--port", type=_port, help="gateway HTTP port (default: COGRAPH_GATEWAY__PORT, 8080)")
    up.add_argument("--host", help="gateway interface (default: COGRAPH_GATEWAY__BIND_HOST, 127.0.0.1)")
    up.add_argument("--data-dir", type=Path, help="where local state lives (default: .cograph)")
    serve = commands.add_parser("serve", help="run one service, as a pod does")
    serve.add_argument("service", choices=SERVICES)
    commands.add_parser("worker", help="run a collections job worker (embedding, link resolution)")
    commands.add_parser("migrate", help="apply every service's migrations and exit")
    commands.add_parser("config", help="print the configuration table")
    commands.add_parser(
        "prepare", help="make the local embedding model's export now, so that running it needs no PyTorch"
    )
    client.add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "config":
        print(settings_table())
        return
    if args.command in client.COMMANDS:
        client.run(args)
        return
    try:
        settings = load_settings()
    except SettingsError as error:
        sys.exit(f"cograph: {error}")
    configure_logging(settings.telemetry)
    # Each service its own name in traces: `serve gateway` is cograph-gateway, `up` cograph-up.
    configure_tracing(
        f"cograph-{args.service if args.command == 'serve' else args.command}", settings.telemetry
    )
    try:
        if args.command == "up":
            settings = _local_settings(settings, args.port, args.data_dir)
            if args.host:
                settings = msgspec.structs.replace(
                    settings, gateway=msgspec.structs.replace(settings.gateway, bind_host=args.host)
                )
            asyncio.run(_up(settings))
        elif args.command == "serve":
            asyncio.run(_serve(args.service, settings))
        elif args.command == "worker":
            asyncio.run(_serve("worker", settings))
        elif args.command == "migrate":
            asyncio.run(_migrate(settings))
        elif args.command == "prepare":
            asyncio.run(_prepare(settings))
    except KeyboardInterrupt:
        pass
    except (OSError, EmbeddingError, MigrationError, SettingsError) as error:  # the environment: one line
        sys.exit(f"cograph: {error}")
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as error:  # a wrong DSN, role or database
        sys.exit(f"cograph: the database refused: {error} (check COGRAPH_DATABASE__DSN)")
    except subprocess.CalledProcessError as error:  # the embedded PostgreSQL's initdb or pg_ctl
        message = _embedded_failure(settings, error)
        if message is None:
            raise
        sys.exit(f"cograph: {message}")


if __name__ == "__main__":
    main()
