"""A live part that changes keeps in place what a person is pressing (ORG-5).

A click is a press and a release on the same element. The inbox and a conversation are fetched again
whenever something in them changes; a part rebuilt whole between the two took the element away, and
the click was lost. Here the mouse is pressed on a button or a link, the part changes around it, the
mouse is released: the click counts.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Locator, Page, expect

from tests.model.openai_fixture import ModelFixture
from tests.org._flows import by_tool, call, register, set_policy
from tests.org.web._console import Console, refreshed, refreshes

pytestmark = pytest.mark.anyio


async def _tools(console: Console, upstream: str) -> dict[str, dict[str, Any]]:
    tools = by_tool(await register(console.api, upstream))
    await set_policy(console.api, tools["write"], "ask_first")
    return tools


async def _press(page: Page, target: Locator) -> int:
    """The mouse pressed on `target` (not released); how many times the page's live parts were fetched so far."""
    await target.hover()
    times = await refreshes(page)
    await page.mouse.down()
    return times


async def test_org5_an_approve_button_pressed_while_another_call_arrives_in_the_inbox_approves_when_released(
    console: Console, upstream: str
) -> None:
    await _tools(console, upstream)
    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="Inbox").click()
    await expect(owner.locator("body[data-live=open]")).to_have_count(1)
    first = (await call(console.api, "tools__write", {"note": "alpha"}, expect=202))["approval"]["id"]
    alpha = owner.locator(f"#approval-{first}")
    approve = alpha.get_by_role("button", name="Approve")
    await expect(approve).to_be_visible()

    times = await _press(owner, approve)
    await call(console.api, "tools__write", {"note": "bravo"}, expect=202)  # shown after alpha: nothing moves
    await refreshed(owner, times + 1)
    bravo = owner.get_by_role("article", name="Approval for tools__write").filter(has_text="bravo")
    await expect(bravo).to_be_visible()
    await owner.mouse.up()

    await expect(owner.locator(".notice")).to_have_text("Approved: it ran once.")
    await expect(alpha).to_contain_text("wrote alpha")
    assert console.errors() == []


async def test_org5_a_link_pressed_in_a_conversation_while_a_later_turn_changes_is_followed_when_released(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = await _tools(console, upstream)
    answer = await console.api.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert answer.status_code == 200, answer.text
    helper = {"name": "helper", "server_ids": [tools["write"]["server_id"]]}
    await console.api.post("/api/v1/teammates", helper, expect=201)
    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="Teammates").click()
    await owner.get_by_role("link", name="helper").click()
    await owner.get_by_role("button", name="New conversation").click()
    await expect(owner.locator("body[data-live=open]")).to_have_count(1)
    model.replies.extend(
        [
            {"text": "Hello."},
            {"tool_calls": [{"name": "tools__write", "arguments": {"note": "later"}}]},
            {"text": "Wrote it."},
        ]
    )
    turns = owner.locator("article.turn")
    for message in ("hi", "note later"):
        await owner.get_by_label("Message").fill(message)
        await owner.get_by_role("button", name="Send").click()
        await expect(turns).to_have_count(1 if message == "hi" else 2)
    await expect(turns.nth(0)).to_contain_text("Hello.")
    waiting = owner.get_by_role("article", name="Approval for tools__write")
    await expect(waiting).to_be_visible()
    approval = (await waiting.get_attribute("id") or "").removeprefix("approval-")
    first_trace = turns.nth(0).get_by_role("link", name="Turn trace")
    address = await first_trace.get_attribute("href")

    times = await _press(owner, first_trace)
    await console.api.post(f"/api/v1/approvals/{approval}/approve")  # the second turn goes on and ends
    await refreshed(owner, times + 1)
    await expect(turns.nth(1)).to_contain_text("Wrote it.")
    await owner.mouse.up()

    await expect(owner).to_have_url(f"{console.origin}{address}")
    await expect(owner.locator("dl.facts")).to_contain_text("Hello.")
    assert console.errors() == []
