"""Fixture server whose tool names break the usual rules: slashes, dots, spaces, non-ASCII, 70 chars.

Run as `python tests/servers/oddnames.py` (stdio). Built on the low-level Server so the
names go out exactly as written (MCPServer accepts them too, but logs a warning for
each). `get_weather_v2` is listed as well: it collides with `get.weather/v2` once names
are sanitized. Every tool answers calls with `called <name>`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

ODD_NAMES = ("get.weather/v2", "get_weather_v2", "a" * 70, "naïve tool")


def build_server() -> Server[Any]:
    """Build the server listing `ODD_NAMES`."""

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(
            tools=[
                Tool(
                    name=name,
                    description=f"Tool named {name!r}.",
                    input_schema={"type": "object", "properties": {}},
                    annotations=ToolAnnotations(read_only_hint=True),
                )
                for name in ODD_NAMES
            ]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name not in ODD_NAMES:
            return CallToolResult(content=[TextContent(text=f"unknown tool {params.name!r}")], is_error=True)
        return CallToolResult(content=[TextContent(text=f"called {params.name}")])

    return Server("oddnames", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, build_server())
