"""The web UI in a real browser: Debian's chromium, driven by Playwright, against a real `cograph up`.

One `cograph up` and one browser serve the whole session; each test gets a fresh browser context.
The helpers (check_accessibility, screenshot, chromium_executable) are in e2e.ui.helpers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from e2e.ui.helpers import UI_TOKENS, CographUp, SignIn, chromium_executable, screenshot
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

HERE = Path(__file__).resolve().parent
READY_SECONDS = 180  # the embedded PostgreSQL's first start and the model's load, on a busy machine
STOP_SECONDS = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(log: Path, lines: int = 80) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError as error:
        return f"(no output: {error})"
    return "\n".join(text.splitlines()[-lines:])


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Until /readyz answers 200; fails with the process's output if it exits or the wait runs out."""
    deadline = time.monotonic() + READY_SECONDS
    last = "no answer"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"cograph up exited with {process.returncode} before it was ready; its output:\n{_tail(log)}",
                pytrace=False,
            )
        try:
            answer = httpx.get(f"{url}/readyz", timeout=5)
        except httpx.TransportError as error:
            last = repr(error)
        else:
            if answer.status_code == 200:
                return
            last = f"{answer.status_code} {answer.text[:500]}"
        time.sleep(0.25)
    pytest.fail(
        f"cograph up was not ready after {READY_SECONDS} s (last /readyz: {last}); its output:\n{_tail(log)}",
        pytrace=False,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop_postgres(pgdata: Path) -> bool:
    """Stop an embedded PostgreSQL left running on `pgdata` (fast shutdown, then immediate);
    answers whether one was."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        command = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError, IndexError):
        return False  # no server, or a stale pid file
    if command != "postgres":
        return False
    for signum in (signal.SIGINT, signal.SIGQUIT):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _alive(pid):
            break
    return True


def _stop(process: subprocess.Popen[bytes], data_dir: Path, log: Path) -> None:
    """Ctrl-C, as a person stops it; SIGKILL only if it does not stop. Then the embedded PostgreSQL
    must be gone too: stopped here if it was not, and the teardown fails either way."""
    killed = False
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
            killed = True
    postgres_left = _stop_postgres(data_dir / "postgres")
    problems = []
    if killed:
        problems.append(f"did not stop within {STOP_SECONDS} s of SIGINT, and was killed")
    elif process.returncode != 0:
        problems.append(f"exited with {process.returncode}")
    if postgres_left:
        problems.append("left its embedded PostgreSQL running (stopped now)")
    if problems:
        pytest.fail(f"cograph up {'; '.join(problems)}; its output:\n{_tail(log)}", pytrace=False)


@pytest.fixture(scope="session")
def cograph_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CographUp]:
    """The real `cograph up` on a free port and a fresh data directory, with the UI tokens (admin,
    alice in group research, bob in group support); stopped with Ctrl-C at the end of the session."""
    root = tmp_path_factory.mktemp("cograph-up")
    data_dir = root / "state"
    log = root / "cograph-up.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | {
        "COGRAPH_AUTH__API_TOKENS": msgspec.json.encode(UI_TOKENS).decode(),
    }
    cograph = Path(sys.executable).parent / "cograph"
    with log.open("wb") as output:  # a file, not a pipe: nothing reads it while the tests run
        process = subprocess.Popen(
            [str(cograph), "up", "--port", str(port), "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, url, log)
        yield CographUp(url=url, tokens={t.sub: t.token for t in UI_TOKENS}, data_dir=data_dir, log=log)
    finally:
        _stop(process, data_dir, log)


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

    def __init__(self, browser: Browser, cograph_up: CographUp) -> None:
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
    browser: Browser, cograph_up: CographUp, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    """A page in a fresh browser context, without credentials, relative URLs going to `cograph up`."""
    contexts = _Contexts(browser, cograph_up)
    try:
        yield await contexts.new_page()
    finally:
        await contexts.close(request)


@pytest.fixture
async def page_as(
    browser: Browser, cograph_up: CographUp, request: pytest.FixtureRequest
) -> AsyncIterator[SignIn]:
    """`await page_as("alice")`: a page in a fresh context whose every request carries that
    principal's bearer token (admin, alice or bob)."""
    contexts = _Contexts(browser, cograph_up)
    try:
        yield contexts.new_page
    finally:
        await contexts.close(request)
