"""`mcpyard status` and `mcpyard tools`: the status page and the catalog (CLI-1, API-2)."""

from __future__ import annotations

from mcpyard.cli._common import (
    Globals,
    JsonOpt,
    McpConfigOpt,
    TrustOpt,
    WorkspaceOpt,
    open_host,
    print_json,
    run,
    show_status,
)
from mcpyard.cli._render import render_tools

__all__ = ["status", "tools"]


def status(
    workspace: WorkspaceOpt = None,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
    json: JsonOpt = False,
) -> None:
    """Connect every configured server and show its state, tools and reasons."""
    opts = Globals(workspace, mcp_config, trust, json)

    async def main() -> None:
        async with open_host(opts) as host:
            page = host.status()
        show_status(page, opts)

    run(main)


def tools(
    workspace: WorkspaceOpt = None,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
    json: JsonOpt = False,
) -> None:
    """List the tools as the model sees them: names, servers, hints, descriptions."""
    opts = Globals(workspace, mcp_config, trust, json)

    async def main() -> None:
        async with open_host(opts) as host:
            listed = host.tools()
        if opts.json:
            print_json({"tools": [tool.to_json() for tool in listed]})
        else:
            render_tools(listed, opts.console(), rich=opts.rich)

    run(main)
