"""GW-1, GW-4 interop: the official MCP clients list and call tools through `mcpyard serve`, over stdio and HTTP.

The clients are npm's Inspector CLI (`@modelcontextprotocol/inspector-cli`) and the TypeScript
SDK's `Client` (`@modelcontextprotocol/sdk`, driven by ts_client/client.mjs). scripts/check
installs both, pinned, in .tools/clients and exports MCPYARD_TEST_CLIENTS; a missing install
fails these tests (a skipped interop test proves nothing).

Real processes: the official clients and `mcpyard serve` as people run them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.conftest import Home, fixture_server
from tests.official_clients import TS_CLIENT, Clients, official_clients, run_client
from tests.servers.http_runner import GATEWAY_LISTENING, serve_process

pytestmark = pytest.mark.anyio


Transport = Literal["stdio", "http"]


@pytest.fixture
def clients() -> Clients:
    return official_clients()


def gateway_command(config: Path, home: Home, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mcpyard",
        "serve",
        "--share-all",
        "--mcp-config",
        str(config),
        "--workspace",
        str(home.workspace),
        *extra,
    ]


@asynccontextmanager
async def http_gateway(config: Path, home: Home) -> AsyncIterator[str]:
    async with serve_process(
        lambda port: gateway_command(config, home, "--transport", "http", "--host", "127.0.0.1", "--port", str(port)),
        lambda port: f"http://127.0.0.1:{port}/mcp",
        env=lambda port: home.environ,
        ready=GATEWAY_LISTENING,
    ) as url:
        yield url


def config_of(home: Home) -> Path:
    return home.write_config({"basic": fixture_server("basic")})


@asynccontextmanager
async def target(transport: Transport, home: Home) -> AsyncIterator[list[str]]:
    """The gateway for a client: the command that launches it (stdio) or its URL (http)."""
    config = config_of(home)
    if transport == "stdio":
        yield gateway_command(config, home)
        return
    async with http_gateway(config, home) as url:
        yield [url]


def assert_added(tools: Sequence[str], text: str, is_error: bool) -> None:
    assert "basic__add" in tools, tools
    assert not is_error, text
    assert "\n5\n" in text, text


@pytest.mark.long
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_gw1_inspector_cli_lists_and_calls_tools_through_the_gateway(
    home: Home, clients: Clients, transport: Transport
) -> None:
    async with target(transport, home) as where:
        base = [str(clients.inspector), "--cli", *where]
        if transport == "http":
            base += ["--transport", "http"]
        listed: dict[str, Any] = json.loads(
            await run_client([*base, "--method", "tools/list"], home.environ, clients.inspector_build)
        )
        called: dict[str, Any] = json.loads(
            await run_client(
                [*base, "--method", "tools/call", "--tool-name", "basic__add", "--tool-arg", "a=2", "b=3"],
                home.environ,
                clients.inspector_build,
            )
        )
    texts = [block["text"] for block in called["content"] if block.get("type") == "text"]
    assert_added([tool["name"] for tool in listed["tools"]], "\n".join(texts), bool(called.get("isError")))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_gw1_typescript_sdk_client_lists_and_calls_tools_through_the_gateway(
    home: Home, clients: Clients, transport: Transport
) -> None:
    env = {**home.environ, "MCPYARD_TEST_CLIENTS": str(clients.root)}
    async with target(transport, home) as where:
        out = await run_client([clients.node, str(TS_CLIENT), transport, *where], env, TS_CLIENT.parent)
    lines = out.strip().splitlines()
    assert lines, "the TypeScript client printed nothing"
    report: dict[str, Any] = json.loads(lines[-1])
    assert_added(report["tools"], report["text"], report["isError"])
