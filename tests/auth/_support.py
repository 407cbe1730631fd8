"""Helpers for the sign-in tests: the OAuth fixture server, its counters, a test browser, and what a person sees."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2

from mcpyard import Host
from tests.conftest import Home
from tests.servers.in_process import serve_http_in_process
from tests.servers.oauth_server import MCP_PATH, STATS_PATH


@asynccontextmanager
async def auth_server(*args: str) -> AsyncIterator[str]:
    """The OAuth fixture server with `args`; yields its MCP URL (`http://127.0.0.1:P/mcp`)."""
    async with serve_http_in_process("oauth_server", "streamable-http", args) as url:
        yield url


def issuer_of(url: str) -> str:
    """The fixture's issuer: its origin."""
    return url.removesuffix(MCP_PATH)


async def stats(url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as client:
        response = await client.get(url.replace(MCP_PATH, STATS_PATH))
        return dict(response.json())


@asynccontextmanager
async def host_for(home: Home, entry: dict[str, Any], secrets: dict[str, str]) -> AsyncIterator[Host]:
    """A host of one server `o` with the saved `secrets`, which settles before it is handed over."""
    async with home.open(home.write_config({"o": entry}), mode="auto", secrets=secrets) as host:
        yield host


async def sign_in(host: Host) -> None:
    """Follow the sign-in page like a browser (the fixture approves at once), then wait for the outcome."""
    server = host.status().servers[0]
    assert server.state == "waiting_for_sign_in", server.reason
    assert server.sign_in_url is not None
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        page = await browser.get(server.sign_in_url)
        assert page.status_code in (302, 303, 307), page.text
        await browser.get(str(page.headers["location"]))
    with anyio.fail_after(20):
        await host.wait_until(lambda h: h.status().servers[0].state in ("connected", "failed"))


def everything_shown(host: Host, home: Home) -> str:
    """What anyone may read of a host: its status as JSON (reasons, warnings) and mcp-auth.json."""
    auth = home.data_home / "mcp-auth.json"
    stored = auth.read_text() if auth.exists() else ""
    return json.dumps(host.status().to_json()) + stored
