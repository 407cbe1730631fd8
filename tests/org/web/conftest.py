"""Fixtures of the browser tests: Chromium, and the console served with the fixture server and model of ours.

Launching Chromium takes seconds, so one browser serves the whole package and each test gets fresh
contexts of it (closed at its end). Playwright's objects belong to the event loop that made them:
`anyio_backend` is package-scoped here, so anyio's plugin keeps one loop while the package-scoped
`package_chromium` fixture holds it, and every test of the package runs on that loop. With pytest-xdist
each worker is a session of its own, with a browser of its own.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from playwright.async_api import async_playwright, expect

from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._served import serving
from tests.org._service import Service, service_app, set_up
from tests.org.web._console import WAIT_MS, Chromium, Console

expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="package")
def anyio_backend() -> str:
    """One event loop for the package (not one a test), which the one browser is bound to."""
    return "asyncio"


@pytest.fixture(scope="package")
async def package_chromium() -> AsyncIterator[Chromium]:
    """The package's browser: launched by the first test that wants it, closed when the package is done."""
    async with async_playwright() as playwright:
        chromium = Chromium(playwright)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
async def chromium(package_chromium: Chromium) -> AsyncIterator[Chromium]:
    """The package's browser for one test; every context the test left open on it is closed at its end."""
    try:
        yield package_chromium
    finally:
        await package_chromium.close_contexts()


@pytest.fixture
def database_url(tmp_path: Path, sqlite_template: Path) -> str:
    """Browser tests run on SQLite, migrated: the storage itself is tested on both databases elsewhere."""
    shutil.copyfile(sqlite_template, tmp_path / "org.db")
    return f"sqlite:///{tmp_path / 'org.db'}"


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


@pytest.fixture
async def console(database_url: str, home: Home, chromium: Chromium) -> AsyncIterator[Console]:
    browser = await chromium.browser()
    org = await set_up(database_url)
    app = service_app(database_url, home.data_home, live_seconds=0.2)
    async with serving(app) as origin, httpx2.AsyncClient(base_url=origin, timeout=60) as client:
        api = Service(client, org, database_url, home.data_home, app=app)
        try:
            yield Console(origin, api, app, browser)
        finally:
            await chromium.close_contexts()  # before the service stops: open pages hold its live event streams
