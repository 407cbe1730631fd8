"""A sealed credential is bound to the origin it was entered for, through the organization's JSON API on SQLite and
PostgreSQL, against real servers on 127.0.0.1 on two ports: a URL edited to another origin drops the bearer token or
the client credentials (unless new ones come with it), says so and audits it, and the other server never sees them;
a path edit on the same origin keeps them (ORG-2, API-6, THREATS: organization service)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from sqlalchemy import update

from mcpyard.org.store._db import open_database
from mcpyard.org.store._models import RegisteredServer
from tests.auth._support import auth_server, issuer_of, stats
from tests.conftest import Home
from tests.org._flows import TOKEN, assert_never_shown, register
from tests.org._service import Service, running_service
from tests.servers.in_process import serve_http_in_process
from tests.servers.oauth_server import CC_CLIENT_ID, CC_CLIENT_SECRET

pytestmark = pytest.mark.anyio

NEW = "srv-token-other-origin-9b2e4c7d1f"


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


@pytest.fixture
async def elsewhere() -> AsyncIterator[str]:
    """The `echoes_token` fixture server: another origin, keeping every Authorization header it gets."""
    async with serve_http_in_process("echoes_token") as url:
        yield url


async def seen_by(url: str) -> list[tuple[str, str]]:
    """`(path, Authorization header)` of every request the `echoes_token` server at `url` got."""
    async with httpx2.AsyncClient() as client:
        response = await client.get(url.replace("/mcp", "/seen"))
    return [(path, header) for path, header in response.json()]


async def patch(service: Service, server_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    response = await service.request("PATCH", f"/api/v1/servers/{server_id}", json=changes)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def last_update(service: Service) -> dict[str, Any]:
    [newest, *_] = await service.get("/api/v1/audit", params={"action": "server.update"})
    return dict(newest["new"])


async def test_org2_a_url_moved_to_another_origin_drops_the_token_and_the_other_server_never_sees_it(
    service: Service, upstream: str, elsewhere: str
) -> None:
    server = await register(service, upstream)
    assert (server["state"], server["has_token"]) == ("connected", True)
    same = upstream.replace("http://", "HTTP://").replace("/mcp", "/mcp?same=origin")
    kept = await patch(service, server["id"], {"url": same})
    assert (kept["credentials_dropped"], kept["has_token"], kept["state"]) == ([], True, "connected")

    moved = await patch(service, server["id"], {"url": elsewhere})
    assert moved["credentials_dropped"] == ["bearer_token"]
    assert (moved["has_token"], moved["state"]) == (False, "connected"), moved
    assert (await last_update(service))["credentials_dropped"] == ["bearer_token"], "the audit says what was dropped"
    assert all(TOKEN not in header for _, header in await seen_by(elsewhere)), "the token stayed with its origin"
    refreshed = await service.post(f"/api/v1/servers/{server['id']}/refresh")
    assert refreshed["has_token"] is False

    given = await patch(service, server["id"], {"bearer_token": NEW})
    assert (given["credentials_dropped"], given["has_token"]) == ([], True)
    other_path = elsewhere.replace("/mcp", "/other")
    on_path = await patch(service, server["id"], {"url": other_path})
    assert (on_path["credentials_dropped"], on_path["has_token"]) == ([], True), "a path edit keeps the token"
    assert ("/other", f"Bearer {NEW}") in await seen_by(elsewhere), "the same origin's other path got it"

    back = await patch(service, server["id"], {"url": upstream, "bearer_token": TOKEN})
    assert (back["credentials_dropped"], back["state"]) == ([], "connected"), "the token given with the URL is used"
    seen = await seen_by(elsewhere)
    assert all(TOKEN not in header for _, header in seen), seen
    assert {header for _, header in seen} <= {"-", f"Bearer {NEW}"}
    assert_never_shown(service, TOKEN)
    assert_never_shown(service, NEW)


async def test_org2_client_credentials_moved_to_another_origin_are_dropped_and_never_used_there(
    service: Service, elsewhere: str
) -> None:
    async with auth_server("--client-credentials") as url:
        credentials = {"client_id": CC_CLIENT_ID, "client_secret": CC_CLIENT_SECRET, "issuer": issuer_of(url)}
        body = {"name": "guarded", "url": url, "client_credentials": credentials}
        server = await service.post("/api/v1/servers", body, expect=201)
        assert (server["state"], server["has_client_credentials"]) == ("connected", True)
        before = await stats(url)
        moved = await patch(service, server["id"], {"url": elsewhere})
        assert moved["credentials_dropped"] == ["client_credentials"]
        assert (moved["has_client_credentials"], moved["client_id"], moved["issuer"]) == (False, None, None)
        await service.post(f"/api/v1/servers/{server['id']}/refresh")
        after = await stats(url)
    assert after["token_requests"] == before["token_requests"], "no token was asked for the new address"
    assert {header for _, header in await seen_by(elsewhere)} == {"-"}, "no access token reached the other origin"
    assert (await last_update(service))["credentials_dropped"] == ["client_credentials"]
    assert_never_shown(service, CC_CLIENT_SECRET)


async def test_org2_a_credential_is_sent_only_to_the_origin_it_was_entered_for_even_when_the_url_changed_beside_it(
    service: Service, upstream: str, elsewhere: str
) -> None:
    """A URL changed without the edit's check (an edit racing another, a restored backup): still never sent."""
    server = await register(service, upstream)
    async with open_database(service.database_url) as db, db.sessions.begin() as session:
        await session.execute(update(RegisteredServer).where(RegisteredServer.id == server["id"]).values(url=elsewhere))
    refreshed = await service.post(f"/api/v1/servers/{server['id']}/refresh")
    assert refreshed["url"] == elsewhere
    assert all(TOKEN not in header for _, header in await seen_by(elsewhere))


async def test_org4_the_models_key_goes_only_with_the_base_url_it_was_given_with(
    service: Service, elsewhere: str
) -> None:
    """`PUT /api/v1/model` replaces the setting whole: a base URL given without a key has none."""
    body = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": NEW}
    assert (await service.request("PUT", "/api/v1/model", json=body)).json()["has_key"] is True
    moved = await service.request("PUT", "/api/v1/model", json={"base_url": elsewhere, "model": "m"})
    assert moved.json() == {"base_url": elsewhere, "model": "m", "has_key": False}
    assert_never_shown(service, NEW)
