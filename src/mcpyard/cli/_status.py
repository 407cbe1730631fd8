"""`mcpyard status` and `mcpyard tools`: the status page and the catalog (CLI-1, API-2)."""

from __future__ import annotations

from typing import Annotated

import typer

from mcpyard.cli._common import Globals, fail, open_host, print_json, run, show_status, with_globals
from mcpyard.cli._render import render_tool, render_tools

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
def tools(
    opts: Globals,
    name: Annotated[
        str | None, typer.Argument(help="One tool's model-facing name: show it in full.", show_default=False)
    ] = None,
) -> None:
    """List the tools as the model sees them (names, servers, hints, descriptions), or show one in full."""

    async def main() -> None:
        async with open_host(opts) as host:
            listed = host.tools()
        if name is None:
            if opts.json:
                print_json({"tools": [tool.to_json() for tool in listed]})
            else:
                render_tools(listed, opts.console(), rich=opts.rich)
            return
        found = next((tool for tool in listed if tool.name == name), None)
        if found is None:
            close = [tool.name for tool in listed if name.lower() in tool.name.lower()][:5]
            hint = f"; did you mean {', '.join(close)}?" if close else "; `mcpyard tools` lists them"
            fail(f"no tool {name!r} is offered{hint}")
        if opts.json:
            print_json(found.to_json())
        else:
            render_tool(found, opts.console(), rich=opts.rich)

    run(main)
