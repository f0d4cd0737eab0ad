"""What the browser tests share: the principals, the running `cograph up`, Chromium, axe and screenshots.

The tests drive Debian's chromium (`make system-packages` installs it) through Playwright's async API, on the
suite's session event loop: the sync API marks its own loop as running between calls, which breaks
every async test that runs after it in the same session.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page

from cograph_settings import ApiToken

REPO_ROOT = Path(__file__).resolve().parents[3]
# CI keeps what is here; .gitignore keeps it out of the repository.
ARTIFACTS = REPO_ROOT / ".artifacts" / "ui"

# The principals the browser signs in as: an administrator, an owner and a second user.
UI_TOKENS = [
    ApiToken(token="ui-admin-token", sub="admin", roles=["admin"]),
    ApiToken(token="ui-alice-token", sub="alice", groups=["research"]),
    ApiToken(token="ui-bob-token", sub="bob", groups=["support"]),
]

# Debian's chromium package puts the browser in /usr/lib/chromium; /usr/bin/chromium is a launcher
# script that adds desktop flags (extensions, GPU rasterization) a test has no use for.
DEBIAN_CHROMIUM = Path("/usr/lib/chromium/chromium")

# What fails a page: the impacts axe-core ranks above "minor" and "moderate".
BLOCKING_IMPACTS = ("serious", "critical")

_AXE = Axe()

# The page_as fixture: `await page_as("alice")` opens a page signed in as alice.
SignIn = Callable[[str], Awaitable[Page]]


def chromium_executable() -> str:
    """Debian's chromium, or a chromium on PATH; fails (never skips) when there is none."""
    if DEBIAN_CHROMIUM.is_file() and os.access(DEBIAN_CHROMIUM, os.X_OK):
        return str(DEBIAN_CHROMIUM)
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(
            f"no chromium: neither {DEBIAN_CHROMIUM} nor chromium on PATH. "
            "Run make test, which installs chromium (its `browser` target: "
            "apt-get install --no-install-recommends chromium).",
            pytrace=False,
        )
    return found


def _describe(violation: Mapping[str, Any]) -> list[str]:
    lines = [f"- {violation['id']} ({violation['impact']}): {violation['help']} <{violation['helpUrl']}>"]
    for node in violation["nodes"]:
        # A target is a list of selectors, one per frame or shadow root on the way to the element.
        target = " >> ".join(
            " ".join(str(part) for part in selector) if isinstance(selector, list) else str(selector)
            for selector in node["target"]
        )
        html = " ".join(str(node.get("html", "")).split())
        lines.append(f"    {target}   {html[:160]}")
    return lines


async def check_accessibility(page: Page, context: str | None = None) -> None:
    """Run axe-core on the page as it is now (or on the elements the selector `context` matches);
    raise AssertionError listing every serious or critical violation: rule, impact, help, targets."""
    results = await _AXE.run(page, context=context)
    violations = [v for v in results.response["violations"] if v.get("impact") in BLOCKING_IMPACTS]
    if violations:
        lines = [f"{len(violations)} serious or critical accessibility violation(s) on {page.url}:"]
        for violation in violations:
            lines.extend(_describe(violation))
        raise AssertionError("\n".join(lines))


async def screenshot(page: Page, name: str) -> Path:
    """Save a full-page PNG of the page as .artifacts/ui/<name>.png; answers its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name.removesuffix(".png")).strip("-.") or "page"
    path = ARTIFACTS / f"{stem}.png"
    await page.screenshot(path=path, full_page=True)
    return path
