"""Fixture server for agent turns: `together` (calls asked at once meet there), `lookup`, `note`, `wipe`, `secret`.

Run as `python tests/servers/turns.py` (stdio).

- `together(count)`: returns only once `count` calls of it are in flight, so calls run one after
  another never return (a test bounds them) and calls run concurrently do;
- `lookup(city)`: read-only; `note(text)`: changes what the server holds (asks in `ask` mode);
- `wipe()`: destructive; `secret()`: returns the value of `TURNS_SECRET` (redacted by the host).
"""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build_server() -> MCPServer:
    server = MCPServer("turns", instructions="Turn fixture server.", version="1.0", log_level="WARNING")
    arrived = 0
    changed = anyio.Event()
    notes: list[str] = []

    @server.tool(annotations=READ_ONLY)
    async def together(count: int) -> str:
        """Wait until `count` calls of this tool are in flight, then return."""
        nonlocal arrived, changed
        arrived += 1
        changed.set()
        changed = anyio.Event()
        while arrived < count:
            await changed.wait()
        return f"met {count}"

    @server.tool(annotations=READ_ONLY)
    def lookup(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def note(text: str) -> str:
        """Keep a note."""
        notes.append(text)
        return f"noted: {text} ({len(notes)} notes)"

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def wipe() -> str:
        """Forget every note."""
        notes.clear()
        return "wiped"

    @server.tool(annotations=READ_ONLY)
    def secret() -> str:
        """Say the secret the server was given."""
        return f"the secret is {os.environ.get('TURNS_SECRET', '')}"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
