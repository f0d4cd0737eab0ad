"""The collections console and the document viewer in Chromium, as a person uses them: sign in with a
token, create a collection, upload a folder, read each tab, follow links, find a phrase in the
chunks; another user is refused; a hostile document runs nothing."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from e2e.ui.helpers import check_accessibility, screenshot
from playwright.async_api import Browser, Dialog, Page

from support.cograph_process import RunningCograph

SignedIn = Callable[[str], Awaitable[Page]]

INDEX = """---
title: Operations handbook
owner: sre
---
# Operations handbook

Start with the [[deploy]] page; if it goes wrong, [roll back](rollback.md).
The [capacity plan](capacity.md) is not written yet.

| service | on call |
|---------|---------|
| api     | alice   |

```bash
make deploy
```
"""
DEPLOY = "# Deploy\n\nShip the build to the canary, then to everyone.\n"
ROLLBACK = "# Rollback\n\n## Steps\n\nFlip the blue-green switch back to the previous colour.\n"
HOSTILE = """# Hostile

<script>alert("script")</script>
<img src="x" onerror="alert('img')">
<svg onload="alert('svg')"><circle r="4"></circle></svg>
[click me](javascript:alert('link'))
<a href="javascript:alert('raw link')" onclick="alert('click')">raw link</a>
"""


@pytest.fixture
async def sign_in(browser: Browser, cograph_up: RunningCograph) -> AsyncIterator[SignedIn]:
    """`await sign_in("alice")`: a fresh browser signed in through the sign-in form."""
    contexts = []

    async def signed_in(who: str) -> Page:
        context = await browser.new_context(base_url=cograph_up.url)
        contexts.append(context)
        page = await context.new_page()
        await page.goto("/docs")
        assert page.url.endswith("/sign-in?next=/docs"), page.url
        await check_accessibility(page)
        await screenshot(page, "sign-in")
        await page.get_by_label("API token or JWT").fill(cograph_up.tokens[who])
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url("**/docs")
        return page

    yield signed_in
    for context in contexts:
        await context.close()


async def _create_collection(page: Page, name: str, visibility: str = "private") -> str:
    await page.goto("/docs")
    await page.get_by_label("Name", exact=True).fill(name)
    await page.get_by_label("Visibility").select_option(visibility)
    await page.get_by_role("button", name="Create").click()
    await page.wait_for_url("**/docs/*")
    return page.url.rsplit("/", 1)[1]


async def _upload(page: Page, files: list[Path]) -> dict[str, str]:
    """Upload the files (none: those already chosen, by a drop) and answer each one's result."""
    if files:
        await page.get_by_label("Markdown files").set_input_files(files)
    await page.get_by_role("button", name="Upload").click()
    await page.get_by_role("heading", name="Upload results").wait_for()
    rows = page.locator("table.results tbody tr")
    return {
        (await row.locator("td").nth(0).inner_text()): (await row.locator("td").nth(1).inner_text())
        for row in await rows.all()
    }


async def _open_document(page: Page, collection_id: str, source_key: str) -> None:
    await page.goto(f"/docs/{collection_id}")
    await page.get_by_role("link", name=source_key, exact=True).click()
    await page.wait_for_url(f"**/docs/{collection_id}/documents/*")


async def _until_resolved(page: Page, link_text: str, seconds: float = 60) -> str:
    """Link resolution is a job: reload the preview until the link points at a document."""
    deadline = time.monotonic() + seconds
    while True:
        href = await page.get_by_role("link", name=link_text).get_attribute("href") or ""
        if "/documents/" in href or time.monotonic() > deadline:
            return href
        await asyncio.sleep(0.5)
        await page.reload()


