"""The web UI in a real browser: Debian's chromium, driven by Playwright, against a real `cograph up`.

One `cograph up` and one browser serve the whole session; each test gets a fresh browser context.
The helpers (check_accessibility, screenshot, chromium_executable) are in e2e.ui.helpers.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest
from e2e.ui.helpers import UI_TOKENS, SignIn, chromium_executable, screenshot
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from support.cograph_process import RunningCograph, cograph_up_running

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def cograph_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCograph]:
    """The real `cograph up` on a free port and a fresh data directory, with the UI tokens (admin,
    alice in group research, bob in group support); stopped with Ctrl-C at the end of the session."""
    with cograph_up_running(tmp_path_factory.mktemp("cograph-up"), UI_TOKENS) as running:
        yield running


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """Debian's chromium, headless, for the whole session."""
    executable = chromium_executable()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            # Shared memory in /tmp: a container's /dev/shm is often 64 MB, too small for a screenshot.
            args=["--disable-dev-shm-usage"],
        )
        try:
            yield launched
        finally:
            await launched.close()


_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the test, so that its page fixtures can tell it failed."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests run last, in their order: the session's `cograph up` and browser then live
    only while they run, not through the rest of the suite."""
    ui = [item for item in items if item.path.is_relative_to(HERE)]
    if ui:
        items[:] = [item for item in items if not item.path.is_relative_to(HERE)] + ui


class _Contexts:
    """The browser contexts one test opens: a failed test leaves a screenshot of each page."""

    def __init__(self, browser: Browser, cograph_up: RunningCograph) -> None:
        self.browser = browser
        self.cograph_up = cograph_up
        self.opened: list[tuple[str, BrowserContext]] = []

    async def new_page(self, sub: str | None = None) -> Page:
        context = await self.browser.new_context(
            base_url=self.cograph_up.url,
            extra_http_headers=self.cograph_up.headers(sub) if sub is not None else None,
        )
        self.opened.append((sub or "anonymous", context))
        return await context.new_page()

    async def close(self, request: pytest.FixtureRequest) -> None:
        call = request.node.stash.get(_REPORTS, {}).get("call")
        for number, (who, context) in enumerate(self.opened):
            if call is not None and call.failed:
                for index, page in enumerate(context.pages):
                    with contextlib.suppress(Exception):  # a page that crashed has no picture
                        await screenshot(page, f"FAILED-{request.node.name}-{who}-{number}-{index}")
            await context.close()


@pytest.fixture
async def page(
    browser: Browser, cograph_up: RunningCograph, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    """A page in a fresh browser context, without credentials, relative URLs going to `cograph up`."""
    contexts = _Contexts(browser, cograph_up)
    try:
        yield await contexts.new_page()
    finally:
        await contexts.close(request)


@pytest.fixture
async def page_as(
    browser: Browser, cograph_up: RunningCograph, request: pytest.FixtureRequest
) -> AsyncIterator[SignIn]:
    """`await page_as("alice")`: a page in a fresh context whose every request carries that
    principal's bearer token (admin, alice or bob)."""
    contexts = _Contexts(browser, cograph_up)
    try:
        yield contexts.new_page
    finally:
        await contexts.close(request)
