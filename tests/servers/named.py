"""Fixture server listing the tools named on its command line, none of them annotated.

Run as `python tests/servers/named.py NAME [NAME …]` (stdio). Each tool answers a call with
`called <NAME> on <pid>`, so a test can tell which server ran it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool


def build_server(names: list[str]) -> Server[Any]:
    """Build the server listing `names`."""

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(
            tools=[Tool(name=name, description=f"Tool {name}.", input_schema={"type": "object"}) for name in names]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(text=f"called {params.name} on {os.getpid()}")])

    return Server("named", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, build_server(sys.argv[1:]))
