"""OAuth sign-in to a real authorization server on 127.0.0.1, end to end (AUTH-2, AUTH-3, AUTH-4: loopback http)."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from mcpyard import Host
from mcpyard.auth import AUTH_FILE, AuthStore, ServerTokens
from tests.conftest import Home
from tests.servers.in_process import serve_http_in_process
from tests.servers.oauth_server import DEFAULT_ACCESS_TTL, EXPIRE_PATH, MCP_PATH, STATS_PATH

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def auth_server(*args: str) -> AsyncIterator[str]:
    async with serve_http_in_process("oauth_server", "streamable-http", args) as url:
        yield url


async def stats(url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as client:
        response = await client.get(url.replace(MCP_PATH, STATS_PATH))
        return dict(response.json())


async def expire_access_tokens(url: str) -> int:
    """Make the fixture server refuse every access token it issued so far; how many there were."""
    async with httpx2.AsyncClient() as client:
        response = await client.post(url.replace(MCP_PATH, EXPIRE_PATH))
        return int(response.json()["expired"])


@asynccontextmanager
async def host_for(home: Home, entry: dict[str, Any]) -> AsyncIterator[Host]:
    config = home.write_config({"o": entry})
    async with home.open(
        config,
        mode="auto",
    ) as host:
        yield host


async def browse(page: str) -> str:
    """A test browser: load the sign-in page (the server approves at once) and return where it redirects."""
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        response = await browser.get(page)
    assert response.status_code in (302, 303, 307), response.text
    return str(response.headers["location"])


async def follow(location: str) -> httpx2.Response:
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        return await browser.get(location)


async def sign_in(host: Host) -> None:
    server = host.status().servers[0]
    assert server.state == "waiting_for_sign_in", server.reason
    assert server.sign_in_url is not None
    location = await browse(server.sign_in_url)
    assert location.startswith("http://127.0.0.1:")
    assert (await follow(location)).status_code == 200
    with anyio.fail_after(20):
        await host.wait_until(lambda h: h.status().servers[0].state in ("connected", "failed"))


async def test_auth2_auth3_sign_in_completes_and_the_next_start_needs_no_browser(home: Home) -> None:
    async with auth_server() as url:
        async with host_for(home, {"url": url}) as host:
            await sign_in(host)
            server = host.status().servers[0]
            assert server.state == "connected", server.reason
            assert server.sign_in_url is None
            assert (await host.call("o__whoami", {})).ok
        before = await stats(url)
        assert before["authorizations"] == 1
        assert before["resources"] == [url], "the resource parameter names the server (RFC 8707)"
        auth_file = home.data_home / "mcp-auth.json"
        assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600
        stored = json.loads(auth_file.read_text())
        assert stored["o"]["tokens"]["access_token"]
        async with host_for(home, {"url": url}) as again:
            assert again.status().servers[0].state == "connected"
            assert (await again.call("o__whoami", {})).ok
        assert (await stats(url))["authorizations"] == 1, "the next start connected without a browser"


async def test_auth3_an_expired_access_token_is_refreshed_silently_on_the_next_start(home: Home) -> None:
    async with auth_server() as url:
        async with host_for(home, {"url": url}) as host:
            await sign_in(host)
            assert host.status().servers[0].state == "connected"
        # An hour and a second go by: the server no longer takes the access token, and the
        # stored one counts as expired, stamped by a store whose clock reads that much earlier.
        assert await expire_access_tokens(url) == 1
        earlier = AuthStore(home.data_home / AUTH_FILE, clock=lambda: time.time() - DEFAULT_ACCESS_TTL - 1)
        stored = await ServerTokens(earlier, "o").get_tokens()
        assert stored is not None
        await ServerTokens(earlier, "o").set_tokens(stored)
        left = await ServerTokens(AuthStore(home.data_home / AUTH_FILE), "o").seconds_left()
        assert left is not None
        assert left < 0
        async with host_for(home, {"url": url}) as again:
            assert again.status().servers[0].state == "connected", again.status().servers[0].reason
            assert (await again.call("o__whoami", {})).ok
        counts = await stats(url)
    assert counts["authorizations"] == 1, "no new sign-in"
    assert counts["refreshes"] >= 1
    assert counts["expired_rejections"] == 0, "refreshed before the expired token was sent"


async def test_auth2_a_callback_without_this_sign_ins_state_is_refused(home: Home) -> None:
    async with auth_server() as url, host_for(home, {"url": url}) as host:
        server = host.status().servers[0]
        assert server.sign_in_url is not None
        location = await browse(server.sign_in_url)
        forged = location.split("state=")[0] + "state=not-the-one"
        refused = await follow(forged)
        assert refused.status_code == 400
        assert host.status().servers[0].state == "waiting_for_sign_in"
        # A person on a machine with no browser pastes the real address back.
        assert host.complete_sign_in("o", location)
        with anyio.fail_after(20):
            await host.wait_until(lambda h: h.status().servers[0].state == "connected")


async def test_auth2_no_sign_in_without_pkce_s256(home: Home) -> None:
    async with auth_server("--no-pkce-advert") as url, host_for(home, {"url": url}) as host:
        server = host.status().servers[0]
    assert server.state == "failed"
    assert server.reason is not None
    assert "PKCE" in server.reason
    assert server.sign_in_url is None


async def test_auth3_a_server_whose_headers_carry_a_credential_is_never_signed_in_to(home: Home) -> None:
    async with (
        auth_server() as url,
        host_for(home, {"url": url, "headers": {"Authorization": "Bearer not-a-token"}}) as host,
    ):
        server = host.status().servers[0]
    assert server.state == "failed"
    assert server.reason is not None
    assert "401" in server.reason
    assert server.sign_in_url is None


async def test_auth2_mcpyard_login_takes_a_pasted_redirect_and_logout_forgets(home: Home) -> None:
    import subprocess
    import sys

    async with auth_server() as url:
        config = str(home.write_config({"o": {"url": url}}))
        login = await anyio.open_process(
            [sys.executable, "-m", "mcpyard", "login", "o", "--mcp-config", config],
            cwd=home.workspace,
            env={**home.environ, "BROWSER": "true"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        async with login:
            assert login.stderr is not None
            assert login.stdin is not None
            assert login.stdout is not None
            seen = b""
            with anyio.fail_after(30):
                while b"sign in to o at: " not in seen or not seen.split(b"sign in to o at: ")[1].count(b"\n"):
                    seen += await login.stderr.receive()
            page = seen.split(b"sign in to o at: ")[1].split(b"\n")[0].decode()
            location = await browse(page)
            await login.stdin.send(location.encode() + b"\n")
            with anyio.fail_after(30):
                code = await login.wait()
            out = await login.stdout.receive() if code == 0 else b""
        assert code == 0, seen.decode()
        assert b"signed in to o" in out
        done = await anyio.run_process([sys.executable, "-m", "mcpyard", "logout", "o"], env=home.environ, check=False)
        assert done.returncode == 0, done.stderr.decode()
        assert "o" not in json.loads((home.data_home / "mcp-auth.json").read_text())
