"""GW-1, GW-3: a server's log messages sent between calls reach the gateway's handshake-era clients that set a
level, at that level; npm's server-everything logs every 5 s once asked to.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from mcpyard.gateway import Gateway
from tests.conftest import Home

pytestmark = pytest.mark.anyio


async def test_gw1_log_messages_between_calls_reach_a_handshake_era_client_at_its_level(
    home: Home, everything: Path
) -> None:
    config = home.write_config({"ev": {"command": str(everything), "args": ["stdio"]}}, mode="auto")
    heard: list[types.LoggingMessageNotificationParams] = []
    after_the_call = anyio.Event()
    call_done = False

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)
        if call_done:
            after_the_call.set()

    async with home.open(config, relay_input=True) as host, anyio.create_task_group() as tg:
        gateway = Gateway(host, share_all=True)
        await tg.start(gateway.run)
        async with Client(gateway.server, mode="legacy", logging_callback=on_log) as client:
            with warnings.catch_warnings():  # the handshake era's logging, used on purpose
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("warning")
            toggled = await client.call_tool("ev__toggle-simulated-logging", {})
            assert not toggled.is_error
            call_done = True
            with anyio.fail_after(60):  # the server logs every 5 s, at a random level: some reach "warning"
                await after_the_call.wait()
            await client.call_tool("ev__toggle-simulated-logging", {})  # and stop it
        tg.cancel_scope.cancel()
    levels = ("warning", "error", "critical", "alert", "emergency")
    assert all(params.level in levels for params in heard), [p.level for p in heard]
    assert all("-level message" in str(params.data) or "level-message" in str(params.data) for params in heard)
