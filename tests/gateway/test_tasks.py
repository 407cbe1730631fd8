"""CALL-8 through the gateway: a client of either era calls a tool its server answers with a task, and the gateway
runs the task to its end (polling it, asking the client's question on the way) and answers with the result (a client
that declares the extension gets a task instead: tests/gateway/test_task_handles.py).
`mcpyard serve` as a process over stdio, driven by the SDK's client.
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_call8_a_gateway_client_gets_a_tasks_result_and_answers_its_question(home: Home, mode: str) -> None:
    config = str(home.write_config({"t": fixture_server("tasks")}, mode="auto"))
    command, *args = mcpyard_command(home.environ, "serve", "--share-all", "--mcp-config", config)
    params = StdioServerParameters(command=command, args=args, env=home.environ, cwd=str(home.workspace))

    async def answer(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Lin"})

    async with Client(params, mode=mode, elicitation_callback=answer) as client:
        # A new-era client found the gateway with `server/discover`; a handshake-era one with `initialize`.
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        with anyio.fail_after(60):
            slow = await client.call_tool("t__slow", {"seconds": 2})
            greeted = await client.call_tool("t__ask", {})
    assert not slow.is_error, text_of(slow)
    assert "slow done after 2 s" in text_of(slow)
    assert not greeted.is_error, text_of(greeted)
    assert "hello Lin" in text_of(greeted), "the task's question reached the gateway's client"
