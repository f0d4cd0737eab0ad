"""The repository docs reader in Chromium: the page tree, the prose with its table of contents,
previous/next, the file pill to the git host at the synced commit, the code a page mentions opening
its lines, each with the page's mention of it and why it points there; and an unreadable
repository's pages answer exactly as a missing one's."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from e2e.ui.helpers import check_accessibility, screenshot
from integration.repodocs.helpers import ACME_GUIDE, ACME_PACKAGE, GitRepo
from playwright.async_api import Browser, Page

from support.cograph_process import RunningCograph

FILES = {
    "README.md": "# Greeter\n\nCall `greet()` to say hello; it lives in `greeter.core.greet`.\n",
    "docs/guide.md": "# Guide\n\n## Install\n\nRun pip install.\n\n## Use\n\nImport the package.\n",
    "docs/tuning.md": "# Tuning\n\nNothing to tune yet.\n",
    "greeter/__init__.py": "",
    "greeter/core.py": 'def greet(name: str = "world") -> str:\n    return f"hello {name}"\n',
}
WEB_URL = "https://git.example.com/acme/greeter/blob/main"
# A page whose code is linked for three different reasons.
FIELDS = {**ACME_PACKAGE, "docs/guide.md": ACME_GUIDE}


async def _register_and_sync(
    cograph_up: RunningCograph, root: Path, files: dict[str, str], name: str
) -> tuple[str, str]:
    """These files committed in root, registered as a private repository of the administrator's
    and synced; answers its host/owner/name and commit."""
    GitRepo(root).commit("docs", files)
    name = f"{name}-{uuid.uuid4().hex[:6]}"
    body = {
        "host": "git.example.com",
        "owner": "acme",
        "name": name,
        "checkout_path": str(root),
        "visibility": "private",
        "web_url": WEB_URL,
    }
    async with httpx.AsyncClient(base_url=cograph_up.url, headers=cograph_up.headers("admin")) as client:
        registered = await client.post("/api/repos", json=body)
        assert registered.status_code == 201, registered.text
        synced = await client.post(f"/api/repos/git.example.com/acme/{name}/sync?wait=true", timeout=300)
        assert synced.status_code == 200, synced.text
        assert synced.json()["status"] == "success", synced.text
        return f"git.example.com/acme/{name}", synced.json()["commit_sha"]


@pytest.fixture
async def synced(cograph_up: RunningCograph, tmp_path: Path) -> tuple[str, str]:
    """A private repository of the administrator's, synced; answers its name and commit."""
    return await _register_and_sync(cograph_up, tmp_path / "greeter", FILES, "greeter")


async def _signed_in(browser: Browser, cograph_up: RunningCograph, who: str) -> Page:
    context = await browser.new_context(base_url=cograph_up.url)
    page = await context.new_page()
    await page.goto("/sign-in")
    await page.get_by_label("API token or JWT").fill(cograph_up.tokens[who])
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url("**/docs")
    return page


async def test_the_reader_shows_tree_prose_contents_pills_and_code(
    browser: Browser, cograph_up: RunningCograph, synced: tuple[str, str]
) -> None:
    repository, commit = synced
    admin = await _signed_in(browser, cograph_up, "admin")
    await admin.get_by_role("link", name="Repositories").click()
    await admin.get_by_role("link", name=repository).wait_for()
    await check_accessibility(admin)
    await screenshot(admin, "repos-list")
    await admin.get_by_role("link", name=repository).click()
    await admin.wait_for_url(f"**/repos/{repository}/docs/*")  # the first page of the tree
    tree = admin.get_by_role("navigation", name="Pages")
    for title in ("Greeter", "Guide", "Tuning"):
        assert await tree.get_by_role("link", name=title, exact=True).count() == 1, title
    await check_accessibility(admin)

    await tree.get_by_role("link", name="Guide", exact=True).click()
    await admin.wait_for_url("**/docs/guide")
    prose = admin.get_by_role("article")
    assert "Run pip install." in await prose.inner_text()
    contents = admin.get_by_role("complementary", name="On this page")
    install = contents.get_by_role("link", name="Install")
    anchor = (await install.get_attribute("href") or "").removeprefix("#")
    assert anchor
    assert await prose.locator(f'[id="{anchor}"]').inner_text() == "Install"
    pill = await prose.get_by_role("link", name="docs/guide.md").get_attribute("href")
    assert pill == f"https://git.example.com/acme/greeter/blob/{commit}/docs/guide.md"
    await check_accessibility(admin)
    await screenshot(admin, "repos-reader-guide")

    following = admin.locator("a[rel=next]")
    previous = admin.locator("a[rel=prev]")
    assert await following.count() + await previous.count() >= 1
    target = following if await following.count() else previous
    title = (await target.inner_text()).strip("←→ ")
    await target.click()
    await admin.wait_for_function(
        "title => document.querySelector('article h1')?.textContent === title", arg=title
    )

    await admin.goto(f"/repos/{repository}/docs/readme")
    code = admin.get_by_role("complementary", name="On this page").locator("ul.code li")
    assert await code.count() >= 1
    await code.first.get_by_role("link", name="greeter.core.greet").click()
    await admin.wait_for_url("**/files/greeter/core.py?start=1&end=2")
    assert "def greet" in await admin.locator("#L1").inner_text()
    await check_accessibility(admin)
    await screenshot(admin, "repos-file-range")


