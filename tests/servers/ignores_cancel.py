"""Fixture server that blocks its own event loop: it cannot honour cancellation or answer meanwhile.

Run as `python tests/servers/ignores_cancel.py` (stdio). `block(seconds)` calls
`time.sleep` on the event loop, so `notifications/cancelled`, pings and other calls wait
until it returns; `ok()` answers at once when the loop is free.
"""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


def build_server() -> MCPServer:
    """Build the server with its `block` and `ok` tools."""
    server = MCPServer("ignores-cancel", instructions="Fixture server that ignores cancellation.", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def block(seconds: float) -> str:
        """Block the whole server for `seconds` (it answers nothing, not even a cancellation, meanwhile)."""
        # The point of this fixture: a sync sleep inside the event loop, not in a worker thread.
        time.sleep(seconds)  # noqa: ASYNC251
        return f"blocked {seconds} s"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def ok() -> str:
        """Answer "ok"."""
        return "ok"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
