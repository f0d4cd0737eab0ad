"""Who may do what. Pure: no I/O, every decision from the principal and the resource's access facts."""

from __future__ import annotations

import enum

import msgspec

from cograph_gateway.identity import Principal


class CollectionVisibility(enum.StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    ADMIN_ONLY = "admin_only"


class CollectionAccess(msgspec.Struct, frozen=True):
    collection_id: str
    visibility: CollectionVisibility
    owner: str
    group_grants: frozenset[str]


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


def can_create(principal: Principal) -> bool:
    """Anyone signed in may create; an anonymous reader may not."""
    return bool(principal.subject)


def _owns(principal: Principal, owner: str) -> bool:
    return bool(principal.subject) and principal.subject == owner
