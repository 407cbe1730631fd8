"""GW-1: a server's log messages during a call reach the calling client at the level it set, and the gateway
says nothing of its own on the way (no Python warning, which tests turn into errors)."""

from __future__ import annotations

import warnings

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from mcpyard.gateway import Gateway
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("level", "expected"), [("debug", 3), ("warning", 0)])
async def test_gw1_a_calls_log_messages_reach_its_handshake_era_client_at_the_level_it_set(
    home: Home, level: types.LoggingLevel, expected: int
) -> None:
    config = home.write_config({"conf": fixture_server("conformance_server")}, mode="auto")
    heard: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    async with home.open(config, relay_input=True) as host, anyio.create_task_group() as tg:
        gateway = Gateway(host, share_all=True)
        await tg.start(gateway.run)
        async with Client(gateway.server, mode="legacy", logging_callback=on_log) as client:
            with warnings.catch_warnings():  # the handshake era's logging, used on purpose
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level(level)
            result = await client.call_tool("conf__test_tool_with_logging", {})
        tg.cancel_scope.cancel()
    assert not result.is_error
    assert [str(p.data) for p in heard] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ][:expected]
