"""Fixtures of the browser tests: Chromium, and the console served with the fixture server and model of ours."""

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
from tests.org.web._console import CHROMIUM, CHROMIUM_FLAGS, WAIT_MS, Console

expect.set_options(timeout=WAIT_MS)


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
async def console(database_url: str, home: Home) -> AsyncIterator[Console]:
    org = await set_up(database_url)
    app = service_app(database_url, home.data_home, live_seconds=0.2)
    async with serving(app) as origin, async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            async with httpx2.AsyncClient(base_url=origin, timeout=60) as client:
                api = Service(client, org, database_url, home.data_home, app=app)
                yield Console(origin, api, app, browser)
        finally:
            await browser.close()
