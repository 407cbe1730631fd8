"""`mcpyard reload` and `mcpyard trust` (CFG-6, CFG-7)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from mcpyard.cli._common import Globals, fail, open_host, print_json, run, show_status, with_globals
from mcpyard.cli._render import safe
from mcpyard.config import ServerSpec
from mcpyard.errors import UsageError

__all__ = ["project_file_given", "reload", "trust"]

PROJECT_FILE = ".mcp.json"


def _what_runs(spec: ServerSpec) -> str:
    """The exact command line or URL a server entry starts (consent shows what will run)."""
    if spec.command:
        return "runs " + shlex.join([spec.command, *spec.args])
    if spec.url:
        return f"connects to {spec.url}"
    return spec.problem or "starts nothing"


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


def project_file_given(mcp_config: Path | None, root: Path) -> bool:
    """Whether `--mcp-config` names the workspace's own `.mcp.json` (relative paths from the current folder)."""
    if mcp_config is None:
        return False
    return mcp_config.expanduser().resolve() == (root / PROJECT_FILE).resolve()


def _no_trust_needed(mcp_config: Path) -> str:
    """Why `trust --mcp-config FILE` refuses, and what to type instead."""
    given = mcp_config.expanduser().resolve()
    if given.name == PROJECT_FILE:
        how = f"to trust the workspace it belongs to, run `mcpyard trust --workspace {shlex.quote(str(given.parent))}`"
    else:
        how = "`mcpyard trust` trusts a workspace's .mcp.json: run it in that folder or give --workspace DIR"
    return f"a file given with --mcp-config needs no trust: {given} is your own configuration, always trusted; {how}"


@with_globals
def trust(opts: Globals) -> None:
    """Trust this workspace's .mcp.json: its servers start from now on (shows exactly what will run).

    A file given with --mcp-config needs no trust (it is always trusted); `trust` refuses one
    unless it is the workspace's own .mcp.json. --trust means nothing here and is ignored.
    """
    from mcpyard._paths import data_home
    from mcpyard._plan import resolve_workspace
    from mcpyard.config import TrustStore

    try:
        root = resolve_workspace(opts.workspace)
    except UsageError as exc:
        fail(str(exc))
    if opts.mcp_config is not None and not project_file_given(opts.mcp_config, root):
        fail(_no_trust_needed(opts.mcp_config))
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
        console.print(safe(f"trusted {root}: the servers of {root / PROJECT_FILE} start from now on"))
        for line in preview:
            console.print(safe(f"  {line['id']}: {line['runs']}"))

    run(main)
