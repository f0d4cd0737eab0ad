"""What an upload accepts: a batch within its bounds, and each document a valid key with UTF-8
text under the size limit. Each refusal has its own reason; none affects the other documents."""

from __future__ import annotations

import enum
import uuid

import msgspec

from cograph_collections.markdown.links import validate_source_key
from cograph_errors import InvalidArgument, shown

# Control bytes that never occur in text: a file holding them is binary.
_BINARY_BYTES = b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"


class State(enum.StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"


class Reason(enum.StrEnum):
    INVALID_SOURCE_KEY = "invalid_source_key"
    NOT_UTF8 = "not_utf8"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    DUPLICATE_IN_BATCH = "duplicate_in_batch"


class Failure(msgspec.Struct, frozen=True):
    reason: Reason
    message: str


class Outcome(msgspec.Struct, frozen=True):
    """Exactly one of state and failure is set."""

    source_key: str
    document_id: uuid.UUID | None = None
    state: State | None = None
    failure: Failure | None = None
    warnings: tuple[str, ...] = ()  # the parser's, for a created or replaced document


class Upload(msgspec.Struct, frozen=True):
    source_key: str
    content: bytes


def check_batch(size: int, max_documents: int) -> None:
    if not size:
        raise InvalidArgument("a batch needs at least one document")
    if size > max_documents:
        raise InvalidArgument(f"a batch holds at most {max_documents} documents; this one has {size}")


def _looks_binary(content: bytes) -> bool:
    """Whether the content holds a NUL anywhere (PostgreSQL text cannot store one) or another
    control byte in its first 64 KiB. bytes.translate deletes those in one C pass: a set test
    per byte cost half of an unchanged re-upload."""
    head = content[:65536]
    return len(head.translate(None, _BINARY_BYTES)) != len(head) or b"\x00" in content


def decode(upload: Upload, max_bytes: int) -> str | Failure:
    """The upload's text, or why it is refused."""
    problem = validate_source_key(upload.source_key)
    if problem is not None:
        return Failure(Reason.INVALID_SOURCE_KEY, problem)
    if len(upload.content) > max_bytes:
        return Failure(
            Reason.TOO_LARGE,
            f"{upload.source_key}: {len(upload.content):,} bytes is over the limit of {max_bytes:,} bytes",
        )
    if _looks_binary(upload.content):
        return Failure(Reason.BINARY, f"{upload.source_key}: this is a binary file, not markdown text")
    try:
        return upload.content.decode("utf-8")
    except UnicodeDecodeError as error:
        return Failure(
            Reason.NOT_UTF8,
            f"{upload.source_key}: not valid UTF-8 (at byte {error.start});"
            " save the file as UTF-8 and upload again",
        )


def all_refused(outcomes: list[Outcome]) -> str | None:
    """The error of an upload that stored nothing (each document refused), else None: the job
    list must not show a success for a batch that left the collection as it was."""
    refused = [(outcome.source_key, outcome.failure) for outcome in outcomes if outcome.failure is not None]
    if not refused or len(refused) < len(outcomes):
        return None
    reason = _refusal(*refused[0])
    if len(refused) == 1:
        return f"the document was refused: {reason}"
    return f"all {len(refused)} documents were refused; the first: {reason}"


def _refusal(key: str, failure: Failure) -> str:
    """The refusal as the job list shows it. Other refusals name their (valid) key already; a
    refused key is shown escaped and cut short, since it may hold a NUL, which PostgreSQL's text
    cannot store, or be megabytes long."""
    if failure.reason is not Reason.INVALID_SOURCE_KEY:
        return failure.message
    return f"{shown(key)}: {failure.message}"
