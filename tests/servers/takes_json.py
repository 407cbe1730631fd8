"""Fixture server whose tools take any JSON: what reaches it is what mcpyard let through, over stdio or streamable HTTP.

Run as `python tests/servers/takes_json.py [--transport stdio|streamable-http] [--port N]`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from starlette.applications import Starlette

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build_server() -> MCPServer:
    server = MCPServer("takes-json", instructions="Fixture server that takes any JSON.", log_level="WARNING")
    kept: list[str] = []

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def keep(data: dict[str, Any]) -> str:
        """Keep any JSON object; answers with it as compact JSON."""
        text = json.dumps(data, separators=(",", ":"), sort_keys=True)
        kept.append(text)
        return text

    @server.tool(annotations=READ_ONLY)
    def kept_count() -> int:
        """How many objects `keep` was given: proves what reached the server."""
        return len(kept)

    return server


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser


def http_app(args: argparse.Namespace) -> Starlette:
    """The ASGI app `main` serves for `args` (parsed by `parser`) over streamable HTTP."""
    return build_server().streamable_http_app(host=args.host)


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.transport == "stdio":
        build_server().run("stdio")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(http_app(args), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
