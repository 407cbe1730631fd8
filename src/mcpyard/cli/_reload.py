"""`mcpyard reload` and `mcpyard trust` (CFG-6, CFG-7)."""

from __future__ import annotations

import os
import shlex

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
from mcpyard.cli._render import safe
from mcpyard.config import ServerSpec

__all__ = ["reload", "trust"]


def _what_runs(spec: ServerSpec) -> str:
    """The exact command line or URL a server entry starts (consent shows what will run)."""
    if spec.command:
        return "runs " + shlex.join([spec.command, *spec.args])
    if spec.url:
        return f"connects to {spec.url}"
    return spec.problem or "starts nothing"


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
        show_status(page, opts)

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
    from mcpyard._plan import resolve_workspace

    root = resolve_workspace(workspace)
    store = TrustStore(data_home(os.environ) / "trust.json")

    async def main() -> None:
        import anyio

        from mcpyard._paths import config_home
        from mcpyard._plan import read_config

        config = await anyio.to_thread.run_sync(
            lambda: read_config(
                workspace=root,
                config_file=None,
                trust_project=True,
                environ=os.environ,
                config_home=config_home(os.environ),
                data_home=data_home(os.environ),
                secrets={},
            )
        )
        preview = [{"id": spec.id, "runs": _what_runs(spec)} for spec in config.servers if spec.source == "project"]
        await anyio.to_thread.run_sync(store.trust, root)
        if opts.json:
            print_json({"workspace": str(root), "trusted": True, "servers": preview})
            return
        console = opts.console()
        console.print(safe(f"trusted {root}: the servers of {root / '.mcp.json'} start from now on"))
        for line in preview:
            console.print(safe(f"  {line['id']}: {line['runs']}"))

    run(main)
