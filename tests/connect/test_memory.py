"""Servers built in this process, reached over the SDK's in-memory transport (`Host.open(connections=…)`, API-1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from mcpyard.connect import ConfiguredConnections, InMemoryServers
from tests.conftest import Home, body, fixture_server
from tests.servers import basic

pytestmark = pytest.mark.anyio

NOWHERE = {"command": "/nonexistent/mcpyard-never-started", "args": []}
"""A stdio server that cannot start: connected, it must have been reached some other way."""


@pytest.mark.parametrize("connections", ["in_memory", "configured"])
async def test_api1_a_server_in_the_table_is_reached_in_memory_and_never_started(home: Home, connections: str) -> None:
    """Its configured command is never run; without the table, the same configuration fails to start."""
    config = home.write_config({"m": NOWHERE})
    table = (
        InMemoryServers({"m": lambda: basic.build_server(name="m")})
        if connections == "in_memory"
        else ConfiguredConnections()
    )
    async with home.open(config, connections=table) as host:
        (server,) = host.status().servers
        if connections == "configured":
            assert server.state == "failed"
            return
        assert (server.state, server.transport) == ("connected", "stdio")
        result = await host.call("m__echo", {"text": "in memory"})
        assert (result.ok, body(result)) == (True, "in memory")


async def test_api1_a_server_not_in_the_table_is_reached_as_configured(home: Home) -> None:
    """The process runs in the workspace; the in-memory one runs where the tests do."""
    config = home.write_config({"p": fixture_server("basic"), "m": fixture_server("basic")})
    table = InMemoryServers({"m": basic.build_server})
    async with home.open(config, connections=table) as host:
        assert {s.id: s.state for s in host.status().servers} == {"p": "connected", "m": "connected"}
        assert Path(body(await host.call("p__cwd", {}))) == home.workspace.resolve()
        assert Path(body(await host.call("m__cwd", {}))) == Path.cwd()


async def test_api1_each_connection_builds_a_new_server(home: Home) -> None:
    """A restart (here: a changed definition on reload) meets a fresh server, as a new process would."""
    built: list[MCPServer] = []

    def build() -> MCPServer:
        built.append(basic.build_server())
        return built[-1]

    config = home.write_config({"m": NOWHERE})
    async with home.open(config, mode="auto", connections=InMemoryServers({"m": build})) as host:
        assert (await host.call("m__bump", {})).ok
        assert body(await host.call("m__call_count", {})) == "1"
        config.write_text(json.dumps({"mcpServers": {"m": {**NOWHERE, "args": ["--changed"]}}}), encoding="utf-8")
        await host.reload()
        assert len(built) == 2
        assert body(await host.call("m__call_count", {})) == "0"
