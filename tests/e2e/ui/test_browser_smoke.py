"""The chain the UI tests stand on: Debian's chromium, driven by Playwright, shows what a real
`cograph up` serves; screenshots land in .artifacts/ui; axe-core's verdict reaches the test."""

from __future__ import annotations

import json

import pytest
from e2e.ui.helpers import SignIn, check_accessibility, screenshot
from playwright.async_api import Page

ACCESSIBLE = """<!doctype html>
<html lang="en">
<head><title>Sign in</title></head>
<body>
  <main>
    <h1>Sign in</h1>
    <form>
      <label for="token">API token</label>
      <input id="token" name="token" type="password">
      <button type="submit">Sign in</button>
    </form>
  </main>
</body>
</html>"""

# An input nothing names, and grey text on white (1.6:1 where 4.5:1 is the least).
INACCESSIBLE = """<!doctype html>
<html lang="en">
<head><title>Search</title></head>
<body>
  <main>
    <h1>Search</h1>
    <p id="faint" style="color: #cccccc; background: #ffffff">Type a question</p>
    <input id="unlabelled" type="text">
  </main>
</body>
</html>"""


async def _shown_json(page: Page) -> dict[str, object]:
    """The JSON body Chromium shows as the page's text."""
    shown = json.loads(await page.inner_text("pre"))
    assert isinstance(shown, dict), shown
    return shown


async def test_chromium_shows_what_cograph_up_serves(page: Page, page_as: SignIn) -> None:
    ready = await page.goto("/readyz")
    assert ready is not None
    assert ready.status == 200
    shown = await _shown_json(page)
    assert shown["status"] == "ready"
    assert shown["service"] == "gateway"
    picture = await screenshot(page, "smoke-readyz")
    assert picture.read_bytes().startswith(b"\x89PNG")

    refused = await page.goto("/api/md-collections")
    assert refused is not None
    assert refused.status == 401
    assert refused.headers["content-type"].startswith("application/problem+json")
    problem = await _shown_json(page)
    assert problem["status"] == 401
    assert problem["title"] == "Unauthorized"
    await screenshot(page, "smoke-md-collections-401")

    alice = await page_as("alice")
    listed = await alice.goto("/api/md-collections")
    assert listed is not None
    assert listed.status == 200, await alice.inner_text("body")


async def test_check_accessibility_passes_a_labelled_form_and_names_what_is_wrong(page: Page) -> None:
    await page.set_content(ACCESSIBLE)
    await check_accessibility(page)

    await page.set_content(INACCESSIBLE)
    with pytest.raises(AssertionError) as caught:
        await check_accessibility(page)
    report = str(caught.value)
    assert "label (critical)" in report, report
    assert "#unlabelled" in report, report
    assert "color-contrast (serious)" in report, report
    assert "#faint" in report, report
