"""Browser sign-in with a client registered beforehand, and to a 2025-03-26 server, against a real
authorization server on 127.0.0.1 (AUTH-2, AUTH-3, SEC-2)."""

from __future__ import annotations

import pytest

from mcpyard.auth import secret_method
from mcpyard.config import TokenEndpointAuthMethod
from tests.conftest import Home, body
from tests.servers.http_runner import free_port
from tests.servers.oauth_server import PRE_CLIENT_ID, PRE_CLIENT_SECRET

from ._support import auth_server, everything_shown, host_for, issuer_of, sign_in, stats

pytestmark = pytest.mark.anyio


def pre_registered(port: int, secret: str = "pre") -> dict[str, object]:
    return {"client_id": PRE_CLIENT_ID, "client_secret": f"${{secret:{secret}}}", "redirect_port": port}


async def test_auth2_a_client_registered_beforehand_signs_in_without_registering_and_its_secret_is_never_kept(
    home: Home,
) -> None:
    """AUTH-2, SEC-2: the configured client, at its fixed redirect port, with client_secret_basic; nothing
    registered, and the secret never in mcp-auth.json or the status page."""
    port = free_port()
    async with auth_server("--pre-registered", str(port)) as url:
        entry = {"url": url, "oauth": pre_registered(port)}
        async with host_for(home, entry, {"pre": PRE_CLIENT_SECRET}) as host:
            await sign_in(host)
            assert host.status().servers[0].state == "connected", host.status().servers[0].reason
            assert body(await host.call("o__whoami", {})) == PRE_CLIENT_ID
            assert PRE_CLIENT_SECRET not in everything_shown(host, home)
        counts = await stats(url)
        assert (counts["registrations"], counts["authorizations"]) == (0, 1)
        assert counts["token_requests"] == ["client_secret_basic"]
        async with host_for(home, entry, {"pre": PRE_CLIENT_SECRET}) as again:
            assert again.status().servers[0].state == "connected", "the stored tokens serve the next start (AUTH-3)"
        assert (await stats(url))["authorizations"] == 1


async def test_auth2_a_wrong_client_secret_fails_the_server_saying_why_and_never_what_sec_2(home: Home) -> None:
    port = free_port()
    wrong = "not-the-pre-registered-secret-42"
    async with auth_server("--pre-registered", str(port)) as url:
        async with host_for(home, {"url": url, "oauth": pre_registered(port)}, {"pre": wrong}) as host:
            await sign_in(host)
            server = host.status().servers[0]
            assert server.state == "failed"
            assert server.reason == (
                "sign-in did not complete: the authorization server refused the token request "
                "(HTTP 401 invalid_client: Invalid client_secret); check oauth.client_id and its secret or key"
            )
            assert wrong not in everything_shown(host, home)
        assert (await stats(url))["token_requests"] == ["client_secret_basic"]


async def test_auth2_a_client_bound_to_another_issuer_is_never_sent_there(home: Home) -> None:
    """AUTH-2, THREATS (credentials per authorization server): the server names an authorization server
    other than `oauth.issuer`; mcpyard sends the client's secret nowhere and says why."""
    port = free_port()
    async with auth_server("--pre-registered", str(port)) as url:
        oauth = {**pre_registered(port), "issuer": "https://auth.elsewhere.example"}
        async with host_for(home, {"url": url, "oauth": oauth}, {"pre": PRE_CLIENT_SECRET}) as host:
            server = host.status().servers[0]
            assert server.state == "failed"
            assert server.reason == (
                f"sign-in did not complete: the server sends mcpyard to the authorization server {issuer_of(url)}, "
                "not to oauth.issuer (https://auth.elsewhere.example); "
                "mcpyard sends this client's credentials nowhere else"
            )
        counts = await stats(url)
        assert (counts["authorizations"], counts["token_requests"]) == (0, [])


async def test_auth2_a_2025_03_26_server_without_resource_metadata_is_signed_in_to(home: Home) -> None:
    """AUTH-2: no protected resource metadata; the authorization server metadata at the server's origin is used."""
    async with auth_server("--legacy") as url:
        async with host_for(home, {"url": url}, {}) as host:
            await sign_in(host)
            assert host.status().servers[0].state == "connected", host.status().servers[0].reason
            assert (await host.call("o__whoami", {})).ok
        counts = await stats(url)
        assert (counts["registrations"], counts["authorizations"], counts["token_exchanges"]) == (1, 1, 1)


@pytest.mark.parametrize(
    ("configured", "supported", "chosen"),
    [
        (None, None, "client_secret_basic"),
        (None, ["client_secret_basic", "client_secret_post"], "client_secret_basic"),
        (None, ["client_secret_post"], "client_secret_post"),
        (None, ["none", "private_key_jwt"], "client_secret_basic"),
        ("client_secret_post", ["client_secret_basic"], "client_secret_post"),
    ],
)
def test_auth2_a_secret_goes_by_basic_unless_the_server_takes_only_post_or_the_config_says(
    configured: TokenEndpointAuthMethod | None, supported: list[str] | None, chosen: str
) -> None:
    assert secret_method(configured, supported) == chosen
