"""Fixture server of the new era whose listing holds tools with invalid `x-mcp-header` annotations.

Run as `python tests/servers/headers.py` (stdio). It lists `echo(text)` (a plain tool), `by_region`, whose
`region` parameter is an object (only strings, numbers and booleans may be mirrored into a header), and
`bad_token`, whose annotation is not a valid header name. The protocol (2026-07-28) says a client must
leave the last two out.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import Tool


class Annotated(MCPServer):
    """Lists two tools beside its own that no client may call."""

    async def list_tools(self) -> list[Tool]:
        listed = await super().list_tools()
        region = {"type": "object", "x-mcp-header": "Region"}
        bad = {"type": "string", "x-mcp-header": "Bad Header!"}
        return [
            *listed,
            Tool(name="by_region", input_schema={"type": "object", "properties": {"region": region}}),
            Tool(name="bad_token", input_schema={"type": "object", "properties": {"name": bad}}),
        ]


def build_server() -> MCPServer:
    server = Annotated("headers", instructions="x-mcp-header fixture server.")

    @server.tool(description="Says the text back.")
    def echo(text: str) -> str:
        return text

    return server


if __name__ == "__main__":
    build_server().run("stdio")
