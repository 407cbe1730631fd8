"""Client credentials per registered server, through the organization's JSON API on SQLite and PostgreSQL, against
the OAuth fixture server on 127.0.0.1: connected with no browser, the secret sealed and never shown, a refusal
said plainly, one credential a server, and a key rotation that keeps it working (ORG-2, AUTH-2, NET-1, API-6)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import select

from mcpyard.org.keys._keys import KEY_FILE, FileKeySource
from mcpyard.org.keys._rotate import rotate_key
from mcpyard.org.store._db import open_database
from mcpyard.org.store._models import Credential
from tests.auth._support import auth_server, issuer_of, stats
from tests.conftest import Home
from tests.org._flows import TOKEN, assert_never_shown, by_tool, call, set_policy
from tests.org._service import Org, Service, running_service, service_app
from tests.servers.oauth_server import CC_CLIENT_ID, CC_CLIENT_SECRET

pytestmark = pytest.mark.anyio

WRONG = "not-the-client-secret-3f9a61c2"
REFUSAL = "the authorization server refused the token request (HTTP 401 invalid_client)"


def credentials_for(url: str, secret: str = CC_CLIENT_SECRET, **more: Any) -> dict[str, Any]:
    return {"client_id": CC_CLIENT_ID, "client_secret": secret, "issuer": issuer_of(url), **more}


async def register(service: Service, url: str, secret: str = CC_CLIENT_SECRET) -> dict[str, Any]:
    body = {"name": "guarded", "url": url, "client_credentials": credentials_for(url, secret, scopes=["mcp"])}
    created: dict[str, Any] = await service.post("/api/v1/servers", body, expect=201)
    return created


async def patch(service: Service, server_id: str, changes: dict[str, Any], *, expect: int = 200) -> Any:
    response = await service.request("PATCH", f"/api/v1/servers/{server_id}", json=changes)
    assert response.status_code == expect, response.text
    return response.json()


async def read_everything(service: Service, server_id: str) -> None:
    """Every place a server's settings could show: lists, the server, its tools, the audit, the alerts."""
    for path in ("/api/v1/servers", f"/api/v1/servers/{server_id}", "/api/v1/tools", "/api/v1/audit", "/api/v1/alerts"):
        await service.get(path)


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def test_org2_auth2_client_credentials_connect_with_no_browser_and_the_secret_is_never_shown(
    service: Service, home: Home
) -> None:
    async with auth_server("--client-credentials") as url:
        server = await register(service, url)
        assert server["state"] == "connected", server
        assert (server["has_client_credentials"], server["has_token"]) == (True, False)
        assert (server["client_id"], server["issuer"]) == (CC_CLIENT_ID, issuer_of(url))
        await set_policy(service, by_tool(server)["whoami"], "run_freely")
        ran = await call(service, "guarded__whoami")
        assert ran["ok"] is True, ran
        assert CC_CLIENT_ID in ran["text"], "the call ran with the access token the client credentials got"
        await read_everything(service, server["id"])
        counts = await stats(url)
    assert (counts["client_credentials"], counts["token_requests"]) == (1, ["client_secret_basic"])
    assert (counts["registrations"], counts["authorizations"]) == (0, 0), "no registration, no browser"
    assert_never_shown(service, CC_CLIENT_SECRET)
    assert list(home.data_home.rglob("mcp-auth.json")) == [], "access tokens stay in memory"
    async with open_database(service.database_url) as db, db.sessions.begin() as session:
        [stored] = list(await session.scalars(select(Credential)))
    assert stored.kind == "client_credentials"
    origin = issuer_of(url)  # the fixture serves its MCP endpoint and its authorization server on one origin
    assert stored.details == {"client_id": CC_CLIENT_ID, "issuer": issuer_of(url), "scopes": ["mcp"], "origin": origin}
    assert CC_CLIENT_SECRET.encode() not in stored.sealed


async def test_org2_auth2_a_refused_secret_fails_the_server_naming_the_refusal_never_the_secret(
    service: Service,
) -> None:
    async with auth_server("--client-credentials") as url:
        server = await register(service, url, WRONG)
        assert server["state"] == "failed"
        assert REFUSAL in server["last_error"], server["last_error"]
        [alert] = await service.get("/api/v1/alerts")
        assert REFUSAL in alert["message"]
        fixed = await patch(service, server["id"], {"client_credentials": credentials_for(url)})
        assert fixed["state"] == "connected", fixed
        wrong_again = await patch(service, server["id"], {"client_credentials": credentials_for(url, WRONG)})
        assert wrong_again["state"] == "failed", "a changed secret never rides on the old secret's token"
        assert REFUSAL in wrong_again["last_error"]
        await read_everything(service, server["id"])
        assert (await stats(url))["refused_clients"] == 2
    assert_never_shown(service, WRONG)
    assert_never_shown(service, CC_CLIENT_SECRET)


