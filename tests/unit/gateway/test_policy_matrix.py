"""The whole policy as a matrix: role x visibility x owner x group grant x existence x every operation.

The expectations are restated from the spec's sentences (`_expected`), independently of `decide`, and
compared for every combination; a few literal rows pin the spec's headline behaviours on top.
"""

from __future__ import annotations

import itertools
import re

import pytest

from cograph_gateway.identity import ANONYMOUS, Principal
from cograph_gateway.policy import (
    CollectionAccess,
    CollectionVisibility,
    Operation,
    Outcome,
    RepositoryAccess,
    RepositoryVisibility,
    Rule,
    decide,
    job_collection_ids,
    readable_collection_ids,
    readable_repository_ids,
)

ROLES = ("anonymous", "member", "admin")
GROUP = "research"


def _principal(role: str, owner: bool, granted: bool) -> Principal:
    if role == "anonymous":
        return ANONYMOUS
    return Principal(
        subject="owner" if owner else "someone",
        groups=frozenset({GROUP} if granted else {"elsewhere"}),
        roles=frozenset({"admin"} if role == "admin" else set()),
        admin=role == "admin",
    )


def _collection(visibility: CollectionVisibility) -> CollectionAccess:
    return CollectionAccess(
        collection_id="c1", visibility=visibility, owner="owner", group_grants=frozenset({GROUP})
    )


def _repository(visibility: RepositoryVisibility) -> RepositoryAccess:
    return RepositoryAccess(
        repository_id="r1",
        host="github.com",
        owner="acme",
        name="api",
        visibility=visibility,
        owner_subject="owner",
        group_grants=frozenset({GROUP}),
    )


def _expected(
    rule: Rule, role: str, public: bool, owner: bool, granted: bool, exists: bool, hide: bool
) -> Outcome:
    """The spec, sentence by sentence."""
    anonymous = role == "anonymous"
    admin = role == "admin"
    readable = public or owner or granted  # public, or owner-or-grant (private == admin_only)
    if rule is Rule.SCOPED:  # lists and searches are scoped, never refused
        return Outcome.ALLOW
    if rule is Rule.SIGNED_DELIVERY:  # a webhook: its signature, checked by repodocs, decides
        return Outcome.ALLOW
    if rule is Rule.SIGNED_IN:
        return Outcome.UNAUTHENTICATED if anonymous else Outcome.ALLOW
    if rule is Rule.ADMIN:
        return Outcome.UNAUTHENTICATED if anonymous else (Outcome.ALLOW if admin else Outcome.FORBIDDEN)
    if rule in (Rule.READ_REPOSITORY, Rule.WRITE_REPOSITORY):
        if rule is Rule.WRITE_REPOSITORY and anonymous:
            return Outcome.UNAUTHENTICATED
        if not exists or (not readable and not (rule is Rule.WRITE_REPOSITORY and (owner or admin))):
            return Outcome.NOT_FOUND  # repositories: unreadable and missing are the same 404
        if rule is Rule.READ_REPOSITORY or owner or admin:
            return Outcome.ALLOW
        return Outcome.FORBIDDEN
    # Collections.
    if anonymous and rule is not Rule.READ_COLLECTION:
        return Outcome.UNAUTHENTICATED
    if not exists:
        return Outcome.NOT_FOUND
    unreadable = Outcome.NOT_FOUND if hide else (Outcome.UNAUTHENTICATED if anonymous else Outcome.FORBIDDEN)
    if rule is Rule.READ_COLLECTION:
        return Outcome.ALLOW if readable else unreadable
    if rule is Rule.WRITE_COLLECTION:  # owner or admin
        if owner or admin:
            return Outcome.ALLOW
        return Outcome.FORBIDDEN if readable else unreadable
    if rule is Rule.COLLECTION_JOBS:  # jobs of public and owned collections only
        if public or owner:
            return Outcome.ALLOW
        return Outcome.FORBIDDEN if readable else unreadable
    if rule is Rule.RETRY_JOB:  # ownership or the admin role
        if owner or admin:
            return Outcome.ALLOW
        return Outcome.FORBIDDEN if public else Outcome.NOT_FOUND
    raise AssertionError(rule)


