"""Cross-document links are bound within a collection by the resolve_links job, never across."""

from __future__ import annotations

import threading
import uuid

import pytest

from cograph.collections.v1 import collections_service_pb2 as pb
from cograph_collections.app import MIGRATIONS
from cograph_collections.application import documents as documents_application
from cograph_collections.markdown import ParsedDocument, parse_markdown
from cograph_collections.markdown.links import link_target_key
from cograph_collections.stores.documents import SQL as DOCUMENT_SQL
from cograph_db import apply_migrations, connect
from support.collections import Running, insert_stored_documents, insert_stored_link
from support.migrations import before


async def links_of(service: Running, collection_id: str, document_id: str) -> dict[str, str]:
    """href -> target document id ('' while unresolved)."""
    document = (
        await service.stub.GetDocument(
            pb.GetDocumentRequest(collection_id=collection_id, document_id=document_id)
        )
    ).document
    return {link.href: link.target_document_id for link in document.metadata.links}


async def test_links_resolve_late_unresolve_on_delete_and_stay_inside_the_collection(
    service: Running, collection: pb.Collection
) -> None:
    index = (
        await service.upload(
            collection.id,
            (
                "docs/index.md",
                b"# Index\n\n[Install](guides/install.md#steps), [FAQ](faq), [[Glossary|terms]], "
                b"[[guides/install#Steps]], [site](https://example.com/x.md), [top](#index), "
                b"[gone](missing.md), [[#Index]], [API](reference/api.md), [log](changelog.md)\n",
            ),
        )
    ).results[0]
    await service.wait_for_jobs(collection.id)
    unresolved = await links_of(service, collection.id, index.document_id)
    assert unresolved["#index"] == index.document_id  # an anchor link points at its own document
    assert unresolved["#Index"] == index.document_id  # so does a wiki link to a heading of its own
    assert {href for href, target in unresolved.items() if not target} == {
        "guides/install.md#steps",
        "faq",
        "Glossary",
        "guides/install#Steps",
        "https://example.com/x.md",
        "missing.md",
        "reference/api.md",
        "changelog.md",
    }

    # The targets arrive later; their links resolve. A same-named document in another
    # collection is never a target.
    other = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name="Other", visibility=pb.VISIBILITY_PUBLIC, owner="bob")
    )
    await service.upload(other.collection.id, ("docs/missing.md", b"# Missing\n\nElsewhere."))
    uploaded = await service.upload(
        collection.id,
        ("docs/guides/install.md", b"# Install\n\n## Steps\n\nRun it."),
        ("docs/faq.md", b"# FAQ\n\nQuestions."),
        ("reference/Glossary.md", b"# Glossary\n\nTerms."),
        ("reference/api.md", b"# API\n"),
        ("changelog.md", b"# Root changelog\n"),
        ("docs/changelog.md", b"# Docs changelog\n"),
    )
    install_id, faq_id, glossary_id, api_id, _, docs_changelog_id = (r.document_id for r in uploaded.results)
    await service.wait_for_jobs(collection.id)
    resolved = await links_of(service, collection.id, index.document_id)
    assert resolved["guides/install.md#steps"] == install_id
    assert resolved["faq"] == faq_id  # an extensionless path finds its .md
    assert resolved["Glossary"] == glossary_id  # wiki links match by note name, any folder
    assert resolved["guides/install#Steps"] == install_id
    assert resolved["reference/api.md"] == api_id  # no docs/reference/api.md: the source key as written
    assert resolved["changelog.md"] == docs_changelog_id  # both exist: the path from the linking document
    assert resolved["https://example.com/x.md"] == ""
    assert resolved["missing.md"] == ""  # only a document of the other collection has that path

    await service.stub.DeleteDocument(
        pb.DeleteDocumentRequest(collection_id=collection.id, document_id=install_id, requested_by="alice")
    )
    await service.wait_for_jobs(collection.id)
    after_delete = await links_of(service, collection.id, index.document_id)
    assert after_delete["guides/install.md#steps"] == ""
    assert after_delete["faq"] == faq_id


async def test_a_link_keeps_its_anchor_apart_from_its_target(
    service: Running, collection: pb.Collection
) -> None:
    result = (
        await service.upload(
            collection.id, ("a.md", b"# A\n\nSee [b](sub/b.md#part-two) and [[B#Part two]].\n")
        )
    ).results[0]
    document = (
        await service.stub.GetDocument(
            pb.GetDocumentRequest(collection_id=collection.id, document_id=result.document_id)
        )
    ).document
    assert [(link.href, link.anchor, link.link_type) for link in document.metadata.links] == [
        ("sub/b.md#part-two", "part-two", pb.LINK_TYPE_MARKDOWN),
        ("B#Part two", "Part two", pb.LINK_TYPE_WIKI),
    ]


