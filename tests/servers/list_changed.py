"""Fixture server whose tool list changes at runtime and says so, in both protocol eras.

Run as `python tests/servers/list_changed.py [--late-tool NAME]
[--transport stdio|streamable-http] [--port N]`. `add_tool(name)` registers a tool that
answers `I am <name>`, then announces the change: on handshake-era connections with
`notifications/tools/list_changed` on the connection's stream, on 2026-07-28 connections
through `subscriptions/listen` streams. `describe(name, description)` gives an added tool a
new description (a new definition under the same name) and announces it the same way.
`--late-tool NAME` adds a tool that is listed from the second tools/list on, without any
announcement (a server that changed before the client could hear about it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

ADD_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}},
    "required": ["name"],
}
DESCRIBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}, "description": {"type": "string"}},
    "required": ["name", "description"],
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class ListChangedServer(Server[Any]):
    """A low-level server that advertises `tools.listChanged` on handshake-era connections too."""

    # MCPServer always advertises listChanged false in the handshake era; this override
    # is why the fixture is built on the low-level Server.
    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def build_server(*, late_tool: str | None = None) -> ListChangedServer:
    """Build the server; `late_tool` is listed only from the second tools/list on."""
    bus = InMemorySubscriptionBus()
    added: list[str] = []
    described: dict[str, str] = {}
    lists_served = 0

    def current_names() -> list[str]:
        late = [late_tool] if late_tool is not None and lists_served > 1 else []
        return ["add_tool", "describe", *added, *late]

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        nonlocal lists_served
        lists_served += 1
        tools = [
            Tool(
                name="add_tool",
                description="Register a new tool with this name and announce the change.",
                input_schema=ADD_TOOL_SCHEMA,
                annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
            ),
            Tool(
                name="describe",
                description="Give an added tool a new description and announce the change.",
                input_schema=DESCRIBE_SCHEMA,
                annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
            ),
        ]
        tools += [
            Tool(
                name=name,
                description=described.get(name, f"Tool {name}, added at runtime."),
                input_schema=EMPTY_SCHEMA,
                annotations=ToolAnnotations(read_only_hint=True),
            )
            for name in current_names()[2:]
        ]
        return ListToolsResult(tools=tools)

    async def announce(ctx: ServerRequestContext[Any]) -> None:
        # Handshake era: goes out on the connection's stream (the SDK drops it at 2026-07-28).
        await ctx.session.send_tool_list_changed()
        # 2026-07-28: reaches clients that opened a subscriptions/listen stream.
        await bus.publish(ToolsListChanged())

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name == "add_tool":
            name = str((params.arguments or {}).get("name", ""))
            if not name or name in current_names():
                return CallToolResult(content=[TextContent(text=f"cannot add tool {name!r}")], is_error=True)
            added.append(name)
            await announce(ctx)
            return CallToolResult(content=[TextContent(text=f"added tool {name}")])
        if params.name == "describe":
            name = str((params.arguments or {}).get("name", ""))
            if name not in added:
                return CallToolResult(content=[TextContent(text=f"no added tool {name!r}")], is_error=True)
            described[name] = str((params.arguments or {}).get("description", ""))
            await announce(ctx)
            return CallToolResult(content=[TextContent(text=f"described tool {name}")])
        if params.name in current_names():
            return CallToolResult(content=[TextContent(text=f"I am {params.name}")])
        return CallToolResult(content=[TextContent(text=f"unknown tool {params.name!r}")], is_error=True)

    return ListChangedServer(
        "list-changed",
        version="1.0",
        instructions="Fixture server whose tools change at runtime.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


async def _serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--late-tool", metavar="NAME", help="a tool listed from the second tools/list on")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve until the transport closes."""
    args = parser().parse_args(argv)
    server = build_server(late_tool=args.late_tool)
    transport: Literal["stdio", "streamable-http"] = args.transport
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    else:
        # Run as a script: put the repository root on the path to reach the shared helper.
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.servers._listen import serve

        serve(server.streamable_http_app(host=args.host), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
