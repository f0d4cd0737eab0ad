"""A failed job retried from the job monitor, once its cause is gone.

A `cograph up` of its own embeds through a remote, OpenAI-compatible endpoint (the packaged model
served over HTTP) that is down when a document arrives: the embed job fails, saying why. The endpoint
comes up; an administrator finds the failed job in /docs/jobs, retries it, and watches the retry
embed every chunk.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from e2e.ui.helpers import UI_TOKENS, check_accessibility, screenshot
from playwright.async_api import Browser, Page

from cograph_embeddings import EmbeddingProvider
from support.cograph_process import RunningCograph, free_port, launch_cograph_up
from support.embedding_endpoint import ModelEndpoint

JOB_SECONDS = 60
PAGE = "# Capacity\n\n" + "\n\n".join(
    f"## Region {n}\n\nRegion {n} runs {n * 3} nodes and keeps a spare for maintenance." for n in range(12)
)


@pytest.fixture
async def remote_model_system(tmp_path: Path) -> AsyncIterator[tuple[RunningCograph, int]]:
    """A `cograph up` whose embedding endpoint (127.0.0.1, the port answered with it) is not up."""
    port = free_port()
    environment = {
        "COGRAPH_EMBEDDING__PROVIDER": "openai",
        "COGRAPH_EMBEDDING__BASE_URL": f"http://127.0.0.1:{port}/v1",
        "COGRAPH_EMBEDDING__DIMENSIONS": "384",
        "COGRAPH_EMBEDDING__TIMEOUT_SECONDS": "10",
    }
    running = await asyncio.to_thread(launch_cograph_up, tmp_path / "remote-model", UI_TOKENS, environment)
    try:
        yield running, port
    finally:
        await asyncio.to_thread(running.stop)


async def _embed_jobs(client: httpx.AsyncClient, collection_id: str) -> list[dict[str, object]]:
    answer = await client.get(f"/api/md-collections/{collection_id}/jobs", params={"kind": "embed"})
    assert answer.status_code == 200, answer.text
    jobs: list[dict[str, object]] = answer.json()["items"]
    return jobs


async def _until(client: httpx.AsyncClient, collection_id: str, status: str, count: int) -> None:
    """Until `count` embed jobs of the collection have `status`."""
    deadline = time.monotonic() + JOB_SECONDS
    while True:
        jobs = await _embed_jobs(client, collection_id)
        if sum(job["status"] == status for job in jobs) >= count:
            return
        assert time.monotonic() < deadline, f"no {count} embed job(s) at {status}: {jobs}"
        await asyncio.sleep(0.5)


async def _signed_in(browser: Browser, running: RunningCograph, who: str) -> Page:
    context = await browser.new_context(base_url=running.url)
    page = await context.new_page()
    await page.goto("/sign-in")
    await page.get_by_label("API token or JWT").fill(running.tokens[who])
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url("**/docs")
    return page


async def test_an_administrator_retries_an_embedding_that_failed(
    browser: Browser, remote_model_system: tuple[RunningCograph, int], embedder: EmbeddingProvider
) -> None:
    running, port = remote_model_system
    async with httpx.AsyncClient(base_url=running.url, headers=running.headers("admin")) as client:
        created = await client.post("/api/md-collections", json={"name": f"Capacity {uuid.uuid4().hex[:6]}"})
        assert created.status_code == 201, created.text
        collection_id = created.json()["id"]
        uploaded = await client.post(
            f"/api/md-collections/{collection_id}/documents",
            json={"source_key": "capacity.md", "content": PAGE},
        )
        assert uploaded.status_code == 201, uploaded.text
        await _until(client, collection_id, "error", 1)
        pending = (await client.get(f"/api/md-collections/{collection_id}/embed-status")).json()
        assert pending["embedded_chunks"] == 0, pending
        assert pending["pending_chunks"] > 0, pending

        admin = await _signed_in(browser, running, "admin")
        await admin.goto("/docs/jobs?status=error&kind=embed")
        failed = admin.locator("tr.job", has=admin.locator(f'a[href="/docs/{collection_id}"]'))
        assert await failed.count() == 1
        assert "unreachable" in await failed.inner_text()  # the reason, in words
        await check_accessibility(admin)
        await screenshot(admin, "docs-jobs-failed")

        endpoint = ModelEndpoint(embedder)
        await endpoint.start(port)
        try:
            await failed.get_by_role("button", name="Retry").click()
            await admin.wait_for_url("**/docs/jobs?status=error&kind=embed")  # back as filtered
            await _until(client, collection_id, "success", 1)
            embedded = (await client.get(f"/api/md-collections/{collection_id}/embed-status")).json()
        finally:
            await endpoint.stop()
        assert embedded["pending_chunks"] == 0, embedded
        assert embedded["embedded_chunks"] == pending["pending_chunks"], embedded

        await admin.goto("/docs/jobs?kind=embed")
        ours = admin.locator("tr.job", has=admin.locator(f'a[href="/docs/{collection_id}"]'))
        states = sorted(await ours.locator("td.state").all_inner_texts())
        assert states == ["error", "success"]  # the failed job stays in the history beside its retry
        (failed_job,) = [job for job in await _embed_jobs(client, collection_id) if job["status"] == "error"]
        retried = ours.filter(has=admin.locator("td.state.success"))
        assert f"retry of {str(failed_job['id'])[:8]}" in await retried.inner_text()
        await check_accessibility(admin)
        await screenshot(admin, "docs-jobs-retried")
        await admin.context.close()