async def test_an_owner_uploads_a_folder_and_reads_every_tab(sign_in: SignedIn, tmp_path: Path) -> None:
    alice = await sign_in("alice")
    header = await alice.locator("header .who").inner_text()
    assert "Signed in as alice" in header
    assert "research" in header
    await check_accessibility(alice)
    await screenshot(alice, "docs-collections")

    collection_id = await _create_collection(alice, f"Handbook {uuid.uuid4().hex[:6]}")
    assert "No documents yet" in await alice.inner_text("main")
    await check_accessibility(alice)

    folder = tmp_path / "handbook"
    folder.mkdir()
    for name, text in {"index.md": INDEX, "deploy.md": DEPLOY, "rollback.md": ROLLBACK}.items():
        (folder / name).write_text(text)
    files = sorted(folder.iterdir())
    states = await _upload(alice, files)
    assert states == {"deploy.md": "created", "index.md": "created", "rollback.md": "created"}
    await check_accessibility(alice)
    await screenshot(alice, "docs-collection-uploaded")

    await _open_document(alice, collection_id, "index.md")
    assert await alice.get_by_role("heading", level=1, name="Operations handbook").count() == 1  # one h1
    assert await alice.locator("article.prose h1#operations-handbook").count() == 1
    deploy_href = await _until_resolved(alice, "deploy")
    assert deploy_href.startswith(f"/docs/{collection_id}/documents/"), deploy_href
    rollback_href = await alice.get_by_role("link", name="roll back").get_attribute("href") or ""
    assert rollback_href.startswith(f"/docs/{collection_id}/documents/"), rollback_href
    unresolved = alice.get_by_role("link", name="capacity plan")
    assert await unresolved.get_attribute("class") == "unresolved"
    await check_accessibility(alice)
    await screenshot(alice, "docs-viewer-preview")

    await alice.get_by_role("link", name="deploy", exact=True).click()  # the wiki link
    await alice.get_by_role("heading", level=1, name="Deploy").first.wait_for()
    assert "Ship the build to the canary" in await alice.inner_text("article.prose")
    await alice.go_back()
    await alice.get_by_role("link", name="roll back").click()  # the relative link
    await alice.wait_for_url(f"**{rollback_href}")
    assert "blue-green switch" in await alice.inner_text("article.prose")

    await _open_document(alice, collection_id, "index.md")
    await alice.get_by_role("link", name="Raw").click()
    assert "1" in await alice.locator("#L1 .number").inner_text()
    assert "title: Operations handbook" in await alice.locator("#L2").inner_text()
    await check_accessibility(alice)
    await screenshot(alice, "docs-viewer-raw")

    await alice.get_by_role("link", name="Metadata").click()
    await alice.get_by_role("heading", name="Frontmatter").wait_for()  # the tab's panel, swapped in
    metadata = await alice.inner_text("main")
    for fact in ('"owner": "sre"', "#operations-handbook", "bash", "service | on call", "rollback.md"):
        assert fact in metadata, fact
    assert await alice.locator("main span.unresolved").count() == 1  # capacity.md
    await check_accessibility(alice)
    await screenshot(alice, "docs-viewer-metadata")

    await _open_document(alice, collection_id, "rollback.md")
    await alice.get_by_role("link", name="Chunks").click()
    await alice.get_by_label("Find the chunk that carries a phrase").fill("blue-green switch")
    await alice.get_by_role("button", name="Find").click()
    found = await alice.get_by_role("status").inner_text()
    assert found == "“blue-green switch” is carried by chunk 0."
    assert await alice.locator("article.chunk.carries").count() == 1
    # One chunk for so short a page, under the sections' common heading path, with its size and model.
    facts = await alice.locator("article.chunk .facts").first.inner_text()
    lines = len(ROLLBACK.splitlines())
    assert facts.startswith(f"Rollback · lines 1–{lines} · {len(ROLLBACK.strip())} characters · ")
    await check_accessibility(alice)
    await screenshot(alice, "docs-viewer-chunks")

    await alice.goto(f"/docs/{collection_id}")
    again = await _upload(alice, files)
    assert again == {"deploy.md": "unchanged", "index.md": "unchanged", "rollback.md": "unchanged"}