async def test_rechunking_for_a_new_chunker_keeps_links_resolved(
    service: Running, collection: pb.Collection, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-embed rebuilds the chunks of documents chunked with other parameters (parsing them
    off the event loop, which heartbeats and requests share); their links stay bound."""
    parsed_on: list[bool] = []

    def parse_and_note_the_thread(text: str) -> ParsedDocument:
        parsed_on.append(threading.current_thread() is threading.main_thread())
        return parse_markdown(text)

    monkeypatch.setattr(documents_application, "parse_markdown", parse_and_note_the_thread)
    uploaded = await service.upload(
        collection.id, ("index.md", b"# Index\n\n[FAQ](faq.md)\n"), ("faq.md", b"# FAQ\n")
    )
    index = uploaded.results[0]
    await service.wait_for_jobs(collection.id)
    faq_id = (await links_of(service, collection.id, index.document_id))["faq.md"]
    assert faq_id
    connection = await connect(database)
    try:  # as if an older release had chunked them with max_chars 1000
        await connection.execute(
            "UPDATE collections.md_chunks SET chunker_max_chars = 1000 WHERE collection_id = $1",
            uuid.UUID(collection.id),
        )
    finally:
        await connection.close()
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert status.outdated_chunker_chunks == 2
    await service.stub.ReEmbedCollection(
        pb.ReEmbedCollectionRequest(collection_id=collection.id, requested_by="alice")
    )
    jobs = await service.wait_for_jobs(collection.id)
    assert all(job.status == pb.JOB_STATUS_SUCCESS for job in jobs)
    status = await service.stub.GetEmbedStatus(pb.GetEmbedStatusRequest(collection_id=collection.id))
    assert status.outdated_chunker_chunks == 0
    assert (await links_of(service, collection.id, index.document_id))["faq.md"] == faq_id
    assert parsed_on == [False, False]  # both documents, neither on the event loop's thread


async def test_a_link_ends_at_the_same_target_whatever_order_documents_arrive_in(
    service: Running, collection: pb.Collection
) -> None:
    """A relative href means the path beside its document, a wiki link the shortest note path:
    a link first bound by a fallback (the root path, a deeper note) moves when its real target
    arrives, so the result is what uploading everything at once gives."""
    linking = ("dir/a.md", b"# A\n\n[x](x.md) [[note]] [g](guide) [[Other]]\n")
    # Bound first to a worse candidate: the root path, a deeper note, a longer extension.
    fallbacks = [
        ("x.md", b"# Root x\n"),
        ("deep/er/note.md", b"# Deep note\n"),
        ("dir/guide.md", b"# Guide with an extension\n"),
        ("other.mdx", b"# Other, mdx\n"),
    ]
    targets = [
        ("dir/x.md", b"# Dir x\n"),
        ("note.md", b"# Root note\n"),
        ("dir/guide", b"# Guide as linked\n"),
        ("Other.md", b"# Other, shorter path\n"),
    ]

    async def bound(collection_id: str, uploads: list[list[tuple[str, bytes]]]) -> dict[str, str]:
        ids: dict[str, str] = {}
        for batch in uploads:
            for result in (await service.upload(collection_id, *batch)).results:
                ids[result.source_key] = result.document_id
            await service.wait_for_jobs(collection_id)
        keys = {document_id: key for key, document_id in ids.items()}
        return {
            href: keys[target]
            for href, target in (await links_of(service, collection_id, ids["dir/a.md"])).items()
        }

    late = await bound(collection.id, [[linking, *fallbacks], targets])
    other = await service.stub.CreateCollection(
        pb.CreateCollectionRequest(name="Other order", visibility=pb.VISIBILITY_PRIVATE, owner="alice")
    )
    early = await bound(other.collection.id, [[*targets, *fallbacks], [linking]])
    assert late == early == {"x.md": "dir/x.md", "note": "note.md", "guide": "dir/guide", "Other": "Other.md"}


async def test_documents_stored_before_the_note_name_index_resolve_wiki_links(database: str) -> None:
    """Migration 0008 derives each stored document's note name from its wiki key, so wiki links
    to documents written by an earlier release resolve (and old bindings are kept)."""
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 8))
        await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(connection, "index.md", "guides/Setup.md")
        await connection.execute(
            "INSERT INTO md_links"
            " (document_id, collection_id, ordinal, text, href, line, link_type, target_key)"
            " VALUES ($1, $2, 0, 'Setup', 'Setup', 3, 'wiki', 'setup')",
            documents["index.md"],
            collection_id,
        )
        await apply_migrations(connection, MIGRATIONS)
        await connection.execute(DOCUMENT_SQL.resolve_links, collection_id)
        target = await connection.fetchval("SELECT target_document_id FROM md_links")
    finally:
        await connection.close()
    assert target == documents["guides/Setup.md"]


async def test_a_folder_link_finds_the_folder_s_index_page_never_a_file_named_like_it(
    service: Running, collection: pb.Collection
) -> None:
    """`api/`, `./` and `..` name folders: they are bound to the folder's index.md (mkdocs,
    Docusaurus) or README.md (GitHub), and were bound to `api.md` or `sub.md` instead. A
    folder with both takes its index page, whatever the database's collation."""
    uploaded = await service.upload(
        collection.id,
        ("docs/sub/a.md", b"# A\n\n[API](api/) [here](./#top) [up](..) [guide](/guide/) [both](both/)\n"),
        ("docs/sub/api.md", b"# A page named like the folder\n"),
        ("docs/sub/api/index.md", b"# API\n"),
        ("docs/sub.md", b"# A page beside the folder\n"),
        ("docs/sub/README.md", b"# Sub\n"),
        ("docs.md", b"# Another page beside one\n"),
        ("guide.md", b"# And another\n"),
        ("docs/sub/both/README.md", b"# Read me\n"),
        ("docs/sub/both/index.mdx", b"# Index\n"),
    )
    await service.wait_for_jobs(collection.id)
    ids = {result.source_key: result.document_id for result in uploaded.results}
    assert await links_of(service, collection.id, ids["docs/sub/a.md"]) == {
        "api/": ids["docs/sub/api/index.md"],
        "./#top": ids["docs/sub/README.md"],
        "..": "",  # docs/ has no index page: unresolved, not docs.md
        "/guide/": "",
        "both/": ids["docs/sub/both/index.mdx"],
    }


