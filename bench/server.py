"""The benchmark server: a minimal stdio MCP server that both sides of every benchmark talk to.

Tools: `echo(text)` (read-only), `noop()` and `blob(size)` (returns `'x' * size`).
Run as `python bench/server.py`; it serves over stdio until its stdin closes. Results are
unstructured (one text block, no output schema), so a `blob(size)` result carries the text once.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build_server() -> MCPServer:
    """The server with its three tools."""
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

    return server


if __name__ == "__main__":
    build_server().run("stdio")