async def test_another_user_is_refused_a_private_collection(sign_in: SignedIn) -> None:
    alice = await sign_in("alice")
    collection_id = await _create_collection(alice, f"Private {uuid.uuid4().hex[:6]}", "private")
    bob = await sign_in("bob")
    answer = await bob.goto(f"/docs/{collection_id}")
    assert answer is not None
    assert answer.status == 403
    shown = await bob.inner_text("main")
    assert f"you may not read collection {collection_id}" in shown
    assert "Private" not in await bob.title()
    missing = await bob.goto(f"/docs/{uuid.uuid4()}")
    assert missing is not None
    assert missing.status == 404
    await check_accessibility(bob)
    await screenshot(bob, "docs-refused")


async def test_a_hostile_document_runs_nothing(sign_in: SignedIn, tmp_path: Path) -> None:
    alice = await sign_in("alice")
    dialogs: list[str] = []
    errors: list[str] = []

    async def dismissed(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        await dialog.dismiss()

    alice.on("dialog", dismissed)
    alice.on("pageerror", lambda error: errors.append(str(error)))
    collection_id = await _create_collection(alice, f"Hostile {uuid.uuid4().hex[:6]}")
    (tmp_path / "hostile.md").write_text(HOSTILE)
    assert await _upload(alice, [tmp_path / "hostile.md"]) == {"hostile.md": "created"}
    await _open_document(alice, collection_id, "hostile.md")
    prose = alice.locator("article.prose")
    assert "raw link" in await prose.inner_text()
    for link in await prose.locator("a").all():
        await link.click(modifiers=["Alt"], no_wait_after=True)  # a click, without leaving the page
    assert await prose.locator("script, svg, [onerror], [onload], [onclick]").count() == 0
    hrefs = [await a.get_attribute("href") for a in await prose.locator("a").all()]
    assert not any(href and href.lower().startswith("javascript:") for href in hrefs), hrefs
    await asyncio.sleep(0.5)
    assert dialogs == []
    assert errors == []
    await screenshot(alice, "docs-viewer-hostile")


async def test_the_job_monitor_is_for_administrators(sign_in: SignedIn, tmp_path: Path) -> None:
    admin = await sign_in("admin")
    collection_id = await _create_collection(admin, f"Watched {uuid.uuid4().hex[:6]}", "public")
    (tmp_path / "watched.md").write_text("# Watched\n\nA page whose embedding the monitor shows.\n")
    assert await _upload(admin, [tmp_path / "watched.md"]) == {"watched.md": "created"}

    await admin.get_by_role("link", name="Jobs").click()
    await admin.wait_for_url("**/docs/jobs")
    await admin.get_by_label("Kind").select_option("embed")
    await admin.get_by_role("button", name="Filter").click()
    ours = admin.locator("tr.job", has=admin.locator(f'a[href="/docs/{collection_id}"]'))
    deadline = time.monotonic() + 60
    while await ours.locator("td.state.success").count() == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        await admin.reload()  # the page also refreshes itself while a job is active
    assert await ours.count() == 1
    assert await ours.locator("td.state").inner_text() == "success"
    assert "admin" in await ours.inner_text()
    await check_accessibility(admin)
    await screenshot(admin, "docs-jobs")

    await ours.get_by_role("button", name="Retry").click()
    await admin.wait_for_url("**/docs/jobs?*kind=embed")  # back to the monitor as filtered
    assert await ours.count() == 2  # the retry is a new job of the same collection

    bob = await sign_in("bob")
    assert await bob.get_by_role("link", name="Jobs").count() == 0
    refused = await bob.goto("/docs/jobs")
    assert refused is not None
    assert refused.status == 403
    assert "only an administrator may use page /docs/jobs" in await bob.inner_text("main")


async def test_an_owner_grants_a_group_and_deletes_a_document(sign_in: SignedIn, tmp_path: Path) -> None:
    alice = await sign_in("alice")
    collection_id = await _create_collection(alice, f"Shared {uuid.uuid4().hex[:6]}", "private")
    (tmp_path / "keep.md").write_text("# Keep\n\nStays.\n")
    (tmp_path / "drop.md").write_text("# Drop\n\nGoes.\n")
    assert await _upload(alice, [tmp_path / "keep.md", tmp_path / "drop.md"]) == {
        "keep.md": "created",
        "drop.md": "created",
    }
    bob = await sign_in("bob")
    refused = await bob.goto(f"/docs/{collection_id}")
    assert refused is not None
    assert refused.status == 403

    await alice.goto(f"/docs/{collection_id}")
    await alice.get_by_label("Grant read access to a group").fill("support")  # bob's group
    await alice.get_by_role("button", name="Grant", exact=True).click()
    await alice.wait_for_url(f"**/docs/{collection_id}#access")
    assert "support" in await alice.locator("ul.grants").inner_text()
    await check_accessibility(alice)
    await screenshot(alice, "docs-collection-granted")
    granted = await bob.goto(f"/docs/{collection_id}")
    assert granted is not None
    assert granted.status == 200
    assert await bob.get_by_label("Grant read access to a group").count() == 0  # reading is not owning

    await alice.get_by_role("button", name="Withdraw the grant to support").click()
    await alice.wait_for_url(f"**/docs/{collection_id}#access")
    withdrawn = await bob.goto(f"/docs/{collection_id}")
    assert withdrawn is not None
    assert withdrawn.status == 403

    await _open_document(alice, collection_id, "drop.md")
    await alice.get_by_role("link", name="Delete this document").click()
    assert "This cannot be undone" in await alice.inner_text("main")
    await check_accessibility(alice)
    await screenshot(alice, "docs-delete-confirm")
    await alice.get_by_role("button", name="Delete the document").click()
    await alice.wait_for_url(f"**/docs/{collection_id}")
    documents = await alice.get_by_role("table", name=re.compile("^Documents of")).inner_text()
    assert "keep.md" in documents
    assert "drop.md" not in documents


async def test_files_dropped_on_the_upload_form_keep_their_folder_paths(sign_in: SignedIn) -> None:
    alice = await sign_in("alice")
    collection_id = await _create_collection(alice, f"Dropped {uuid.uuid4().hex[:6]}")
    zone = alice.get_by_text("Drop markdown files or a whole folder here")
    assert await zone.is_visible()  # shown where JavaScript runs
    await alice.evaluate(
        """() => {
            const dropped = new DataTransfer();
            dropped.items.add(new File(["# Alpha\\n\\nFirst."], "notes/alpha.md", {type: "text/markdown"}));
            dropped.items.add(new File(["# Beta\\n\\nSecond."], "notes/beta.md", {type: "text/markdown"}));
            dropped.items.add(new File(["not markdown"], "notes/image.png", {type: "image/png"}));
            const zone = document.querySelector(".drop-zone");
            const drop = {dataTransfer: dropped, bubbles: true, cancelable: true};
            zone.dispatchEvent(new DragEvent("drop", drop));
        }"""
    )
    status = alice.get_by_role("status").filter(has_text="ready to upload")
    assert await status.inner_text() == "2 markdown files ready to upload"
    assert await _upload(alice, []) == {"notes/alpha.md": "created", "notes/beta.md": "created"}
    assert alice.url.endswith(f"/docs/{collection_id}")  # the page's main was swapped in place


async def test_a_folder_chosen_with_the_folder_picker_keeps_its_paths(
    sign_in: SignedIn, tmp_path: Path
) -> None:
    """Without a drop: the folder picker sends every file of the folder, subfolders too, each
    named by its path inside the chosen folder; a file that is not text fails, saying why."""
    alice = await sign_in("alice")
    await _create_collection(alice, f"Picked {uuid.uuid4().hex[:6]}")
    guide = tmp_path / "guide"
    (guide / "ops").mkdir(parents=True)
    (guide / "intro.md").write_text("# Intro\n\nRead [the runbook](ops/run.md) first.\n")
    (guide / "ops" / "run.md").write_text("# Runbook\n\nRestart the service.\n")
    (guide / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    await alice.get_by_label("Or a whole folder").set_input_files(guide)
    states = await _upload(alice, [])
    assert states["guide/intro.md"] == "created"
    assert states["guide/ops/run.md"] == "created"
    assert states["guide/logo.png"] == "failed: the file is not UTF-8 text"