async def test_a_link_to_the_root_folder_finds_the_root_s_index_or_readme(
    service: Running, collection: pb.Collection
) -> None:
    """`../` one folder down, `/` and `.` at the root name the collection's root folder: they
    are bound to its README.md, as GitHub does, and were left without a target at all. With
    no index page there they stay unresolved."""
    uploaded = await service.upload(
        collection.id,
        ("README.md", b"# Home\n\n[this folder](.) [top](/#home)\n"),
        ("docs/guide.md", b"# Guide\n\n[Home](../) [Up](..) [Root](/) [Docs](./) [Out](../../)\n"),
        ("docs/index.md", b"# Docs\n"),
    )
    await service.wait_for_jobs(collection.id)
    ids = {result.source_key: result.document_id for result in uploaded.results}
    assert await links_of(service, collection.id, ids["docs/guide.md"]) == {
        "../": ids["README.md"],
        "..": ids["README.md"],
        "/": ids["README.md"],
        "./": ids["docs/index.md"],  # its own folder: docs/, never the root as a fallback
        "../../": "",  # above the root: outside the collection
    }
    assert await links_of(service, collection.id, ids["README.md"]) == {
        ".": ids["README.md"],
        "/#home": ids["README.md"],
    }
    await service.stub.DeleteDocument(
        pb.DeleteDocumentRequest(collection_id=collection.id, document_id=ids["README.md"])
    )
    await service.wait_for_jobs(collection.id)
    assert await links_of(service, collection.id, ids["docs/guide.md"]) == {
        "../": "",
        "..": "",
        "/": "",
        "./": ids["docs/index.md"],
        "../../": "",
    }


