"""The one settings object. Each field documents itself; the README table is generated from it.

A field named `batch_size` in the section `embedding` is set by the environment
variable `COGRAPH_EMBEDDING__BATCH_SIZE`.
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from typing import Annotated, Literal

import msgspec
from msgspec import Meta


def _require_finite(section: msgspec.Struct, name: str) -> None:
    """Every number of a section is finite: inf passes gt=0 and ge=0, and then a deadline fails
    every call at once, a timeout or an interval never ends, a weight poisons every fusion."""
    for field in section.__struct_fields__:
        value = getattr(section, field)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"COGRAPH_{name}__{field.upper()} must be a finite number")


# The longest deadline or timeout taken: gRPC fails a call at once when its deadline is past
# what it can represent (about 1e10 s), and a longer wait is a mistake anyway.
DAY_SECONDS = 86400.0

_KB = {"kB": 1, "MB": 2**10, "GB": 2**20}
_MIN_SHARED_BUFFERS_KB = 128


class DatabaseSettings(msgspec.Struct, frozen=True, kw_only=True):
    dsn: Annotated[
        str, Meta(description="PostgreSQL DSN (15+ with pgvector). Empty: start the embedded server.")
    ] = ""
    data_dir: Annotated[str, Meta(description="Data directory of the embedded PostgreSQL.")] = (
        ".cograph/postgres"
    )
    embedded_shared_buffers: Annotated[
        str,
        Meta(
            # \A and \Z: `$` also matches before a final newline.
            pattern=r"\A[1-9][0-9]*(kB|MB|GB)\Z",
            description=(
                "shared_buffers of the embedded PostgreSQL (e.g. 512MB, 2GB; at least 128kB): its cache."
            ),
        ),
    ] = "1GB"
    pool_min_size: Annotated[int, Meta(ge=0, description="Connections each service keeps open.")] = 1
    pool_max_size: Annotated[int, Meta(gt=0, description="Most connections one service opens.")] = 10
    command_timeout_seconds: Annotated[
        float, Meta(gt=0, le=DAY_SECONDS, description="Longest a single SQL statement may run.")
    ] = 60.0

    def __post_init__(self) -> None:
        _require_finite(self, "DATABASE")
        if self.dsn:
            parts = urllib.parse.urlsplit(self.dsn)
            if parts.scheme not in ("postgres", "postgresql"):
                raise ValueError("COGRAPH_DATABASE__DSN must be a postgresql:// URL")
            try:
                parts.port  # noqa: B018 - parsing it is the check
            except ValueError:
                raise ValueError("COGRAPH_DATABASE__DSN has a port that is not a number") from None
        size = re.fullmatch(r"([0-9]+)(kB|MB|GB)", self.embedded_shared_buffers)
        if size and int(size.group(1)) * _KB[size.group(2)] < _MIN_SHARED_BUFFERS_KB:  # 16 pages of 8kB
            raise ValueError(
                f"COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS ({self.embedded_shared_buffers}) is below"
                " PostgreSQL's minimum of 128kB"
            )
        if self.pool_min_size > self.pool_max_size:
            raise ValueError(
                f"COGRAPH_DATABASE__POOL_MIN_SIZE ({self.pool_min_size}) is more than"
                f" COGRAPH_DATABASE__POOL_MAX_SIZE ({self.pool_max_size})"
            )


class EmbeddingSettings(msgspec.Struct, frozen=True, kw_only=True):
    provider: Annotated[
        Literal["local", "openai"],
        Meta(
            description=(
                "`local`: in-process sentence-transformers; `openai`: any OpenAI-compatible /v1/embeddings."
            )
        ),
    ] = "local"
    model: Annotated[
        str,
        Meta(
            description=(
                "Model name, stored with every vector; `local` without a model path: all-MiniLM-L6-v2."
            )
        ),
    ] = "all-MiniLM-L6-v2"
    model_path: Annotated[
        str,
        Meta(
            description=(
                "`local`: directory of a sentence-transformers model. Empty: the packaged all-MiniLM-L6-v2."
            )
        ),
    ] = ""
    runtime: Annotated[
        Literal["torch", "onnx", "onnx-int8", "openvino"],
        Meta(
            description=(
                "`local`: what runs the model: OpenVINO, or ONNX Runtime, on an export of it made once"
                " into EXPORT_DIR (`onnx-int8`: int8 weights), or PyTorch."
            )
        ),
    ] = "openvino"
    export_dir: Annotated[
        str,
        Meta(description="`local`, ONNX: directory of the model's exports. Empty: ~/.cache/cograph/onnx."),
    ] = ""
    batch_size: Annotated[int, Meta(gt=0, description="Chunks sent to the provider per request.")] = 256
    base_url: Annotated[str, Meta(description="`openai`: base URL of the API (…/v1).")] = (
        "https://api.openai.com/v1"
    )
    api_key: Annotated[str, Meta(description="`openai`: bearer key; from a Secret in production.")] = ""
    dimensions: Annotated[
        int, Meta(ge=0, description="`openai`: requested dimension; 0 keeps the model's own.")
    ] = 0
    timeout_seconds: Annotated[
        float, Meta(gt=0, le=DAY_SECONDS, description="`openai`: timeout of one request.")
    ] = 30.0

    def __post_init__(self) -> None:
        _require_finite(self, "EMBEDDING")


class GrpcSettings(msgspec.Struct, frozen=True, kw_only=True):
    deadline_seconds: Annotated[
        float, Meta(gt=0, le=DAY_SECONDS, description="Deadline of every gRPC call a service makes.")
    ] = 30.0
    reflection: Annotated[bool, Meta(description="Serve gRPC server reflection.")] = True
    grace_seconds: Annotated[
        float, Meta(ge=0, le=DAY_SECONDS, description="How long in-flight calls may finish on shutdown.")
    ] = 5.0
    # gRPC takes channel options as C ints.
    max_message_bytes: Annotated[
        int, Meta(gt=0, le=2**31 - 1, description="Largest gRPC message sent or received (< 2 GiB).")
    ] = 64 * 2**20

    def __post_init__(self) -> None:
        _require_finite(self, "GRPC")


class ServiceEndpoint(msgspec.Struct, frozen=True, kw_only=True):
    """Where a service listens, and where its clients find it."""

    bind_host: Annotated[str, Meta(description="Interface the service listens on.")] = "127.0.0.1"
    grpc_port: Annotated[int, Meta(ge=0, le=65535, description="gRPC port; 0 picks a free one.")] = 0
    http_port: Annotated[
        int, Meta(ge=0, le=65535, description="Ops HTTP port (/healthz, /readyz, /metrics); 0 picks one.")
    ] = 0
    target: Annotated[str, Meta(description="gRPC address its clients dial.")] = ""


class CollectionsSettings(ServiceEndpoint, frozen=True, kw_only=True):
    grpc_port: Annotated[int, Meta(ge=0, le=65535, description="gRPC port; 0 picks a free one.")] = 50061
    http_port: Annotated[
        int, Meta(ge=0, le=65535, description="Ops HTTP port (/healthz, /readyz, /metrics); 0 picks one.")
    ] = 8091
    target: Annotated[str, Meta(description="gRPC address its clients dial.")] = "127.0.0.1:50061"
    max_document_bytes: Annotated[int, Meta(gt=0, description="Largest document an upload accepts.")] = (
        5 * 2**20
    )
    max_batch_documents: Annotated[int, Meta(gt=0, description="Most documents in one batch upload.")] = 1000
    worker_concurrency: Annotated[
        int,
        Meta(
            ge=0,
            description="Jobs one worker runs at once; 0: this process runs none (`cograph worker`s do).",
        ),
    ] = 1
    heartbeat_seconds: Annotated[
        float, Meta(gt=0, description="How often a running job proves its worker alive.")
    ] = 10.0
    stale_after_seconds: Annotated[
        float,
        Meta(
            gt=0,
            description="A running job silent this long lost its worker: the sweep requeues it (>= 3 beats).",
        ),
    ] = 120.0
    worker_drain_seconds: Annotated[
        float,
        Meta(ge=0, description="On shutdown, how long running jobs may finish before they are cut off."),
    ] = 10.0
    job_max_attempts: Annotated[
        int,
        Meta(
            ge=1, le=100, description="Runs a job may have: one whose worker is lost is requeued until then."
        ),
    ] = 3
    job_backoff_seconds: Annotated[
        float,
        Meta(
            ge=0,
            le=DAY_SECONDS,
            description="Wait before a job whose worker was lost runs again; doubled each time, at most 1 h.",
        ),
    ] = 10.0

    def __post_init__(self) -> None:
        _require_finite(self, "COLLECTIONS")
        # A live job may miss a beat or two (a busy database, a blip); only a longer silence is death.
        if self.stale_after_seconds < 3 * self.heartbeat_seconds:
            raise ValueError(
                f"COGRAPH_COLLECTIONS__STALE_AFTER_SECONDS ({self.stale_after_seconds:g}) must be at least"
                f" three times COGRAPH_COLLECTIONS__HEARTBEAT_SECONDS ({self.heartbeat_seconds:g}), or the"
                " sweep would requeue jobs that are still running"
            )


class RepoDocsSettings(ServiceEndpoint, frozen=True, kw_only=True):
    grpc_port: Annotated[int, Meta(ge=0, le=65535, description="gRPC port; 0 picks a free one.")] = 50062
    http_port: Annotated[
        int, Meta(ge=0, le=65535, description="Ops HTTP port (/healthz, /readyz, /metrics); 0 picks one.")
    ] = 8092
    target: Annotated[str, Meta(description="gRPC address its clients dial.")] = "127.0.0.1:50062"
    checkout_dir: Annotated[str, Meta(description="Where the service keeps the checkouts it manages.")] = (
        ".cograph/checkouts"
    )
    sync_interval_seconds: Annotated[
        float, Meta(ge=0, description="Scheduled sync of each repository without its own interval; 0: none.")
    ] = 3600.0
    max_file_bytes: Annotated[
        int, Meta(gt=0, description="Larger discovered files are skipped with a reason.")
    ] = 2**20
    git_timeout_seconds: Annotated[float, Meta(gt=0, description="Longest one git command may run.")] = 600.0
    clone_allowed_schemes: Annotated[
        list[Literal["https", "ssh", "http", "git"]],
        Meta(description="Schemes a clone URL may use (JSON list); http and git are unencrypted."),
    ] = msgspec.field(default_factory=lambda: ["https", "ssh"])
    clone_allowed_hosts: Annotated[
        list[str],
        Meta(
            description="Hosts, addresses or CIDRs a clone URL may reach though internal (loopback,"
            ' private...), e.g. `["gitlab.corp", "10.20.0.0/16"]`.'
        ),
    ] = msgspec.field(default_factory=list)
    credentials_file: Annotated[
        str,
        Meta(
            description="TOML file of git credentials (HTTPS tokens, SSH keys with known_hosts) by host"
            " and path prefix; read again when it changes. Empty: none (docs/operations.md)."
        ),
    ] = ""
    webhook_replay_window_seconds: Annotated[
        float,
        Meta(
            gt=0,
            le=DAY_SECONDS,
            description="Push webhooks: a delivery id is acted on once within this window, and a push"
            " the host dates outside it (GitHub) is refused.",
        ),
    ] = 600.0
    webhook_sync_interval_seconds: Annotated[
        float,
        Meta(
            ge=0,
            description="Scheduled sync interval while push webhooks are on (the credentials file has a"
            " [[webhooks]] secret), when longer than SYNC_INTERVAL_SECONDS; 0: unchanged.",
        ),
    ] = 86400.0

    def __post_init__(self) -> None:
        _require_finite(self, "REPODOCS")
        for entry in self.clone_allowed_hosts:
            if not _is_host_or_network(entry):
                raise ValueError(
                    f"COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS: {entry!r} is not a host name, an IP address"
                    " or a CIDR network"
                )


# What COGRAPH_REPODOCS__CLONE_ALLOWED_HOSTS takes besides addresses and networks: a DNS name.
_HOST_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_.])?$", re.IGNORECASE)


def _is_host_or_network(entry: str) -> bool:
    try:
        ipaddress.ip_network(entry.strip().strip("[]"), strict=False)
    except ValueError:
        return _HOST_NAME.fullmatch(entry.strip()) is not None
    return True


class SearchSettings(ServiceEndpoint, frozen=True, kw_only=True):
    grpc_port: Annotated[int, Meta(ge=0, le=65535, description="gRPC port; 0 picks a free one.")] = 50063
    http_port: Annotated[
        int, Meta(ge=0, le=65535, description="Ops HTTP port (/healthz, /readyz, /metrics); 0 picks one.")
    ] = 8093
    target: Annotated[str, Meta(description="gRPC address its clients dial.")] = "127.0.0.1:50063"
    rrf_k: Annotated[
        float,
        Meta(
            gt=0,
            description="Reciprocal rank fusion constant of code search, whose symbol stream has ranks"
            " only; prose is fused by scores (see libs/retrieval fusion.py).",
        ),
    ] = 10.0
    dense_weight: Annotated[
        float, Meta(ge=0, description="Weight of the dense (vector) stream in fusion.")
    ] = 1.0
    text_weight: Annotated[float, Meta(ge=0, description="Weight of the full-text stream in fusion.")] = 1.0
    symbol_weight: Annotated[
        float, Meta(ge=0, description="Weight of the exact symbol stream (code) in fusion.")
    ] = 1.0
    store_deadline_seconds: Annotated[
        float, Meta(gt=0, le=DAY_SECONDS, description="Deadline of each store call in a fan-out.")
    ] = 5.0
    embedding_deadline_seconds: Annotated[
        float,
        Meta(
            gt=0,
            le=DAY_SECONDS,
            description="Longest the query's embedding may take; after it, full text only.",
        ),
    ] = 10.0
    max_query_chars: Annotated[int, Meta(gt=0, description="Longest query accepted.")] = 2000
    default_limit: Annotated[
        int, Meta(gt=0, le=500, description="Hits returned when a request names no limit.")
    ] = 10
    max_limit: Annotated[
        int,
        Meta(gt=0, le=500, description="Most hits one request may ask for (code hits' related docs: 500)."),
    ] = 100

    def __post_init__(self) -> None:
        # Refused here, at start-up: the stores would refuse every request instead.
        _require_finite(self, "SEARCH")
        if self.dense_weight == 0 and self.text_weight == 0:
            raise ValueError(
                "COGRAPH_SEARCH__DENSE_WEIGHT and COGRAPH_SEARCH__TEXT_WEIGHT are both 0:"
                " documents and collections would have no stream to search with"
            )
        if self.default_limit > self.max_limit:
            raise ValueError(
                f"COGRAPH_SEARCH__DEFAULT_LIMIT ({self.default_limit}) is above"
                f" COGRAPH_SEARCH__MAX_LIMIT ({self.max_limit})"
            )


class GatewaySettings(msgspec.Struct, frozen=True, kw_only=True):
    bind_host: Annotated[str, Meta(description="Interface the gateway listens on.")] = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535, description="HTTP port of the REST API, MCP and health.")] = (
        8080
    )
    grpc_port: Annotated[
        int, Meta(ge=0, le=65535, description="gRPC port of the gateway's health service; 0 picks one.")
    ] = 50060
    public_url: Annotated[
        str, Meta(description="URL users reach the gateway at; empty: derived from host and port.")
    ] = ""
    max_upload_bytes: Annotated[int, Meta(gt=0, description="Largest request body the gateway accepts.")] = (
        64 * 2**20
    )
    # As long as the default gRPC deadline: a request waiting on a service gets that service's answer.
    drain_seconds: Annotated[
        float,
        Meta(
            ge=0,
            le=DAY_SECONDS,
            description="On shutdown, how long in-flight requests may finish; then those left get a 503.",
        ),
    ] = 30.0

    session_secret: Annotated[
        str,
        Meta(
            description="Key of the web pages' session cookies (any string, 16+ characters); from a "
            "Secret. Empty: a random key per process, so sessions end on restart and need one replica."
        ),
    ] = ""

    def __post_init__(self) -> None:
        _require_finite(self, "GATEWAY")
        if self.session_secret and len(self.session_secret) < 16:
            raise ValueError("COGRAPH_GATEWAY__SESSION_SECRET must be at least 16 characters")


# Unknown fields refused: a misspelt "rolez" silently dropped the token's admin role.
class ApiToken(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    token: str
    sub: str
    groups: list[str] = msgspec.field(default_factory=list)
    roles: list[str] = msgspec.field(default_factory=list)


class AuthSettings(msgspec.Struct, frozen=True, kw_only=True):
    api_tokens: Annotated[
        list[ApiToken],
        Meta(description='Static API tokens, a JSON list of {"token", "sub", "groups", "roles"}.'),
    ] = msgspec.field(default_factory=list)
    jwt_issuer: Annotated[
        str,
        Meta(description="Expected `iss` of bearer JWTs; empty disables JWTs (then set no secret or JWKS)."),
    ] = ""
    jwt_audience: Annotated[str, Meta(description="Expected `aud` of bearer JWTs.")] = ""
    jwt_secret: Annotated[str, Meta(description="HS256 secret for bearer JWTs; needs the issuer.")] = ""
    jwks_url: Annotated[
        str, Meta(description="JWKS file path or URL for RS/ES-signed JWTs; needs the issuer.")
    ] = ""
    admin_role: Annotated[str, Meta(description="The role that makes a caller an administrator.")] = "admin"
    anonymous_read: Annotated[
        bool, Meta(description="Callers without credentials may read public collections and repos.")
    ] = False
    hide_collection_existence: Annotated[
        bool, Meta(description="Unreadable collections answer 404 like missing ones, instead of 403.")
    ] = False

    def __post_init__(self) -> None:
        # A key without an issuer checks no JWT at all (an empty issuer disables them), so a
        # deployment configured with only a key would let nobody sign in, without a word.
        keys = [
            name
            for name, value in (
                ("COGRAPH_AUTH__JWT_SECRET", self.jwt_secret),
                ("COGRAPH_AUTH__JWKS_URL", self.jwks_url),
            )
            if value
        ]
        if keys and not self.jwt_issuer:
            raise ValueError(
                f"{' and '.join(keys)} {'is' if len(keys) == 1 else 'are'} set but COGRAPH_AUTH__JWT_ISSUER"
                " is empty, and without an issuer no JWT is accepted: set COGRAPH_AUTH__JWT_ISSUER to the"
                " `iss` your tokens carry"
            )


class TelemetrySettings(msgspec.Struct, frozen=True, kw_only=True):
    otlp_endpoint: Annotated[
        str, Meta(description="OTLP/gRPC endpoint traces are exported to; empty: none.")
    ] = ""
    service_namespace: Annotated[str, Meta(description="`service.namespace` resource attribute.")] = "cograph"
    log_level: Annotated[
        str, Meta(pattern=r"(?i)\A(DEBUG|INFO|WARNING|ERROR)\Z", description="DEBUG, INFO, WARNING or ERROR.")
    ] = "INFO"
    log_format: Annotated[
        Literal["text", "json"], Meta(description="Log line format; both carry the trace id.")
    ] = "text"


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    database: DatabaseSettings = msgspec.field(default_factory=DatabaseSettings)
    embedding: EmbeddingSettings = msgspec.field(default_factory=EmbeddingSettings)
    grpc: GrpcSettings = msgspec.field(default_factory=GrpcSettings)
    collections: CollectionsSettings = msgspec.field(default_factory=CollectionsSettings)
    repodocs: RepoDocsSettings = msgspec.field(default_factory=RepoDocsSettings)
    search: SearchSettings = msgspec.field(default_factory=SearchSettings)
    gateway: GatewaySettings = msgspec.field(default_factory=GatewaySettings)
    auth: AuthSettings = msgspec.field(default_factory=AuthSettings)
    telemetry: TelemetrySettings = msgspec.field(default_factory=TelemetrySettings)
