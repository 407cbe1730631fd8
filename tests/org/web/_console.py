"""The web console for browser tests: the service served on 127.0.0.1, Debian's Chromium driven by Playwright.

One Chromium serves every browser test of a session (`Chromium`, launched at the first test that
wants it, again if it died); each test gets fresh contexts of it and closes them all at its end,
so no cookie, storage or page outlives the test that made it.

`Console` is the running service (its origin, an API client holding the owner's token for set-up
steps), and every page the tests looked at, to be searched for secrets. Screenshots are taken only
when `MCPYARD_SCREENSHOTS` names a folder (a test run never changes tracked files); the README's
pictures come from `MCPYARD_SCREENSHOTS=docs/screenshots`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from playwright.async_api import Browser, Page, Playwright
from starlette.applications import Starlette

from tests.org._service import PASSWORD, Service

__all__ = ["CHROMIUM", "CHROMIUM_FLAGS", "SHOTS", "Chromium", "Console", "refreshed", "refreshes"]

CHROMIUM = os.environ.get("MCPYARD_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""What Chromium needs on a closed network (without them it keeps trying to reach its own services)."""
SHOTS = Path(os.environ["MCPYARD_SCREENSHOTS"]) if os.environ.get("MCPYARD_SCREENSHOTS") else None
"""Where screenshots go; None (the default) takes none."""
WAIT_MS = 20_000
"""How long a browser step may wait for what it expects (a live update, a turn) before the test fails."""
CLOSE_SECONDS = 30
"""How long closing a test's contexts, or the browser, may take."""


@dataclass
class Chromium:
    """The one browser of a test session, started on first use and again whenever it is no longer connected."""

    playwright: Playwright
    running: Browser | None = None

    async def browser(self) -> Browser:
        """The running browser, with no context open: a test's contexts are all its own."""
        if self.running is not None and (not self.running.is_connected() or self.running.contexts):
            await self.close()  # it died, or an earlier test's contexts could not be closed: not reused
        if self.running is None:
            self.running = await self.playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
            )
        return self.running

    async def close_contexts(self) -> None:
        """Close every context a test opened (through `Console.page` or on the browser itself)."""
        if self.running is not None and self.running.is_connected():
            with anyio.fail_after(CLOSE_SECONDS):
                for context in self.running.contexts:
                    await context.close()

    async def close(self) -> None:
        browser, self.running = self.running, None
        if browser is not None:
            with anyio.fail_after(CLOSE_SECONDS):
                await browser.close()


@dataclass
class Console:
    """The served service, an API client for it, and what the browser showed."""

    origin: str
    api: Service
    app: Starlette
    browser: Browser
    seen: list[str] = field(default_factory=list)

    async def page(self, *, javascript: bool = True) -> Page:
        """A page in a fresh browser context (cookies of its own: another person, or a visitor)."""
        context = await self.browser.new_context(base_url=self.origin, java_script_enabled=javascript)
        context.set_default_timeout(WAIT_MS)
        page = await context.new_page()
        page.on("pageerror", lambda error: self.seen.append(f"PAGE ERROR {error}"))
        return page

    async def sign_in(self, email: str, *, javascript: bool = True) -> Page:
        page = await self.page(javascript=javascript)
        await page.goto("/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(re.compile(r"/(servers|teammates)$"))
        await self.look(page)
        return page

    async def look(self, page: Page, shot: str | None = None) -> str:
        """Keep what `page` shows now (to search it for secrets); with `shot`, a screenshot of it too when asked."""
        html = await page.content()
        self.seen.append(html)
        if shot is not None and SHOTS is not None:
            await anyio.Path(SHOTS).mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
        return html

    def errors(self) -> list[str]:
        return [item for item in self.seen if item.startswith("PAGE ERROR")]


async def refreshes(page: Page) -> int:
    """How many times the page's live parts were fetched again."""
    return int(await page.evaluate("() => Number(document.body.dataset.refreshed || 0)"))


async def refreshed(page: Page, times: int) -> None:
    """Until the page's live parts were fetched again `times` times (or more)."""
    await page.wait_for_function("n => Number(document.body.dataset.refreshed || 0) >= n", arg=times)