def _cases() -> list[tuple[Operation, str, str, bool, bool, bool, bool]]:
    cases = []
    for operation in Operation:
        repo = operation.rule in (Rule.READ_REPOSITORY, Rule.WRITE_REPOSITORY)
        visibilities = [v.value for v in (RepositoryVisibility if repo else CollectionVisibility)]
        for role, visibility, owner, granted, exists, hide in itertools.product(
            ROLES, visibilities, (False, True), (False, True), (False, True), (False, True)
        ):
            if role == "anonymous" and (owner or granted):
                continue  # the anonymous caller owns nothing and is in no group
            cases.append((operation, role, visibility, owner, granted, exists, hide))
    return cases


CASES = _cases()


def test_the_matrix_is_complete() -> None:
    # 47 operations, every role, every visibility, owner, grant, existence and the hide setting.
    assert len({c[0] for c in CASES}) == len(Operation)
    assert len(CASES) > 3000


@pytest.mark.parametrize(
    ("operation", "role", "visibility", "owner", "granted", "exists", "hide"),
    CASES,
    ids=[f"{c[0].name}-{c[1]}-{c[2]}-o{c[3]:d}-g{c[4]:d}-e{c[5]:d}-h{c[6]:d}" for c in CASES],
)
def test_policy_matrix(
    operation: Operation, role: str, visibility: str, owner: bool, granted: bool, exists: bool, hide: bool
) -> None:
    principal = _principal(role, owner, granted)
    resource: CollectionAccess | RepositoryAccess | None
    if operation.rule in (Rule.READ_REPOSITORY, Rule.WRITE_REPOSITORY):
        resource = _repository(RepositoryVisibility(visibility)) if exists else None
    elif operation.rule in (Rule.SCOPED, Rule.SIGNED_IN, Rule.ADMIN):
        resource = None
    else:
        resource = _collection(CollectionVisibility(visibility)) if exists else None
    expected = _expected(operation.rule, role, visibility == "public", owner, granted, exists, hide)
    assert decide(principal, operation, resource, hide_collection_existence=hide) is expected


ALICE = Principal(subject="alice", groups=frozenset({"research"}))
BOB = Principal(subject="bob", groups=frozenset({"support"}))
ADMIN = Principal(subject="admin", roles=frozenset({"admin"}), admin=True)


@pytest.mark.parametrize(
    ("principal", "operation", "visibility", "expected"),
    [
        # private and admin_only behave identically: owner or grant, and not the admin role alone.
        (BOB, Operation.GET_COLLECTION, "private", Outcome.FORBIDDEN),
        (BOB, Operation.GET_COLLECTION, "admin_only", Outcome.FORBIDDEN),
        (ADMIN, Operation.GET_COLLECTION, "admin_only", Outcome.FORBIDDEN),
        (ALICE, Operation.GET_COLLECTION, "admin_only", Outcome.ALLOW),  # granted to research
        (BOB, Operation.GET_COLLECTION, "public", Outcome.ALLOW),
        # Writes: owner or admin, never a grant.
        (ALICE, Operation.UPLOAD_DOCUMENT, "private", Outcome.FORBIDDEN),
        (ADMIN, Operation.DELETE_COLLECTION, "private", Outcome.ALLOW),
        # Jobs: public and owned collections only; a grant does not show them.
        (ALICE, Operation.LIST_COLLECTION_JOBS, "private", Outcome.FORBIDDEN),
        (BOB, Operation.LIST_COLLECTION_JOBS, "public", Outcome.ALLOW),
        (BOB, Operation.RETRY_JOB, "public", Outcome.FORBIDDEN),
        (ADMIN, Operation.RETRY_JOB, "private", Outcome.ALLOW),
        (BOB, Operation.RETRY_JOB, "private", Outcome.NOT_FOUND),
    ],
)
def test_headline_collection_rules(
    principal: Principal, operation: Operation, visibility: str, expected: Outcome
) -> None:
    collection = CollectionAccess(
        collection_id="c",
        visibility=CollectionVisibility(visibility),
        owner="carol",
        group_grants=frozenset({"research"}),
    )
    assert decide(principal, operation, collection) is expected


