"""Paged fixture server: tools/list in 3 pages of 2 tools, or pages without end with `--endless`.

Run as `python tests/servers/paged.py [--endless]` (stdio). Cursors are page numbers as
strings; an unknown cursor is answered with an invalid-params error. Every listed tool
answers calls with `called <name>`.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

PAGE_COUNT = 3
"""Pages served without `--endless`."""

TOOLS_PER_PAGE = 2


def tool_names(page: int) -> list[str]:
    """Return the names of the tools on `page` (counted from 0)."""
    return [f"page{page}_{letter}" for letter in "ab"[:TOOLS_PER_PAGE]]


def _tool(name: str) -> Tool:
    return Tool(
        name=name,
        description=f"Paged fixture tool {name}.",
        input_schema={"type": "object", "properties": {}},
        annotations=ToolAnnotations(read_only_hint=True),
    )


def build_server(*, endless: bool = False) -> Server[Any]:
    """Build the paged server; with `endless`, every page points at a next one."""

    def page_of(cursor: str | None) -> int:
        if cursor is None:
            return 0
        if cursor.isdigit() and (endless or int(cursor) < PAGE_COUNT):
            return int(cursor)
        raise MCPError(INVALID_PARAMS, f"unknown cursor {cursor!r}")

    def is_known(name: str) -> bool:
        match = re.fullmatch(r"page(\d+)_[a-z]", name)
        return match is not None and name in tool_names(int(match[1])) and (endless or int(match[1]) < PAGE_COUNT)

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        page = page_of(params.cursor if params is not None else None)
        has_next = endless or page + 1 < PAGE_COUNT
        return ListToolsResult(
            tools=[_tool(name) for name in tool_names(page)],
            next_cursor=str(page + 1) if has_next else None,
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if not is_known(params.name):
            return CallToolResult(content=[TextContent(text=f"unknown tool {params.name!r}")], is_error=True)
        return CallToolResult(content=[TextContent(text=f"called {params.name}")])

    return Server("paged", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endless", action="store_true", help="every page has a nextCursor")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve over stdio until stdin closes."""
    args = parser().parse_args(argv)
    anyio.run(_serve, build_server(endless=args.endless))


if __name__ == "__main__":
    main()
