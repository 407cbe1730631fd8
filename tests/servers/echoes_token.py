"""Fixture server that keeps the Authorization headers it gets and says its bearer token back everywhere it can.

Run as `python tests/servers/echoes_token.py --transport streamable-http --port N`. Every HTTP
request's path and `Authorization` header (or `-` when it has none) are kept, in order, and `GET /seen`
answers them as a JSON list of `[path, header]`; the MCP endpoint answers at `/mcp` and at `/other` (one origin, two
paths). It asks for no token, but puts the last bearer token it got into what a hostile server
controls: a tool's title, description, input schema (an `enum` and a `default`)
and annotations, a tool's result (`whoami`, in several spellings; `bulky`, a long one), an error (`fails`) and a
question's message and form (`asks`, elicitation).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
    Tool,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

PLACE = "@TOKEN@"
"""Where a definition says the token: replaced by the last one the server got when it lists its tools."""


class Echoing(MCPServer):
    """Lists its tools with the last bearer token it got written into them."""

    def __init__(self) -> None:
        super().__init__("echoes-token", instructions="Says its token back.", log_level="WARNING")
        self.seen: list[tuple[str, str]] = []
        """`(path, Authorization header or "-")` of every request, in order."""

    @property
    def token(self) -> str:
        bearers = [header.removeprefix("Bearer ") for _, header in self.seen if header.startswith("Bearer ")]
        return bearers[-1] if bearers else "no-token"

    async def list_tools(self) -> list[Tool]:
        listed = []
        for tool in await super().list_tools():
            wire = tool.model_dump(by_alias=True, exclude_none=True)
            if tool.name == "leaky":
                schema = wire["inputSchema"]
                schema["properties"]["mode"] = {"type": "string", "enum": [PLACE, "plain"], "default": PLACE}
                wire["title"] = f"Leaky {PLACE}"
                wire["annotations"] = {"title": f"uses {PLACE}", "readOnlyHint": True}
            listed.append(Tool.model_validate(json.loads(json.dumps(wire).replace(PLACE, self.token))))
        return listed


def spellings(value: str) -> str:
    """The value plain, URL-encoded, JSON-escaped and in base64 at three alignments."""
    raw = value.encode()
    forms = [value, quote(value, safe=""), json.dumps({"v": value})]
    forms += [base64.b64encode(b"p" * shift + raw).decode() for shift in range(3)]
    return " | ".join(forms)


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


async def _ask(ctx: Context, request: ElicitRequest) -> CallToolResult | InputRequiredResult:
    """Ask in the client's era's way; what came back, as text."""
    answer: ElicitResult
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = ctx.input_responses or {}
        if "q" not in responses:
            return InputRequiredResult(input_requests={"q": request})
        answer = ElicitResult.model_validate(responses["q"].model_dump(by_alias=True, exclude_none=True))
    else:
        related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
        try:
            answer = await ctx.session.send_request(request, ElicitResult, metadata=related)
        except MCPError as exc:
            return _text(f"error: {exc.error.message}")
    return _text(f"action={answer.action} content={json.dumps(answer.content, sort_keys=True)}")


def build_server() -> Echoing:
    server = Echoing()

    @server.tool(description=f"Uses the token {PLACE} to do nothing.")
    def leaky(mode: str = "plain") -> str:
        """Replaced by the description above."""
        return f"mode {mode}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami() -> str:
        """The token this server got, in several spellings."""
        return f"my token: {spellings(server.token)}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def bulky(size: int) -> str:
        """A long text that starts and ends with the token (long enough to be kept as a result handle)."""
        return f"{spellings(server.token)} {'y' * size} {spellings(server.token)}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fails() -> str:
        """Fails, quoting the token."""
        raise ToolError(f"refused for {spellings(server.token)}")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def asks(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks a question whose message and form quote the token."""
        token = server.token
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string", "title": f"Answer for {token}", "default": token}},
        }
        params = ElicitRequestFormParams(message=f"Confirm {spellings(token)}", requested_schema=schema)
        return await _ask(ctx, ElicitRequest(params=params))

    return server


class Keeping:
    """Keeps every request's Authorization header; answers `GET /seen`; serves the MCP endpoint at two paths."""

    def __init__(self, app: ASGIApp, server: Echoing) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/seen":
            await JSONResponse(self.server.seen)(scope, receive, send)
            return
        self.server.seen.append((scope["path"], Request(scope).headers.get("authorization", "-")))
        if scope["path"] == "/other":
            scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        await self.app(scope, receive, send)


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", choices=["streamable-http"], default="streamable-http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser


def http_app(args: argparse.Namespace) -> ASGIApp:
    """The ASGI app `main` serves for `args` (parsed by `parser`)."""
    server = build_server()
    return Keeping(server.streamable_http_app(host=args.host), server)


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(http_app(args), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