async def test_folder_links_stored_by_an_earlier_release_are_bound_again(database: str) -> None:
    """Migrations 0009 and 0010 give stored folder links their '/' back (however the href wrote
    the folder), unbind them from the file named like the folder and queue the job that binds
    them to the folder's index page: a folder without one leaves its links unresolved."""
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 9))
        await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(
            connection, "a.md", "api.md", "api/index.md", "notes.md", "sub.md"
        )
        for ordinal, (href, link_type, target_key, bound_by_earlier_release) in enumerate(
            [
                ("api/", "relative", "api", "api.md"),
                ("api%2f#top", "relative", "api", "api.md"),
                ("sub/", "relative", "sub", "sub.md"),
                ("sub\\", "relative", "sub", "sub.md"),
                ("sub/%2E", "relative", "sub", "sub.md"),
                ("notes?x#y", "relative", "notes", "notes.md"),
                ("api.md", "markdown", "api.md", "api.md"),
            ]
        ):
            await insert_stored_link(
                connection,
                documents["a.md"],
                collection_id,
                ordinal,
                href,
                link_type,
                target_key,
                documents[bound_by_earlier_release],
            )
        await apply_migrations(connection, MIGRATIONS)
        queued = await connection.fetch("SELECT collection_id, kind, status FROM md_jobs")
        await connection.execute(DOCUMENT_SQL.resolve_links, collection_id)  # as that job does
        bound = dict(await connection.fetch("SELECT href, target_document_id FROM md_links"))
        migrated = await connection.fetch("SELECT href, link_type, target_key FROM md_links")
    finally:
        await connection.close()
    assert [tuple(job) for job in queued] == [(collection_id, "resolve_links", "queued")]
    # The migrated keys are those a fresh upload of a.md would store.
    assert {row["href"]: row["target_key"] for row in migrated} == {
        row["href"]: link_target_key(row["href"], row["link_type"], "a.md")[0] for row in migrated
    }
    assert bound == {
        "api/": documents["api/index.md"],
        "api%2f#top": documents["api/index.md"],
        "sub/": None,  # sub/ has no index page
        "sub\\": None,
        "sub/%2E": None,
        "notes?x#y": documents["notes.md"],
        "api.md": documents["api.md"],
    }


async def test_folder_links_bound_wrongly_after_migration_0009_are_unbound_by_0010(database: str) -> None:
    """0009 gave folder links their '/' but kept the binding an earlier release gave them: a
    folder without an index page kept the file named like it. 0010 unbinds exactly those."""
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 10))
        await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(connection, "a.md", "sub.md", "api/index.md")
        for ordinal, (href, target_key, bound) in enumerate(
            [("sub/", "sub/", "sub.md"), ("api/", "api/", "api/index.md")]
        ):
            await insert_stored_link(
                connection,
                documents["a.md"],
                collection_id,
                ordinal,
                href,
                "relative",
                target_key,
                documents[bound],
            )
        assert 10 in await apply_migrations(connection, MIGRATIONS)
        bound_now = dict(await connection.fetch("SELECT href, target_document_id FROM collections.md_links"))
        queued = await connection.fetchval("SELECT count(*) FROM collections.md_jobs WHERE status = 'queued'")
    finally:
        await connection.close()
    assert bound_now == {"sub/": None, "api/": documents["api/index.md"]}
    assert queued == 1


async def test_root_folder_links_stored_by_an_earlier_release_are_bound_by_migration_0012(
    database: str,
) -> None:
    """Earlier releases stored a link to the root folder with no target key, like a link out of
    the collection. 0012 gives exactly those the root's key, the one a fresh upload stores,
    and queues the job that binds them to the root's README."""
    links = {
        "docs/guide.md": ["../", "..#top", "/", "%2E%2E/", "..\\", "../../", "tel:+123", "//cdn.example/"],
        "docs/deep/page.md": ["../..", "../../?x=1"],
        "README.md": [".", "./", "docs/.."],
    }
    connection = await connect(database)
    try:
        await apply_migrations(connection, before(MIGRATIONS, 12))
        await connection.execute("SET search_path = collections")
        collection_id, documents = await insert_stored_documents(connection, *links)
        for source_key, hrefs in links.items():
            for ordinal, href in enumerate(hrefs):
                await insert_stored_link(
                    connection, documents[source_key], collection_id, ordinal, href, "relative", None, None
                )
        assert 12 in await apply_migrations(connection, MIGRATIONS)
        queued = await connection.fetchval("SELECT count(*) FROM md_jobs WHERE status = 'queued'")
        await connection.execute(DOCUMENT_SQL.resolve_links, collection_id)  # as that job does
        migrated = await connection.fetch(
            "SELECT d.source_key, l.href, l.target_key, l.target_document_id"
            " FROM md_links l JOIN md_documents d ON d.id = l.document_id"
        )
    finally:
        await connection.close()
    assert queued == 1
    assert {(row["source_key"], row["href"]): row["target_key"] for row in migrated} == {
        (row["source_key"], row["href"]): link_target_key(row["href"], "relative", row["source_key"])[0]
        for row in migrated
    }
    outside = {"../../", "tel:+123", "//cdn.example/"}
    hrefs = [href for written in links.values() for href in written]
    assert {row["href"]: row["target_document_id"] for row in migrated} == {
        href: None if href in outside else documents["README.md"] for href in hrefs
    }
