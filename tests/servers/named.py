"""Fixture server listing the tools named on its command line, none of them annotated.

Run as `python tests/servers/named.py NAME [NAME …]` (stdio). Each tool answers a call with
`called <NAME> on <pid>`, so a test can tell which server ran it. With `NAMED_DESCRIPTION_FILE`
set, every tool's description is that file's text (a definition that changes between runs), and
with `NAMED_STARTED_FILE` set, the server writes its pid there once it starts. With `NAMED_TOOLS_FILE`
set, the tools are the names in that file (read at each listing: tools removed between runs), and a
tool named `exit` ends the server when called.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool


def build_server(names: list[str]) -> Server[Any]:
    """Build the server listing `names`."""
    described = os.environ.get("NAMED_DESCRIPTION_FILE")
    about = Path(described).read_text(encoding="utf-8") if described else None

    listed = os.environ.get("NAMED_TOOLS_FILE")

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        now = (await anyio.Path(listed).read_text(encoding="utf-8")).split() if listed else names
        return ListToolsResult(
            tools=[
                Tool(name=name, description=about or f"Tool {name}.", input_schema={"type": "object"}) for name in now
            ]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name == "exit" and listed:
            os.kill(os.getpid(), signal.SIGKILL)  # ends at once, as a crash would
        return CallToolResult(content=[TextContent(text=f"called {params.name} on {os.getpid()}")])

    return Server("named", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if started := os.environ.get("NAMED_STARTED_FILE"):
        Path(started).write_text(f"{os.getpid()}\n", encoding="ascii")
    anyio.run(_serve, build_server(sys.argv[1:]))
