"""CALL-8 in the web console: the inbox lists a long call (its server answered with a task) while it runs, with the
task's latest status, and once it ended, that its result waits to be read by whoever started it."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests._waiting import eventually
from tests.org._flows import by_tool, register, set_policy
from tests.org.web._console import Console
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


async def test_call8_the_inbox_lists_a_long_call_running_then_waiting_to_be_read(console: Console) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(console.api, url, name="jobs", token=None))
        await set_policy(console.api, tools["slow"], "run_freely")
        page = await console.sign_in("owner@acme.test")  # first: on a slow machine, signing in takes seconds
        headers = {**console.api.headers(), "Prefer": "respond-async"}
        body = {"tool": "jobs__slow", "arguments": {"seconds": 8}}
        started = await console.api.client.post("/api/v1/calls", json=body, headers=headers)
        assert started.status_code == 202, started.text
        call_id = started.json()["call_id"]
        await page.goto("/inbox")
        item = page.locator(f"#long-call-{call_id}")
        await expect(item).to_contain_text("jobs__slow on jobs, for owner@acme.test: running")
        await console.look(page, "inbox-long-call")

        async def finished() -> bool:
            await page.goto("/inbox")
            return "finished" in (await item.text_content() or "")

        # The task ends on the server a few seconds later; the page is loaded again until it says so.
        await eventually(finished, within=30, what="the inbox shows the long call finished")
        await expect(item).to_contain_text("its result waits to be read once")
        await expect(item).to_contain_text(f"GET /api/v1/calls/{call_id}")
        read = await console.api.request("GET", f"/api/v1/calls/{call_id}")
        assert read.status_code == 200, read.text
        await page.goto("/inbox")
        await expect(page.locator("#long-calls")).to_have_count(0)
