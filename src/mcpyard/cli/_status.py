"""`mcpyard status` and `mcpyard tools`: the status page and the catalog (CLI-1, API-2)."""

from __future__ import annotations

from mcpyard.cli._common import Globals, open_host, print_json, run, show_status, with_globals
from mcpyard.cli._render import render_tools

__all__ = ["status", "tools"]


@with_globals
def status(opts: Globals) -> None:
    """Connect every configured server and show its state, tools and reasons."""

    async def main() -> None:
        async with open_host(opts) as host:
            page = host.status()
        show_status(page, opts)

    run(main)


@with_globals
def tools(opts: Globals) -> None:
    """List the tools as the model sees them: names, servers, hints, descriptions."""

    async def main() -> None:
        async with open_host(opts) as host:
            listed = host.tools()
        if opts.json:
            print_json({"tools": [tool.to_json() for tool in listed]})
        else:
            render_tools(listed, opts.console(), rich=opts.rich)

    run(main)
