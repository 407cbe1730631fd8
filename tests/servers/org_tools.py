"""Fixture server for the organization service: tools of every kind, a bearer token, a definition that moves.

Run as `python tests/servers/org_tools.py --transport streamable-http --port N [--token T] [--definitions FILE]`.
With `--token`, every HTTP request must carry `Authorization: Bearer T` (401 otherwise), and
`whoami` answers with the header it got, as a leaky server would. With `--definitions FILE`,
each listing reads FILE (JSON: `{"lookup": "new description", "drop": ["write"]}`), so a test
can change a tool's definition or make the server stop listing one between two refreshes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Tool, ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

READ_ONLY = ToolAnnotations(read_only_hint=True)


class Moving(MCPServer):
    """Lists its tools as the definitions file says at that moment."""

    def __init__(self, definitions: Path | None) -> None:
        super().__init__("org-tools", instructions="Fixture server for the organization service.", log_level="WARNING")
        self.definitions_file = definitions

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        if self.definitions_file is None or not self.definitions_file.exists():
            return tools
        wanted: dict[str, Any] = json.loads(self.definitions_file.read_text(encoding="utf-8"))
        dropped = set(wanted.get("drop", ()))
        kept = [tool for tool in tools if tool.name not in dropped]
        return [
            tool.model_copy(update={"description": wanted[tool.name]})
            if isinstance(wanted.get(tool.name), str)
            else tool
            for tool in kept
        ]


def build_server(definitions: Path | None) -> MCPServer:
    server = Moving(definitions)
    written: list[str] = []

    @server.tool(annotations=READ_ONLY)
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def write(note: str) -> str:
        """Write a note."""
        written.append(note)
        return f"wrote {note}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def slow_write(note: str, seconds: float) -> str:
        """Write a note after `seconds`: a call long enough to stop a replica in the middle of."""
        await anyio.sleep(min(seconds, 60.0))
        written.append(note)
        return f"wrote {note}"

    @server.tool(annotations=READ_ONLY)
    async def hang() -> str:
        """Never answer: a server that hangs on a call."""
        await anyio.sleep_forever()
        return "never"

    @server.tool(annotations=READ_ONLY)
    def writes() -> int:
        """How many notes were written: proves a call ran once."""
        return len(written)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def destroy(target: str) -> str:
        """Destroy something."""
        return f"destroyed {target}"

    @server.tool(annotations=READ_ONLY)
    def big(size: int) -> str:
        """A text of `size` characters."""
        return "y" * size

    @server.tool(annotations=READ_ONLY)
    def whoami(ctx: Context) -> str:
        """The Authorization header this request came with."""
        headers = ctx.headers or {}
        return f"authorization: {headers.get('authorization', '')}"

    return server


class RequireToken:
    """Every request must carry the bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and Request(scope).headers.get("authorization") != self.expected:
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", choices=["streamable-http"], default="streamable-http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token")
    parser.add_argument("--definitions", type=Path)
    args = parser.parse_args(argv)
    server = build_server(args.definitions)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    app: ASGIApp = server.streamable_http_app(host=args.host)
    if args.token:
        app = RequireToken(app, args.token)
    serve(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
