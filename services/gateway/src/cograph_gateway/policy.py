"""Who may do what. Pure: no I/O, every decision from the principal and the resource's access facts.

Every REST endpoint and MCP tool is an `Operation` with one `Rule`; `decide` answers what the caller
gets for it (allowed, or the status of the refusal). The matrix test runs every operation against
every kind of caller and resource, so a new endpoint cannot ship without a decision.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import msgspec

from cograph_gateway.identity import Principal


class CollectionVisibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    ADMIN_ONLY = "admin_only"


class RepositoryVisibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"


class CollectionAccess(msgspec.Struct, frozen=True):
    collection_id: str
    visibility: CollectionVisibility
    owner: str
    group_grants: frozenset[str]


class RepositoryAccess(msgspec.Struct, frozen=True):
    repository_id: str
    host: str
    owner: str
    name: str
    visibility: RepositoryVisibility
    owner_subject: str
    group_grants: frozenset[str]

    @property
    def slug(self) -> str:
        return f"{self.host}/{self.owner}/{self.name}"


class Rule(enum.Enum):
    """What an operation asks of the caller."""

    # Lists and searches: anyone who can read the deployment, scoped to what they may read.
    SCOPED = "scoped"
    # Anyone signed in (not the anonymous reader).
    SIGNED_IN = "signed_in"
    # Administrators only (registering a local checkout reads the server's file system).
    ADMIN = "admin"
    READ_COLLECTION = "read_collection"
    WRITE_COLLECTION = "write_collection"
    # A collection's jobs: public or owned collections only, as the spec scopes the job list.
    COLLECTION_JOBS = "collection_jobs"
    # Retrying costs money: the owner of the job's collection or an administrator.
    RETRY_JOB = "retry_job"
    READ_REPOSITORY = "read_repository"
    WRITE_REPOSITORY = "write_repository"
    # A git host's webhook delivery: no principal; repodocs checks its signature or secret token.
    SIGNED_DELIVERY = "signed_delivery"


class Operation(enum.Enum):
    """Every REST endpoint and MCP tool, with the rule that guards it."""

    rule: Rule

    def __new__(cls, value: str, rule: Rule) -> Operation:
        member = object.__new__(cls)
        member._value_ = value
        member.rule = rule
        return member

    # REST: collections.
    LIST_COLLECTIONS = ("GET /api/md-collections", Rule.SCOPED)
    CREATE_COLLECTION = ("POST /api/md-collections", Rule.SIGNED_IN)
    GET_COLLECTION = ("GET /api/md-collections/{id}", Rule.READ_COLLECTION)
    UPDATE_COLLECTION = ("PATCH /api/md-collections/{id}", Rule.WRITE_COLLECTION)
    DELETE_COLLECTION = ("DELETE /api/md-collections/{id}", Rule.WRITE_COLLECTION)
    ADD_COLLECTION_GRANT = ("POST /api/md-collections/{id}/grants", Rule.WRITE_COLLECTION)
    REMOVE_COLLECTION_GRANT = ("DELETE /api/md-collections/{id}/grants/{group}", Rule.WRITE_COLLECTION)
    UPLOAD_DOCUMENT = ("POST /api/md-collections/{id}/documents", Rule.WRITE_COLLECTION)
    UPLOAD_DOCUMENTS = ("POST /api/md-collections/{id}/documents/batch", Rule.WRITE_COLLECTION)
    LIST_DOCUMENTS = ("GET /api/md-collections/{id}/documents", Rule.READ_COLLECTION)
    GET_DOCUMENT = ("GET /api/md-collections/{id}/documents/{document_id}", Rule.READ_COLLECTION)
    DELETE_DOCUMENT = ("DELETE /api/md-collections/{id}/documents/{document_id}", Rule.WRITE_COLLECTION)
    LIST_CHUNKS = ("GET /api/md-collections/{id}/documents/{document_id}/chunks", Rule.READ_COLLECTION)
    GET_CHUNK = ("GET /api/md-collections/{id}/chunks/{chunk_id}", Rule.READ_COLLECTION)
    SEARCH_COLLECTION = ("POST /api/md-collections/{id}/search", Rule.READ_COLLECTION)
    EMBED_STATUS = ("GET /api/md-collections/{id}/embed-status", Rule.READ_COLLECTION)
    RE_EMBED = ("POST /api/md-collections/{id}/re-embed", Rule.WRITE_COLLECTION)
    LIST_COLLECTION_JOBS = ("GET /api/md-collections/{id}/jobs", Rule.COLLECTION_JOBS)
    LIST_JOBS = ("GET /api/md-collections/jobs", Rule.SIGNED_IN)
    RETRY_JOB = ("POST /api/md-collections/jobs/{job_id}/retry", Rule.RETRY_JOB)
    # REST: repositories.
    REGISTER_REPOSITORY = ("POST /api/repos", Rule.SIGNED_IN)
    REGISTER_LOCAL_REPOSITORY = ("POST /api/repos (checkout_path or local clone_url)", Rule.ADMIN)
    LIST_REPOSITORIES = ("GET /api/repos", Rule.SCOPED)
    GET_REPOSITORY = ("GET /api/repos/{slug}", Rule.READ_REPOSITORY)
    UPDATE_REPOSITORY = ("PATCH /api/repos/{slug}", Rule.WRITE_REPOSITORY)
    DELETE_REPOSITORY = ("DELETE /api/repos/{slug}", Rule.WRITE_REPOSITORY)
    ADD_REPOSITORY_GRANT = ("POST /api/repos/{slug}/grants", Rule.WRITE_REPOSITORY)
    REMOVE_REPOSITORY_GRANT = ("DELETE /api/repos/{slug}/grants/{group}", Rule.WRITE_REPOSITORY)
    SYNC_REPOSITORY = ("POST /api/repos/{slug}/sync", Rule.WRITE_REPOSITORY)
    LIST_SYNCS = ("GET /api/repos/{slug}/syncs", Rule.READ_REPOSITORY)
    LIST_REPO_DOCUMENTS = ("GET /api/repos/{slug}/documents", Rule.READ_REPOSITORY)
    GET_REPO_DOCUMENT = ("GET /api/repos/{slug}/documents/{document_id}", Rule.READ_REPOSITORY)
    GET_DOCS_TREE = ("GET /api/repos/{slug}/docs", Rule.READ_REPOSITORY)
    GET_DOCS_PAGE = ("GET /api/repos/{slug}/docs/{page_slug}", Rule.READ_REPOSITORY)
    SEARCH_CODE = ("POST /api/repos/{slug}/code/search", Rule.READ_REPOSITORY)
    GET_CODE_DOCS = ("GET /api/repos/{slug}/code/{node_id}/docs", Rule.READ_REPOSITORY)
    READ_FILE = ("GET /api/repos/{slug}/files/{path}", Rule.READ_REPOSITORY)
    RECEIVE_WEBHOOK = ("POST /api/webhooks/{provider}", Rule.SIGNED_DELIVERY)
    # REST: search across stores.
    ROUTE = ("POST /api/search/route", Rule.SCOPED)
    # Web pages that are not a REST endpoint's twin: the spec gates the job monitor's tab to
    # administrators, though the list behind it is any signed-in caller's (LIST_JOBS).
    JOB_MONITOR = ("page /docs/jobs", Rule.ADMIN)
    # MCP tools.
    MCP_RETRIEVE = ("mcp cograph_retrieve", Rule.READ_REPOSITORY)
    MCP_ROUTE = ("mcp cograph_route", Rule.SCOPED)
    MCP_COLLECTIONS = ("mcp cograph_collections", Rule.SCOPED)
    MCP_COLLECTION_SEARCH = ("mcp cograph_collection_search", Rule.READ_COLLECTION)
    MCP_COLLECTION_DOCUMENT = ("mcp cograph_collection_document", Rule.READ_COLLECTION)
    MCP_READ_COLLECTION_CHUNK = ("mcp cograph_read_chunk (collection)", Rule.READ_COLLECTION)
    MCP_READ_REPOSITORY_CHUNK = ("mcp cograph_read_chunk (repository)", Rule.READ_REPOSITORY)
    MCP_READ_FILE_RANGE = ("mcp cograph_read_file_range", Rule.READ_REPOSITORY)


class Outcome(enum.IntEnum):
    """What the caller gets: allowed, or the HTTP status of the refusal."""

    ALLOW = 200
    UNAUTHENTICATED = 401
    FORBIDDEN = 403
    NOT_FOUND = 404


Resource = CollectionAccess | RepositoryAccess


def decide(
    principal: Principal,
    operation: Operation,
    resource: Resource | None = None,
    *,
    hide_collection_existence: bool = False,
) -> Outcome:
    """The outcome of `operation` on `resource` (None: it does not exist) for `principal`.

    Order matters and is the same for every rule: an anonymous caller asking for what needs a
    sign-in learns nothing else (401 first), then a missing resource is 404, then the rule.
    """
    rule = operation.rule
    anonymous = not principal.subject
    if rule in (Rule.SCOPED, Rule.SIGNED_DELIVERY):
        return Outcome.ALLOW
    if rule is Rule.SIGNED_IN:
        return Outcome.UNAUTHENTICATED if anonymous else Outcome.ALLOW
    if rule is Rule.ADMIN:
        if anonymous:
            return Outcome.UNAUTHENTICATED
        return Outcome.ALLOW if principal.admin else Outcome.FORBIDDEN
    if rule in (Rule.READ_REPOSITORY, Rule.WRITE_REPOSITORY):
        assert resource is None or isinstance(resource, RepositoryAccess)
        return _decide_repository(principal, rule, resource)
    assert resource is None or isinstance(resource, CollectionAccess)
    return _decide_collection(principal, rule, resource, hide_collection_existence)


def _decide_collection(
    principal: Principal, rule: Rule, collection: CollectionAccess | None, hide_existence: bool
) -> Outcome:
    anonymous = not principal.subject
    if anonymous and rule is not Rule.READ_COLLECTION:
        return Outcome.UNAUTHENTICATED
    if collection is None:
        return Outcome.NOT_FOUND
    readable = can_read_collection(principal, collection)
    # Refusing what the caller may not even read: 403 by default (the spec's behaviour, which
    # clients rely on), 404 when the deployment hides existence; 401 for the anonymous reader,
    # who could read it after signing in.
    if hide_existence:
        unreadable = Outcome.NOT_FOUND
    else:
        unreadable = Outcome.UNAUTHENTICATED if anonymous else Outcome.FORBIDDEN
    if rule is Rule.READ_COLLECTION:
        return Outcome.ALLOW if readable else unreadable
    if rule is Rule.WRITE_COLLECTION:
        if can_write_collection(principal, collection):
            return Outcome.ALLOW
        return Outcome.FORBIDDEN if readable else unreadable
    if rule is Rule.COLLECTION_JOBS:
        if can_list_collection_jobs(principal, collection):
            return Outcome.ALLOW
        return Outcome.FORBIDDEN if readable else unreadable
    if rule is Rule.RETRY_JOB:
        if can_retry_job(principal, collection):
            return Outcome.ALLOW
        # A job outside the caller's job list is not revealed; one they can list is refused.
        return Outcome.FORBIDDEN if can_list_collection_jobs(principal, collection) else Outcome.NOT_FOUND
    raise AssertionError(f"unhandled rule {rule}")


def _decide_repository(principal: Principal, rule: Rule, repository: RepositoryAccess | None) -> Outcome:
    anonymous = not principal.subject
    if anonymous and rule is Rule.WRITE_REPOSITORY:
        return Outcome.UNAUTHENTICATED
    # Unreadable and missing are the same 404: a repository's name is itself confidential.
    if repository is None:
        return Outcome.NOT_FOUND
    readable = can_read_repository(principal, repository)
    if rule is Rule.READ_REPOSITORY:
        return Outcome.ALLOW if readable else Outcome.NOT_FOUND
    if can_write_repository(principal, repository):
        return Outcome.ALLOW
    return Outcome.FORBIDDEN if readable else Outcome.NOT_FOUND


def can_read_collection(principal: Principal, collection: CollectionAccess) -> bool:
    """public: anyone who can read the deployment; private and admin_only: owner or a group grant.

    The two restricted values behave identically, as the spec documents; an
    administrator is not a reader of them by role alone.
    """
    if collection.visibility is CollectionVisibility.PUBLIC:
        return True
    return _owns(principal, collection.owner) or bool(principal.groups & collection.group_grants)


def can_write_collection(principal: Principal, collection: CollectionAccess) -> bool:
    """Update, delete, upload, delete a document, re-embed, manage grants: the owner or an admin."""
    return principal.admin or _owns(principal, collection.owner)


def can_list_collection_jobs(principal: Principal, collection: CollectionAccess) -> bool:
    """Any signed-in caller sees the jobs of public and owned collections (not granted ones)."""
    if not principal.subject:
        return False
    return collection.visibility is CollectionVisibility.PUBLIC or _owns(principal, collection.owner)


def can_retry_job(principal: Principal, collection: CollectionAccess) -> bool:
    return principal.admin or _owns(principal, collection.owner)


def can_read_repository(principal: Principal, repository: RepositoryAccess) -> bool:
    """public, or the owner, or a group grant; like collections, no read by the admin role alone."""
    if repository.visibility is RepositoryVisibility.PUBLIC:
        return True
    return _owns(principal, repository.owner_subject) or bool(principal.groups & repository.group_grants)


def can_write_repository(principal: Principal, repository: RepositoryAccess) -> bool:
    """Change, delete, sync and grants: the owner or an admin."""
    return principal.admin or _owns(principal, repository.owner_subject)


def readable_collection_ids(principal: Principal, collections: Iterable[CollectionAccess]) -> list[str]:
    """The scope of lists and searches: what the caller may read, resolved before any fan-out."""
    return [c.collection_id for c in collections if can_read_collection(principal, c)]


def job_collection_ids(principal: Principal, collections: Iterable[CollectionAccess]) -> list[str]:
    return [c.collection_id for c in collections if can_list_collection_jobs(principal, c)]


def readable_repository_ids(principal: Principal, repositories: Iterable[RepositoryAccess]) -> list[str]:
    return [r.repository_id for r in repositories if can_read_repository(principal, r)]


def _owns(principal: Principal, owner: str) -> bool:
    return bool(principal.subject) and principal.subject == owner
