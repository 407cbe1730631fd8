"""`mcpyard org serve --demo` as a new user runs it: the console on a demo organization, signed in from what it prints.

The member asks the demo teammate for the weather (a tool that runs freely) and to note something
(ask first), the admin approves it from the inbox, and a visitor uses the published assistant.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import pytest
from anyio.abc import Process
from playwright.async_api import Browser, Page, expect

from tests._forkserver import mcpyard_command
from tests.conftest import Home
from tests.org.web._console import WAIT_MS, Chromium

pytestmark = pytest.mark.anyio

STARTUP_SECONDS = 60


@dataclass
class Demo:
    origin: str
    passwords: dict[str, str]
    visitors: str


@asynccontextmanager
async def _demo(home: Home) -> AsyncIterator[Demo]:
    env = {**home.environ, "PYTHONUNBUFFERED": "1"}
    process: Process = await anyio.open_process(mcpyard_command(env, "org", "serve", "--demo", "--port", "0"), env=env)
    try:
        assert process.stderr is not None
        text = ""
        with anyio.fail_after(STARTUP_SECONDS):
            async for chunk in process.stderr:
                text += chunk.decode()
                if "visitors: " in text and text.endswith("\n"):
                    break
        origin = re.search(r"open the console at (http://127\.0\.0\.1:\d+)/", text)
        visitors = re.search(r"visitors: (\S+)", text)
        passwords = dict(re.findall(r"(\w+@demo\.test)\s+password (\S+)", text))
        assert origin is not None, text
        assert visitors is not None, text
        assert set(passwords) == {"owner@demo.test", "admin@demo.test", "member@demo.test"}, text
        yield Demo(origin.group(1), passwords, visitors.group(1))
    finally:
        process.terminate()
        with anyio.fail_after(30):
            await process.wait()
        rest = b""
        assert process.stderr is not None
        async for chunk in process.stderr:
            rest += chunk
        assert "Traceback" not in rest.decode(), rest.decode()[-4000:]


async def _sign_in(browser: Browser, demo: Demo, email: str) -> Page:
    context = await browser.new_context(base_url=demo.origin)
    context.set_default_timeout(WAIT_MS)
    page = await context.new_page()
    await page.goto("/")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(demo.passwords[email])
    await page.get_by_role("button", name="Sign in").click()
    return page


@pytest.mark.long
async def test_the_demo_organization_is_ready_to_use_from_what_org_serve_demo_prints(
    home: Home, chromium: Chromium
) -> None:
    browser = await chromium.browser()
    async with _demo(home) as demo:
        try:
            member = await _sign_in(browser, demo, "member@demo.test")
            await member.get_by_role("link", name="scribe").click()
            await member.get_by_role("button", name="New conversation").click()
            await member.get_by_label("Message").fill("What is the weather in Lisbon?")
            await member.get_by_role("button", name="Send").click()
            await expect(member.locator(".message.reply")).to_contain_text("weather__forecast answered")
            await expect(member.locator(".message.reply")).to_contain_text("Lisbon")
            await member.get_by_label("Message").fill("note that we ship on Friday")
            await member.get_by_role("button", name="Send").click()
            await expect(member.get_by_role("article", name="Approval for notes__add_note")).to_be_visible()

            admin = await _sign_in(browser, demo, "admin@demo.test")
            await admin.get_by_role("link", name="Inbox").click()
            card = admin.get_by_role("article", name="Approval for notes__add_note")
            await expect(card).to_contain_text("member@demo.test")
            await card.get_by_role("button", name="Approve").click()
            await expect(admin.locator(".notice")).to_have_text("Approved: it ran once.")
            await expect(member.locator(".message.reply").last).to_contain_text("notes__add_note answered")

            visitor = await (await browser.new_context()).new_page()
            await visitor.goto(demo.visitors)
            await visitor.get_by_label("Message").fill("Weather in Oslo, please")
            await visitor.get_by_role("button", name="Send").click()
            await expect(visitor.locator(".message.reply")).to_contain_text("Oslo")
        finally:
            await chromium.close_contexts()  # before the service stops: open pages hold its live event streams
