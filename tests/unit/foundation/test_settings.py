"""Settings come from COGRAPH_<SECTION>__<KEY>; mistakes fail fast and name the variable."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from cograph_settings import Settings, SettingsError, load_settings, settings_table


def test_defaults_without_environment() -> None:
    settings = load_settings({"PATH": "/usr/bin"})
    assert settings.embedding.batch_size == 256
    assert settings.embedding.provider == "local"
    assert settings.database.dsn == ""


def test_the_client_variables_are_not_settings() -> None:
    """COGRAPH_URL and COGRAPH_TOKEN are for `cograph search` and friends: `cograph up` ignores them."""
    assert load_settings({"COGRAPH_URL": "http://x:1", "COGRAPH_TOKEN": "t"}) == load_settings({})


def test_values_are_converted_to_their_types() -> None:
    settings = load_settings(
        {
            "COGRAPH_EMBEDDING__BATCH_SIZE": "32",
            "COGRAPH_AUTH__ANONYMOUS_READ": "true",
            "COGRAPH_SEARCH__RRF_K": "20.5",
            "COGRAPH_AUTH__API_TOKENS": '[{"token": "t1", "sub": "ci", "roles": ["admin"]}]',
        }
    )
    assert settings.embedding.batch_size == 32
    assert settings.auth.anonymous_read is True
    assert settings.search.rrf_k == 20.5
    assert settings.auth.api_tokens[0].sub == "ci"
    assert settings.auth.api_tokens[0].roles == ["admin"]


def test_values_are_read_without_the_whitespace_around_them() -> None:
    """Secrets are mounted from files, and a file ends with a newline: a DSN, an API key or a
    JWT secret with it would fail in ways that do not point at the newline."""
    settings = load_settings(
        {
            "COGRAPH_DATABASE__DSN": "postgresql://cograph@db:5432/cograph\n",
            "COGRAPH_EMBEDDING__API_KEY": "sk-test\r\n",
            "COGRAPH_AUTH__JWT_SECRET": "  hs256-secret\n",
            "COGRAPH_AUTH__JWT_ISSUER": "https://idp.example.com\n",
            "COGRAPH_EMBEDDING__BATCH_SIZE": "64\n",
            "COGRAPH_AUTH__API_TOKENS": '[{"token": "t1", "sub": "ci"}]\n',
        }
    )
    assert settings.database.dsn == "postgresql://cograph@db:5432/cograph"
    assert settings.embedding.api_key == "sk-test"
    assert settings.auth.jwt_secret == "hs256-secret"
    assert settings.embedding.batch_size == 64
    assert settings.auth.api_tokens[0].token == "t1"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"COGRAPH_EMBEDDING__BATCHSIZE": "1"}, "COGRAPH_EMBEDDING__BATCHSIZE is not a setting"),
        ({"COGRAPH_EMBEDDING__BATCH_SIZE": "many"}, "COGRAPH_EMBEDDING__BATCH_SIZE: Expected `int`"),
        ({"COGRAPH_EMBEDDING__BATCH_SIZE": "0"}, "COGRAPH_EMBEDDING__BATCH_SIZE: Expected `int` >= 1"),
        (
            {"COGRAPH_EMBEDDING__PROVIDER": "cohere"},
            "COGRAPH_EMBEDDING__PROVIDER: Invalid enum value 'cohere'",
        ),
        ({"COGRAPH_AUTH__API_TOKENS": "[{"}, "COGRAPH_AUTH__API_TOKENS must be JSON"),
        ({"COGRAPH_AUTH__API_TOKENS": '[{"token": "t"}]'}, "COGRAPH_AUTH__API_TOKENS"),
        # A misspelt key is not ignored: the token would lose its admin role without a word.
        (
            {"COGRAPH_AUTH__API_TOKENS": '[{"token": "t", "sub": "ci", "rolez": ["admin"]}]'},
            "COGRAPH_AUTH__API_TOKENS: Object contains unknown field `rolez`",
        ),
        (
            {"COGRAPH_TELEMETRY__LOG_LEVEL": "verbose"},
            "COGRAPH_TELEMETRY__LOG_LEVEL: Expected `str` matching",
        ),
        ({"COGRAPH_SEARCH__HTTP_PORT": "70000"}, "COGRAPH_SEARCH__HTTP_PORT: Expected `int` <= 65535"),
        (
            {"COGRAPH_GRPC__DEADLINE_SECONDS": "1e10"},
            "COGRAPH_GRPC__DEADLINE_SECONDS: Expected `float` <= 86400.0",
        ),
        ({"COGRAPH_GATEWAY__GRPC_PORT": "70000"}, "COGRAPH_GATEWAY__GRPC_PORT: Expected `int` <= 65535"),
        (
            {"COGRAPH_DATABASE__POOL_MIN_SIZE": "20"},
            "COGRAPH_DATABASE__POOL_MIN_SIZE (20) is more than COGRAPH_DATABASE__POOL_MAX_SIZE (10)",
        ),
        (
            {"COGRAPH_DATABASE__DSN": "postgresql://u:S3cret@db:notaport/cograph"},
            "COGRAPH_DATABASE__DSN has a port that is not a number",
        ),
        (
            {"COGRAPH_DATABASE__DSN": "mysql://u:S3cret@db/cograph"},
            "COGRAPH_DATABASE__DSN must be a postgresql://",
        ),
        (
            {"COGRAPH_COLLECTIONS__STALE_AFTER_SECONDS": "15"},
            "COGRAPH_COLLECTIONS__STALE_AFTER_SECONDS (15) must be at least three times",
        ),
        # Search numbers every store would refuse on every request: refused at start-up.
        ({"COGRAPH_SEARCH__DENSE_WEIGHT": "inf"}, "COGRAPH_SEARCH__DENSE_WEIGHT must be a finite number"),
        ({"COGRAPH_SEARCH__RRF_K": "inf"}, "COGRAPH_SEARCH__RRF_K must be a finite number"),
        (
            {"COGRAPH_SEARCH__DENSE_WEIGHT": "0", "COGRAPH_SEARCH__TEXT_WEIGHT": "0"},
            "would have no stream to search with",
        ),
        (
            {"COGRAPH_SEARCH__DEFAULT_LIMIT": "500"},
            "COGRAPH_SEARCH__DEFAULT_LIMIT (500) is above COGRAPH_SEARCH__MAX_LIMIT (100)",
        ),
        ({"COGRAPH_SEARCH__MAX_LIMIT": "501"}, "COGRAPH_SEARCH__MAX_LIMIT: Expected `int` <= 500"),
        (
            {"COGRAPH_GRPC__MAX_MESSAGE_BYTES": str(2**31)},
            "COGRAPH_GRPC__MAX_MESSAGE_BYTES: Expected `int` <= 2147483647",
        ),
        (
            {"COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS": "64kB"},
            "COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS (64kB) is below PostgreSQL's minimum of 128kB",
        ),
        # A JWT key without an issuer accepts no JWT: nobody could sign in with one.
        (
            {"COGRAPH_AUTH__JWT_SECRET": "S3cret"},
            "COGRAPH_AUTH__JWT_SECRET is set but COGRAPH_AUTH__JWT_ISSUER is empty",
        ),
        (
            {"COGRAPH_AUTH__JWKS_URL": "https://idp.example.com/jwks.json"},
            "COGRAPH_AUTH__JWKS_URL is set but COGRAPH_AUTH__JWT_ISSUER is empty",
        ),
    ],
)
def test_mistakes_name_the_variable(environ: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(environ)
    assert message in str(raised.value)
    assert "S3cret" not in str(raised.value)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("telemetry", "log_level", "INFO\n"), ("database", "embedded_shared_buffers", "1GB\n")],
)
def test_a_pattern_matches_the_whole_value(section: str, key: str, value: str) -> None:
    """`$` also matches before a final newline: 'INFO\\n' passed the log level's pattern, and
    '1GB\\n' went into postgresql.conf, which PostgreSQL refused with a traceback."""
    with pytest.raises(msgspec.ValidationError, match="Expected `str` matching regex"):
        msgspec.convert({section: {key: value}}, Settings)


BOUNDED = ": Expected `float` <= 86400.0"  # a deadline or timeout of more than a day is a mistake
FINITE = " must be a finite number"


@pytest.mark.parametrize(
    ("variable", "why"),
    [
        ("COGRAPH_DATABASE__COMMAND_TIMEOUT_SECONDS", BOUNDED),
        ("COGRAPH_EMBEDDING__TIMEOUT_SECONDS", BOUNDED),
        ("COGRAPH_GRPC__DEADLINE_SECONDS", BOUNDED),
        ("COGRAPH_GRPC__GRACE_SECONDS", BOUNDED),
        ("COGRAPH_COLLECTIONS__HEARTBEAT_SECONDS", FINITE),
        ("COGRAPH_COLLECTIONS__STALE_AFTER_SECONDS", FINITE),
        ("COGRAPH_COLLECTIONS__WORKER_DRAIN_SECONDS", FINITE),
        ("COGRAPH_REPODOCS__SYNC_INTERVAL_SECONDS", FINITE),
        ("COGRAPH_REPODOCS__GIT_TIMEOUT_SECONDS", FINITE),
        ("COGRAPH_SEARCH__STORE_DEADLINE_SECONDS", BOUNDED),
        ("COGRAPH_SEARCH__EMBEDDING_DEADLINE_SECONDS", BOUNDED),
        ("COGRAPH_GATEWAY__DRAIN_SECONDS", BOUNDED),
    ],
)
@pytest.mark.parametrize("value", ["inf", "Infinity"])
def test_a_duration_must_be_finite(variable: str, why: str, value: str) -> None:
    """inf passed gt=0: a gRPC deadline of inf failed every call at once with DEADLINE_EXCEEDED,
    and a timeout or an interval of inf never ends."""
    with pytest.raises(SettingsError) as raised:
        load_settings({variable: value})
    assert str(raised.value) == variable + why


def test_a_log_level_is_taken_in_any_case() -> None:
    assert load_settings({"COGRAPH_TELEMETRY__LOG_LEVEL": "debug"}).telemetry.log_level == "debug"


def test_readme_configuration_table_is_the_generated_one() -> None:
    """The README documents every setting exactly as the code defines it."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    assert settings_table() in readme