async def test_org2_api6_a_server_takes_a_bearer_token_or_client_credentials_never_both(
    service: Service, upstream: str
) -> None:
    both = {"name": "both", "url": upstream, "bearer_token": TOKEN, "client_credentials": credentials_for(upstream)}
    refused = await service.post("/api/v1/servers", both, expect=422)
    assert refused["error"]["code"] == "conflicting_credentials"
    assert "bearer_token" in refused["error"]["message"]
    assert "client_credentials" in refused["error"]["message"]
    server = await service.post(
        "/api/v1/servers", {"name": "plain", "url": upstream, "bearer_token": TOKEN}, expect=201
    )
    assert (server["has_token"], server["has_client_credentials"], server["client_id"]) == (True, False, None)
    changes = {"bearer_token": TOKEN, "client_credentials": credentials_for(upstream)}
    assert (await patch(service, server["id"], changes, expect=422))["error"]["code"] == "conflicting_credentials"
    swapped = await patch(service, server["id"], {"client_credentials": credentials_for(upstream)})
    assert (swapped["has_token"], swapped["has_client_credentials"]) == (False, True), "the new one replaces it"
    removed = await patch(service, server["id"], {"client_credentials": None, "bearer_token": TOKEN})
    assert (removed["has_token"], removed["has_client_credentials"], removed["issuer"]) == (True, False, None)
    assert removed["state"] == "connected", removed
    assert_never_shown(service, CC_CLIENT_SECRET)
    assert_never_shown(service, TOKEN)


@pytest.mark.parametrize(
    ("changes", "code", "says"),
    [
        ({"issuer": "http://10.0.0.7"}, "url_refused", "client_credentials.issuer"),
        ({"issuer": "ftp://auth.example"}, "url_refused", "client_credentials.issuer"),
        ({"client_secret": CC_CLIENT_SECRET + "\nX-Injected: 1"}, "invalid_client_credentials", "client_secret"),
        ({"client_id": ""}, "invalid_client_credentials", "client_id"),
        ({"scopes": ["two words"]}, "invalid_client_credentials", "scopes"),
        ({"scopes": "mcp"}, "invalid_client_credentials", "scopes"),
        ({"audience": "x"}, "invalid_client_credentials", "audience"),
    ],
)
async def test_net1_client_credentials_are_checked_before_anything_is_kept(
    service: Service, upstream: str, changes: dict[str, Any], code: str, says: str
) -> None:
    body = {"name": "checked", "url": upstream, "client_credentials": credentials_for(upstream, **changes)}
    refused = await service.post("/api/v1/servers", body, expect=422)
    assert refused["error"]["code"] == code
    assert says in refused["error"]["message"]
    assert await service.get("/api/v1/servers") == []
    assert_never_shown(service, CC_CLIENT_SECRET)


@asynccontextmanager
async def started_again(database_url: str, data_home: Path, org: Org) -> AsyncIterator[Service]:
    """The service started again on the same database and data folder (its key file), as after a restart."""
    app = service_app(database_url, data_home, environ={})
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://org.test", timeout=60) as client:
            yield Service(client, org, database_url, data_home, app=app)


async def test_org2_rotate_key_reseals_client_credentials_and_the_server_still_connects(
    database_url: str, home: Home
) -> None:
    keys = FileKeySource(home.data_home / KEY_FILE)
    old = keys.create().current
    async with auth_server("--client-credentials") as url:
        async with running_service(database_url, home.data_home, environ={}) as first:
            server = await register(first, url)
            assert server["state"] == "connected", server
            await set_policy(first, by_tool(server)["whoami"], "run_freely")
        async with open_database(database_url) as db:
            done = await rotate_key(db, keys)
        assert (done.resealed, done.dropped) == (1, [old])
        async with started_again(database_url, home.data_home, first.org) as again:
            ran = await call(again, "guarded__whoami")
            assert ran["ok"] is True, ran
            assert CC_CLIENT_ID in ran["text"]
            await read_everything(again, server["id"])
        counts = await stats(url)
    assert counts["client_credentials"] == 2, "the restarted service asked for a new token with the resealed secret"
    assert_never_shown(first, CC_CLIENT_SECRET)
    assert_never_shown(again, CC_CLIENT_SECRET)
