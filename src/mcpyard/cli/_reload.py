"""`mcpyard reload` and `mcpyard trust` (CFG-6, CFG-7)."""

from __future__ import annotations

import os
from pathlib import Path

from mcpyard.cli._common import Globals, JsonOpt, McpConfigOpt, TrustOpt, WorkspaceOpt, open_host, print_json, run
from mcpyard.cli._render import render_status

__all__ = ["reload", "trust"]


def reload(
    workspace: WorkspaceOpt = None,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
    json: JsonOpt = False,
) -> None:
    """Re-read every config source and reconnect what changed, then show the status page.

    In `mcpyard shell`, `/mcp reload` does the same for the running session.
    """
    opts = Globals(workspace, mcp_config, trust, json)

    async def main() -> None:
        async with open_host(opts) as host:
            page = await host.reload()
        if opts.json:
            print_json(page.to_json())
        else:
            render_status(page, opts.console(), rich=opts.rich)

    run(main)


def trust(
    workspace: WorkspaceOpt = None,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
    json: JsonOpt = False,
) -> None:
    """Trust this workspace's .mcp.json: its servers start from now on (shows exactly what will run)."""
    from mcpyard._paths import data_home
    from mcpyard.config import TrustStore

    del mcp_config, trust
    opts = Globals(workspace, None, True, json)
    root = Path(workspace or Path.cwd()).expanduser().resolve()
    store = TrustStore(data_home(os.environ) / "trust.json")

    async def main() -> None:
        preview = load_project_preview(root)
        store.trust(root)
        if opts.json:
            print_json({"workspace": str(root), "trusted": True, "servers": preview})
            return
        console = opts.console()
        console.print(f"trusted {root}: the servers of {root / '.mcp.json'} start from now on")
        for line in preview:
            console.print(f"  {line['id']}: {line['runs']}")

    run(main)
