"""Signing a member's own MCP client in, in a real browser (ORG-10, API-7): the authorization sends a member who
is not signed in to the console's sign-in, then to the consent page naming the client, the organization and where
it sends them back; Allow sends the browser on to the client's loopback listener with a code (the page's policy lets
the form go there and nowhere else), Deny with `access_denied`. The MCP clients page gives the set-up and lists the
connected app, and Revoke ends its tokens at once.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.async_api import ConsoleMessage, Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.org._flows import mcp_status, pkce
from tests.org._served import serving
from tests.org._service import PASSWORD
from tests.org.web._console import Console

pytestmark = pytest.mark.anyio


class Listener:
    """A native client's loopback redirect listener: it keeps each query it is sent."""

    def __init__(self) -> None:
        self.queries: list[dict[str, str]] = []
        self.address = ""

    async def callback(self, request: Request) -> HTMLResponse:
        self.queries.append(dict(request.query_params))
        return HTMLResponse("<!doctype html><title>Signed in</title><p>You may close this window.</p>")


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    kept = Listener()
    async with serving(Starlette(routes=[Route("/callback", kept.callback)]), stop_seconds=0) as origin:
        kept.address = f"{origin}/callback"
        yield kept


async def registered_client(console: Console, redirect: str) -> str:
    answer = await console.api.client.post(
        "/oauth/register",
        json={"client_name": "Editor of Test", "redirect_uris": [redirect], "token_endpoint_auth_method": "none"},
    )
    assert answer.status_code == 201, answer.text
    client_id: str = answer.json()["client_id"]
    return client_id


def authorization(console: Console, client_id: str, redirect: str, challenge: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st4te",
        "scope": "mcp",
        "resource": f"{console.origin}/mcp",
    }
    return f"{console.origin}/oauth/authorize?{urlencode(query)}"


def policy_complaints(page: Page) -> list[str]:
    said: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            said.append(message.text)

    page.on("console", heard)
    return said


async def test_org10_a_member_signs_in_allows_the_client_and_revokes_it_in_the_browser(
    console: Console, listener: Listener
) -> None:
    await console.api.add_member("member@acme.test")
    client_id = await registered_client(console, listener.address)
    verifier, challenge = pkce()
    page = await console.page()
    complaints = policy_complaints(page)

    await page.goto(authorization(console, client_id, listener.address, challenge))
    await expect(page).to_have_url(re.compile(r"/login"))
    await page.get_by_label("Email").fill("member@acme.test")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(re.compile(r"/oauth/consent"))
    consent = page.get_by_role("region", name="What the client asks")
    await expect(consent).to_contain_text("Editor of Test asks to use acme's tools as you (member@acme.test)")
    await expect(consent.locator("[data-redirect]")).to_have_text(urlsplit(listener.address).netloc)
    await console.look(page, "consent")

    await page.get_by_role("button", name="Allow").click()
    await expect(page.get_by_text("You may close this window.")).to_be_visible()
    [query] = listener.queries
    assert query["state"] == "st4te"
    assert query["iss"].rstrip("/") == console.origin
    issued = await console.api.client.post(
        "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "client_id": client_id,
            "redirect_uri": listener.address,
            "code": query["code"],
            "code_verifier": verifier,
        },
    )
    assert issued.status_code == 200, issued.text
    access = issued.json()["access_token"]
    assert await mcp_status(console.origin, access) == 200

    await page.goto("/clients")
    await expect(page.locator("#mcp-endpoint")).to_have_text(f"{console.origin}/mcp")
    await expect(page.get_by_text(f"claude mcp add --transport http mcpyard {console.origin}/mcp")).to_be_visible()
    connected = page.locator("tr", has_text="Editor of Test")
    await expect(connected).to_contain_text(f"{console.origin}/mcp")
    await console.look(page, "clients")
    await connected.get_by_role("button", name="Revoke").click()
    await expect(page.get_by_text("No client has access yet.")).to_be_visible()
    assert await mcp_status(console.origin, access) == 401, "revoking ends the client's tokens at once"
    assert complaints == [], "the consent form may send the browser to the client's listener"
    assert access not in "".join(console.seen)
    assert console.errors() == []


async def test_org10_deny_sends_the_browser_back_with_access_denied_and_nothing_is_granted(
    console: Console, listener: Listener
) -> None:
    client_id = await registered_client(console, listener.address)
    page = await console.sign_in("owner@acme.test")
    await page.goto(authorization(console, client_id, listener.address, pkce()[1]))
    await page.get_by_role("button", name="Deny").click()
    await expect(page.get_by_text("You may close this window.")).to_be_visible()
    [query] = listener.queries
    assert query["error"] == "access_denied"
    assert "code" not in query
    assert parse_qs(urlsplit(page.url).query)["state"] == ["st4te"]
    await page.goto("/clients")
    await expect(page.get_by_text("No client has access yet.")).to_be_visible()
    assert await console.api.get("/api/v1/oauth/grants") == []
    assert console.errors() == []
