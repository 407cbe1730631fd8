"""The benchmark server: a minimal stdio MCP server that both sides of every benchmark talk to.

Tools:
- `echo(text)` (read-only): returns the text;
- `noop()` (no annotations): returns nothing;
- `blob(size)` (read-only): returns `'x' * size` (large results);
- `peek(key)` (read-only, not idempotent): returns `value of <key>`; mcpyard never caches it;
- `lookup(key)` (read-only and idempotent): the same body as `peek`; mcpyard may answer it from its cache.

Run as `python bench/server.py`; it serves over stdio until its stdin closes. With `--port P`
it serves streamable HTTP on `http://127.0.0.1:P/mcp` instead (the SDK's defaults: stateful,
SSE responses) until it is interrupted. Results are unstructured (one text block, no output
schema), so a `blob(size)` result carries the text once.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
READ_ONLY_IDEMPOTENT = ToolAnnotations(read_only_hint=True, idempotent_hint=True)


def value_of(key: str) -> str:
    """What `peek(key)` and `lookup(key)` return."""
    return f"value of {key}"


def build_server() -> MCPServer:
    """The server with its tools."""
    server = MCPServer("bench", version="1.0", log_level="WARNING")

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(structured_output=False)
    def noop() -> None:
        """Do nothing."""

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def blob(size: int) -> str:
        """Return `size` characters of 'x' (large results)."""
        return "x" * size

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def peek(key: str) -> str:
        """Return the value of a key (read-only, not idempotent: never cached)."""
        return value_of(key)

    @server.tool(annotations=READ_ONLY_IDEMPOTENT, structured_output=False)
    def lookup(key: str) -> str:
        """Return the value of a key (read-only and idempotent: may be cached)."""
        return value_of(key)

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description="The benchmark MCP server: stdio, or streamable HTTP with --port.")
    parser.add_argument("--port", type=int, help="serve streamable HTTP on 127.0.0.1:PORT instead of stdio")
    args = parser.parse_args()
    if args.port is None:
        build_server().run("stdio")
    else:
        build_server().run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
