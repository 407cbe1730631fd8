"""Cross-app access (SEP-990) against a real identity provider and authorization server on 127.0.0.1: the ID
token exchanged for an identity assertion grant, that grant for an access token (AUTH-2, AUTH-3, SEC-2)."""

from __future__ import annotations

import pytest

from tests.conftest import Home, body
from tests.servers.oauth_server import ID_TOKEN, IDP_CLIENT_ID, IDP_PATH, XAA_CLIENT_ID, XAA_CLIENT_SECRET

from ._support import auth_server, everything_shown, host_for, issuer_of, stats

pytestmark = pytest.mark.anyio

SECRETS = {"xaa": XAA_CLIENT_SECRET, "id-token": ID_TOKEN}


def cross_app(url: str) -> dict[str, object]:
    oauth = {
        "grant": "cross_app_access",
        "client_id": XAA_CLIENT_ID,
        "client_secret": "${secret:xaa}",
        "issuer": issuer_of(url),
        "idp_token_endpoint": issuer_of(url) + IDP_PATH,
        "idp_client_id": IDP_CLIENT_ID,
        "id_token": "${secret:id-token}",
    }
    return {"url": url, "oauth": oauth}


async def test_auth2_cross_app_access_connects_with_no_browser_and_the_token_serves_the_next_start(
    home: Home,
) -> None:
    async with auth_server("--cross-app") as url:
        async with host_for(home, cross_app(url), SECRETS) as host:
            server = host.status().servers[0]
            assert (server.state, server.sign_in_url) == ("connected", None), server.reason
            assert body(await host.call("o__whoami", {})) == XAA_CLIENT_ID
            shown = everything_shown(host, home)
            assert XAA_CLIENT_SECRET not in shown
            assert ID_TOKEN not in shown
        async with host_for(home, cross_app(url), SECRETS) as again:
            assert again.status().servers[0].state == "connected"
        counts = await stats(url)
    assert (counts["idp_exchanges"], counts["identity_assertions"]) == (1, 1)
    assert counts["token_requests"] == ["client_secret_basic"]
    assert (counts["registrations"], counts["authorizations"]) == (0, 0)


async def test_auth2_an_id_token_the_identity_provider_refuses_fails_the_server_saying_so_sec_2(home: Home) -> None:
    stale = "an-expired-id-token-from-yesterday"
    async with auth_server("--cross-app") as url:
        async with host_for(home, cross_app(url), {**SECRETS, "id-token": stale}) as host:
            server = host.status().servers[0]
            assert server.state == "failed"
            assert server.reason == (
                "sign-in did not complete: the identity provider refused the token request "
                "(HTTP 400 invalid_grant: the ID token is not valid)"
            )
            assert stale not in everything_shown(host, home)
        counts = await stats(url)
    assert (counts["idp_exchanges"], counts["identity_assertions"], counts["token_requests"]) == (0, 0, [])