async def test_each_piece_of_relevant_code_says_how_the_page_mentions_it_and_why(
    browser: Browser, cograph_up: RunningCograph, tmp_path: Path
) -> None:
    repository, _ = await _register_and_sync(cograph_up, tmp_path / "fields", FIELDS, "fields")
    admin = await _signed_in(browser, cograph_up, "admin")
    await admin.goto(f"/repos/{repository}/docs/guide")
    code = admin.get_by_role("complementary", name="On this page").locator("ul.code li")
    # In the order the page first mentions each; in words, not colour: the text a reader sees.
    shown = [" ".join((await entry.inner_text()).split()) for entry in await code.all()]
    assert len(shown) == 3, shown
    expected = [
        ("acme.fields.describe_field", "as describe_field: the only public definition"),
        # `Field` comes first as an imported name, but the explicit reference is the one shown.
        ("acme.fields.Field", "as Field: linked explicitly"),
        ("acme.fields.Field.validate", "as validate: member of the class the heading names"),
    ]
    for text, (name, why) in zip(shown, expected, strict=True):
        assert text.startswith(name + " "), text
        assert why in text, text
    await check_accessibility(admin)
    await screenshot(admin, "repos-reader-mention-reasons")
    await code.nth(1).get_by_role("link", name="acme.fields.Field", exact=True).click()
    await admin.wait_for_url("**/files/acme/fields.py?start=1&end=3")


async def test_an_unreadable_repository_reads_as_a_missing_one(
    browser: Browser, cograph_up: RunningCograph, synced: tuple[str, str]
) -> None:
    repository, _ = synced
    bob = await _signed_in(browser, cograph_up, "bob")
    missing = f"git.example.com/acme/absent-{uuid.uuid4().hex[:6]}"
    shown = {}
    for name in (repository, missing):
        for path in ("docs", "docs/guide"):
            answer = await bob.goto(f"/repos/{name}/{path}")
            assert answer is not None
            assert answer.status == 404
            shown[name, path] = (await bob.inner_text("main")).replace(name, "NAME")
    assert shown[repository, "docs"] == shown[missing, "docs"]
    assert shown[repository, "docs/guide"] == shown[missing, "docs/guide"]
    await check_accessibility(bob)


async def test_search_groups_hits_by_source_and_opens_them(
    browser: Browser, cograph_up: RunningCograph, synced: tuple[str, str]
) -> None:
    repository, _ = synced
    admin = await _signed_in(browser, cograph_up, "admin")
    await admin.get_by_role("link", name="Search").click()
    assert "Ask anything" in await admin.inner_text("main")
    await admin.get_by_label("Question or words").fill("greet")
    await admin.get_by_role("button", name="Search").click()
    code = admin.get_by_role("region", name="Code")
    # Other tests' repositories hold the same code: this one's hit names this repository.
    ours = code.locator("li", has_text=f"{repository}:greeter/core.py").get_by_role(
        "link", name="greeter.core.greet"
    )
    await ours.wait_for()
    docs = admin.get_by_role("region", name="Repository docs")
    assert f"{repository}:readme" in await docs.inner_text()
    assert (await docs.locator("mark").first.inner_text()).lower() == "greet"  # the query's word, marked
    assert await admin.get_by_role("region", name="Collections").count() == 1
    await check_accessibility(admin)
    await screenshot(admin, "search")
    await ours.click()
    await admin.wait_for_url(f"**/repos/{repository}/files/greeter/core.py?start=1&end=2")
    assert "def greet" in await admin.locator("#L1").inner_text()
