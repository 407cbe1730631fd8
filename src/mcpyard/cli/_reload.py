"""`mcpyard reload`: re-read every source and reconnect what changed (CFG-7)."""

from __future__ import annotations

from mcpyard.cli._common import Globals, open_host, run, show_status, with_globals

__all__ = ["reload"]


@with_globals
def reload(opts: Globals) -> None:
    """Re-read every config source and reconnect what changed, then show the status page.

    In `mcpyard shell`, `/mcp reload` does the same for the running session.
    """

    async def main() -> None:
        async with open_host(opts) as host:
            page = await host.reload()
        show_status(page, opts)

    run(main)
