"""The webhooks page in a real browser: an owner adds a webhook and sees its secret once, an approval that waits is
delivered to a receiver on 127.0.0.1 and shows in the page's delivery log, the owner deletes the webhook; a member
has no webhooks page (ORG-1, ORG-5, SEC-2)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests._waiting import eventually
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import serving
from tests.org.web._console import Console

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[str, list[bytes]]]:
    """A webhook receiver on 127.0.0.1 keeping every body it got; its URL and the bodies."""
    bodies: list[bytes] = []

    async def hook(request: Request) -> Response:
        bodies.append(await request.body())
        return Response("ok")

    async with serving(Starlette(routes=[Route("/hook", hook, methods=["POST"])]), stop_seconds=0) as origin:
        yield f"{origin}/hook", bodies


async def test_an_owner_adds_a_webhook_sees_its_secret_once_and_its_delivery_log(
    console: Console, upstream: str, receiver: tuple[str, list[bytes]]
) -> None:
    url, bodies = receiver
    tools = by_tool(await register(console.api, upstream))
    await set_policy(console.api, tools["write"], "ask_first")
    page = await console.sign_in("owner@acme.test")
    await page.get_by_role("link", name="Webhooks").click()
    await expect(page.locator("#webhooks-empty")).to_be_visible()
    await page.get_by_label("URL").fill(url)
    await page.get_by_label("A server's question waits").uncheck()
    await page.get_by_role("button", name="Add webhook").click()
    secret = await page.locator("#new-secret").inner_text()
    assert secret.startswith("whsec_")
    hook = page.locator("section.webhook")
    await expect(hook).to_contain_text("An approval waits")
    await expect(hook).not_to_contain_text("A server's question waits")
    await expect(hook).to_contain_text("argument values not sent")

    await call(console.api, "tools__write", {"note": "n"}, expect=202)

    async def delivered() -> bool:
        [listed] = await console.api.get("/api/v1/webhooks")
        found: list[dict[str, Any]] = await console.api.get(f"/api/v1/webhooks/{listed['id']}/deliveries")
        return [item["status"] for item in found] == ["delivered"]

    # The log is written once the receiver answered: no event this test can wait on says so.
    await eventually(delivered, within=WAIT_SECONDS, what="the delivery is written down as delivered")
    assert len(bodies) == 1
    await page.goto("/webhooks")
    row = page.locator("table.deliveries tbody tr")
    await expect(row).to_contain_text("An approval waits")
    await expect(row).to_contain_text("delivered")
    await expect(row).to_contain_text("HTTP 200")
    await expect(page.locator("#new-secret")).to_have_count(0)
    assert secret not in await console.look(page), "the secret is shown once, never again"

    await page.get_by_role("button", name="Delete this webhook").click()
    await expect(page.locator(".notice")).to_contain_text("The webhook is deleted")
    await expect(page.locator("#webhooks-empty")).to_be_visible()
    assert console.errors() == []


async def test_org1_a_member_has_no_webhooks_page(console: Console) -> None:
    await console.api.add_member("member@acme.test")
    page = await console.sign_in("member@acme.test")
    await expect(page.get_by_role("link", name="Webhooks")).to_have_count(0)
    answer = await page.goto("/webhooks")
    assert answer is not None
    assert answer.status == 403
