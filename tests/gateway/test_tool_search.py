"""MOD-4 through the gateway: `serve --tool-search` offers `find_tools`; a client finds a tool, hears that its list
changed, sees the tool listed and calls it; a shared tool not found yet runs all the same; an unshared tool is never
found. `mcpyard serve` as a process over stdio, driven by the SDK's client.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio


def gateway(home: Home, config: str, *extra: str) -> StdioServerParameters:
    command, *args = mcpyard_command(home.environ, "serve", "--tool-search", "--mcp-config", config, *extra)
    return StdioServerParameters(command=command, args=args, env=home.environ, cwd=str(home.workspace))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_mod4_a_gateway_client_finds_a_tool_hears_of_it_and_calls_it(home: Home) -> None:
    servers = {"t": fixture_server("turns"), "b": fixture_server("basic")}
    config = str(home.write_config(servers, mode="auto", tool_search={"mode": "always"}))
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = gateway(home, config, "--share-all")
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        first = [tool.name for tool in (await client.list_tools()).tools]
        assert first == ["find_tools", "read_result"]
        added = await client.call_tool("b__add", {"a": 20, "b": 22})  # not found yet: it runs all the same
        assert "\n42\n" in text_of(added)
        found = await client.call_tool("find_tools", {"query": "what is the weather in a city", "limit": 3})
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None
        assert found.structured_content["found"][0] == "t__lookup"
        with anyio.fail_after(15):
            await changed.wait()
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed[0] == "find_tools"
        assert "t__lookup" in listed
        weather = await client.call_tool("t__lookup", {"city": "Oslo"})
        assert "sunny in Oslo" in text_of(weather)
        again = [tool.name for tool in (await client.list_tools()).tools]
        assert again == listed, "the same list, in the same order, on every call"


async def test_mod4_a_gateway_client_never_finds_a_tool_that_is_not_shared(home: Home) -> None:
    servers = {"t": {**fixture_server("turns"), "shared_tools": ["lookup"]}, "b": fixture_server("basic")}
    config = str(home.write_config(servers, mode="auto", tool_search={"mode": "always"}))
    async with Client(gateway(home, config)) as client:
        found = await client.call_tool("find_tools", {"query": "add two numbers together", "limit": 20})
        assert found.structured_content is not None
        assert all(not name.startswith("b__") for name in found.structured_content["found"])
        assert "b__add" not in text_of(found)
