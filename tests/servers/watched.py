"""Fixture server with resources that change on request, announced through `subscriptions/listen`.

Run as `python tests/servers/watched.py` (stdio). It lists `test://watched/a` and
`test://watched/b`; `touch(uri)` says that resource changed, to every listen stream whose filter
names it (the 2026-07-28 way; mcpyard speaks that era to it).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer


def build_server() -> MCPServer:
    server = MCPServer("watched")

    @server.resource("test://watched/a", name="a", description="A resource that changes when touched.")
    def resource_a() -> str:
        return "a"

    @server.resource("test://watched/b", name="b", description="Another resource that changes when touched.")
    def resource_b() -> str:
        return "b"

    @server.tool(description="Announces that a resource changed.")
    async def touch(ctx: Context, uri: str) -> str:
        await ctx.notify_resource_updated(uri)
        return f"touched {uri}"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