def test_repositories_never_tell_unreadable_from_missing() -> None:
    private = _repository(RepositoryVisibility.PRIVATE)
    for operation in Operation:
        if operation.rule is Rule.READ_REPOSITORY:
            assert decide(BOB, operation, private) is decide(BOB, operation, None) is Outcome.NOT_FOUND
    assert decide(BOB, Operation.SYNC_REPOSITORY, private) is Outcome.NOT_FOUND
    assert decide(ANONYMOUS, Operation.GET_REPOSITORY, private) is Outcome.NOT_FOUND


def test_hiding_collection_existence_makes_unreadable_look_missing() -> None:
    private = _collection(CollectionVisibility.PRIVATE)
    assert decide(BOB, Operation.GET_COLLECTION, private) is Outcome.FORBIDDEN
    assert decide(BOB, Operation.GET_COLLECTION, private, hide_collection_existence=True) is Outcome.NOT_FOUND
    # What the caller can read but not change stays a 403: its existence is no secret to them.
    granted = Principal(subject="x", groups=frozenset({GROUP}))
    assert decide(granted, Operation.RE_EMBED, private, hide_collection_existence=True) is Outcome.FORBIDDEN


def test_scopes_are_what_the_caller_may_read() -> None:
    collections = [
        CollectionAccess("pub", CollectionVisibility.PUBLIC, "carol", frozenset()),
        CollectionAccess("own", CollectionVisibility.PRIVATE, "bob", frozenset()),
        CollectionAccess("grant", CollectionVisibility.ADMIN_ONLY, "carol", frozenset({"support"})),
        CollectionAccess("none", CollectionVisibility.PRIVATE, "carol", frozenset({"research"})),
    ]
    assert readable_collection_ids(BOB, collections) == ["pub", "own", "grant"]
    assert job_collection_ids(BOB, collections) == ["pub", "own"]
    assert readable_collection_ids(ANONYMOUS, collections) == ["pub"]
    assert job_collection_ids(ANONYMOUS, collections) == []
    assert readable_collection_ids(ADMIN, collections) == ["pub"]
    repositories = [
        _repository(RepositoryVisibility.PUBLIC),
        RepositoryAccess("r2", "h", "o", "n", RepositoryVisibility.PRIVATE, "bob", frozenset()),
        RepositoryAccess("r3", "h", "o", "m", RepositoryVisibility.PRIVATE, "carol", frozenset()),
    ]
    assert readable_repository_ids(BOB, repositories) == ["r1", "r2"]
    assert readable_repository_ids(ANONYMOUS, repositories) == ["r1"]


def _normalise(route: str) -> str:
    """`GET /api/md-collections/{collection_id:str}` and `GET /api/md-collections/{id}` alike."""
    route = route.split(" (", 1)[0]
    route = route.replace("{slug}", "{}/{}/{}")
    return re.sub(r"\{[^}]*\}", "{}", route)


def test_every_rest_route_and_mcp_tool_is_an_operation() -> None:
    from cograph_gateway.app import create_app
    from cograph_gateway.backends import Backends
    from cograph_gateway.mcp import TOOL_DESCRIPTIONS
    from cograph_service import Readiness
    from cograph_settings import Settings

    settings = Settings()
    backends = Backends.connect(settings)
    app = create_app(settings, backends, Readiness("gateway", {}))
    routes = {
        _normalise(f"{method} {route.path}")
        for route in app.routes
        if route.path.startswith("/api/")
        and route.path != "/api/schema"
        and not route.path.startswith("/api/schema/")
        for method in getattr(route, "methods", ())
        if method not in ("HEAD", "OPTIONS")
    }
    faces = ("mcp ", "page ")
    operations = {_normalise(op.value) for op in Operation if not op.value.startswith(faces)}
    assert routes == operations
    pages = {
        _normalise(f"GET {route.path}") for route in app.routes if "GET" in getattr(route, "methods", ())
    }
    page_operations = {
        _normalise(f"GET {op.value.split()[1]}") for op in Operation if op.value.startswith("page ")
    }
    assert page_operations <= pages
    tools = {op.value.split()[1] for op in Operation if op.value.startswith("mcp ")}
    assert tools == set(TOOL_DESCRIPTIONS)
