"""Fixture server whose results break their own promises: structured content against its outputSchema.

Run as `python tests/servers/bad_results.py` (stdio). `count` declares an outputSchema of
`{"n": integer}`; `count(good=true)` keeps it, `count(good=false)` answers `{"n": "many"}`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


def build_server() -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        tool = Tool(
            name="count",
            description="Count things; its structured result must be {n: integer}.",
            input_schema={"type": "object", "properties": {"good": {"type": "boolean"}}, "required": ["good"]},
            output_schema=OUTPUT_SCHEMA,
        )
        explode = Tool(
            name="explode",
            description="Answer with a JSON-RPC error (code -32000) quoting `text`.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            annotations=ToolAnnotations(read_only_hint=True),
        )
        return ListToolsResult(tools=[tool, explode])

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name == "explode":
            raise MCPError(-32000, f"exploded: {(params.arguments or {}).get('text')}")
        good = bool((params.arguments or {}).get("good"))
        structured: dict[str, Any] = {"n": 3} if good else {"n": "many"}
        return CallToolResult(content=[TextContent(text=str(structured))], structured_content=structured)

    return Server("bad-results", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
