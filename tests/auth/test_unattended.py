"""Unattended sign-in with the client-credentials grant, by client secret and by private-key JWT, against a
real authorization server on 127.0.0.1 (AUTH-2, AUTH-3, SEC-2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.conftest import Home, body
from tests.servers.oauth_server import CC_CLIENT_ID, CC_CLIENT_SECRET, JWT_CLIENT_ID

from ._support import auth_server, everything_shown, host_for, issuer_of, stats

pytestmark = pytest.mark.anyio


def key_pair(folder: Path) -> tuple[str, Path]:
    """A new P-256 key: its private PEM (what the user saves as a secret) and a file with its public half."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = folder / "client-key.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def with_secret(url: str, *, issuer: str | None = None) -> dict[str, object]:
    oauth = {
        "grant": "client_credentials",
        "client_id": CC_CLIENT_ID,
        "client_secret": "${secret:cc}",
        "issuer": issuer or issuer_of(url),
    }
    return {"url": url, "oauth": oauth}


async def test_auth2_client_credentials_connect_with_no_browser_and_the_token_serves_the_next_start(
    home: Home,
) -> None:
    """AUTH-2, AUTH-3: no sign-in page; one token request with client_secret_basic; the stored token is used again."""
    async with auth_server("--client-credentials") as url:
        async with host_for(home, with_secret(url), {"cc": CC_CLIENT_SECRET}) as host:
            server = host.status().servers[0]
            assert (server.state, server.sign_in_url) == ("connected", None), server.reason
            assert body(await host.call("o__whoami", {})) == CC_CLIENT_ID
            assert CC_CLIENT_SECRET not in everything_shown(host, home)
        async with host_for(home, with_secret(url), {"cc": CC_CLIENT_SECRET}) as again:
            assert again.status().servers[0].state == "connected"
        counts = await stats(url)
    assert (counts["client_credentials"], counts["token_requests"]) == (1, ["client_secret_basic"])
    assert (counts["registrations"], counts["authorizations"]) == (0, 0)


async def test_auth2_client_credentials_with_a_private_key_jwt_sign_no_secret_across(
    home: Home, tmp_path: Path
) -> None:
    """AUTH-2, SEC-2: the client proves itself with an assertion signed by its key; the key is never shown."""
    private, public = key_pair(tmp_path)
    async with auth_server("--client-credentials", "--jwt-public-key", str(public)) as url:
        oauth = {
            "grant": "client_credentials",
            "client_id": JWT_CLIENT_ID,
            "private_key": "${secret:client-key}",
            "issuer": issuer_of(url),
        }
        async with host_for(home, {"url": url, "oauth": oauth}, {"client-key": private}) as host:
            assert host.status().servers[0].state == "connected", host.status().servers[0].reason
            assert body(await host.call("o__whoami", {})) == JWT_CLIENT_ID
            shown = everything_shown(host, home)
            assert all(line not in shown for line in private.splitlines()[1:-1])
        counts = await stats(url)
    assert (counts["client_credentials"], counts["token_requests"]) == (1, ["private_key_jwt"])


async def test_auth2_refused_client_credentials_fail_the_server_saying_why_and_never_what_sec_2(home: Home) -> None:
    wrong = "not-the-client-credentials-secret-9"
    async with auth_server("--client-credentials") as url:
        async with host_for(home, with_secret(url), {"cc": wrong}) as host:
            server = host.status().servers[0]
            assert server.state == "failed"
            assert server.reason == (
                "sign-in did not complete: the authorization server refused the token request "
                "(HTTP 401 invalid_client); check oauth.client_id and its secret or key"
            )
            assert wrong not in everything_shown(host, home)
        assert (await stats(url))["refused_clients"] == 1


async def test_auth2_client_credentials_go_only_to_the_configured_issuer(home: Home) -> None:
    """AUTH-2, THREATS (credentials per authorization server): a server naming another authorization server
    gets no token request at all."""
    async with auth_server("--client-credentials") as url:
        entry = with_secret(url, issuer="https://auth.elsewhere.example")
        async with host_for(home, entry, {"cc": CC_CLIENT_SECRET}) as host:
            server = host.status().servers[0]
            assert server.state == "failed"
            assert server.reason == (
                f"sign-in did not complete: the server sends mcpyard to the authorization server {issuer_of(url)}, "
                "not to oauth.issuer (https://auth.elsewhere.example); "
                "mcpyard sends this client's credentials nowhere else"
            )
        assert (await stats(url))["token_requests"] == []
