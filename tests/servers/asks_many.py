"""Fixture server that asks its client many questions at once during one call (2026-07-28 input requests).

Run as `python tests/servers/asks_many.py` (stdio). `ask_many(n)` answers with an
input-required result holding `n` elicitation requests, then says how many answers came back;
`ask_then_wait(seconds)` asks one question, then says it is working (progress 0) and works that long.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, InputRequiredResult, TextContent

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def build_server() -> MCPServer:
    server = MCPServer("asks_many")

    @server.tool(description="Asks n questions at once.")
    async def ask_many(ctx: Context, n: int) -> CallToolResult | InputRequiredResult:
        answers = ctx.input_responses
        if answers:
            return CallToolResult(content=[TextContent(type="text", text=f"{len(answers)} answers")])
        params = ElicitRequestFormParams(message="ok?", requested_schema=SCHEMA)
        return InputRequiredResult(input_requests={f"q{i}": ElicitRequest(params=params) for i in range(n)})

    @server.tool(description="Asks one question, then reports progress once and works for `seconds` before it answers.")
    async def ask_then_wait(ctx: Context, seconds: float) -> CallToolResult | InputRequiredResult:
        if not ctx.input_responses:
            params = ElicitRequestFormParams(message="go?", requested_schema=SCHEMA)
            return InputRequiredResult(input_requests={"go": ElicitRequest(params=params)})
        await ctx.report_progress(0, seconds, "working")
        await anyio.sleep(seconds)
        return CallToolResult(content=[TextContent(type="text", text="done")])

    return server


if __name__ == "__main__":
    build_server().run("stdio")
