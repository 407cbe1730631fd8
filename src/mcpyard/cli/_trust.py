"""`mcpyard trust`: show what a workspace's .mcp.json runs, ask, and record exactly that (CFG-6)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcpyard.cli._common import Globals, environ, fail, print_json, with_globals
from mcpyard.cli._render import safe
from mcpyard.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from mcpyard.config import ProjectFile, ProjectServer, ProjectTrust

__all__ = ["EXIT_DECLINED", "EXIT_NOT_CONFIRMED", "project_file_given", "trust"]

PROJECT_FILE = ".mcp.json"
EXIT_DECLINED = 1
"""Asked on a terminal, the answer was not yes: nothing was recorded."""
EXIT_NOT_CONFIRMED = 2
"""No terminal to ask on and no --yes: nothing was recorded."""

_YES = ("y", "yes")


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
def trust(
    opts: Globals,
    yes: Annotated[bool, typer.Option("--yes", help="Trust the servers shown without asking (for scripts).")] = False,
) -> None:
    """Show what this workspace's .mcp.json runs, ask, and trust exactly that.

    Shows each server as the file writes it: its command line (and folder) or URL, the
    ${VAR} references it reads and the env names it sets. Then asks on a terminal (y/N);
    --yes answers for a script. Without a terminal and without --yes it shows the same and
    records nothing. Trust covers what was shown: a server added or changed later (command,
    args, env names, cwd, url, the variables it reads) does not start until you trust it
    again; one removed is forgotten.

    When everything is trusted already and nothing changed, it says so and asks nothing.
    Exit codes: 0 trusted; 1 you answered no; 2 no terminal and no --yes, no .mcp.json, or
    an error. A file given with --mcp-config needs no trust (it is always trusted); `trust`
    refuses one unless it is the workspace's own .mcp.json. --trust means nothing here.
    """
    from mcpyard._paths import data_home, trust_file
    from mcpyard._plan import resolve_workspace
    from mcpyard.config import TrustStore, read_project

    try:
        root = resolve_workspace(opts.workspace)
    except UsageError as exc:
        fail(str(exc))
    if opts.mcp_config is not None and not project_file_given(opts.mcp_config, root):
        fail(_no_trust_needed(opts.mcp_config))
    store = TrustStore(trust_file(data_home(environ())))
    try:
        project = read_project(root)
    except ConfigError as exc:
        fail(f"{exc}; nothing was recorded")
    if project is None:
        fail(f"there is no {PROJECT_FILE} in {root}: nothing to trust")
    recorded = store.record(root)
    rows = [_row(server, recorded) for server in project.servers]
    if not opts.json:
        _show(project, rows, opts)
    interactive = sys.stdin.isatty()
    current = recorded is not None and not recorded.legacy and recorded.servers == project.digests()
    trusted = current or _confirmed(project, yes=yes, interactive=interactive, json=opts.json)
    if trusted and not current:
        try:
            store.trust(root, project.digests())
        except ConfigError as exc:
            fail(str(exc))
    if opts.json:
        print_json({"workspace": str(root), "project_file": str(project.path), "trusted": trusted, "servers": rows})
    if trusted:
        if not opts.json:
            line = f"{root} is trusted already: nothing changed since" if current else _trusted_line(root, project)
            opts.console().print(safe(line))
        return
    if not interactive:
        fail(
            "nothing was recorded: there is no terminal to confirm on; run `mcpyard trust` on a terminal, "
            "or re-run with --yes to trust the servers shown",
            EXIT_NOT_CONFIRMED,
        )
    if not opts.json:
        opts.console().print(safe(f"nothing was recorded: the servers of {project.path} stay untrusted"))
    raise typer.Exit(EXIT_DECLINED)


def _confirmed(project: ProjectFile, *, yes: bool, interactive: bool, json: bool) -> bool:
    """--yes, or a yes typed on the terminal; nothing to run needs no answer."""
    if yes or not project.servers:
        return True
    if not interactive:
        return False
    count = len(project.servers)
    them = "this server" if count == 1 else f"these {count} servers"
    question = f"Trust {them}? They start from now on; one added or changed later asks again. [y/N] "
    # The question goes where a person reads it: stdout on a terminal, else stderr (stdout may be JSON or a pipe).
    stream = sys.stdout if sys.stdout.isatty() and not json else sys.stderr
    stream.write(question)
    stream.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in _YES


def _row(server: ProjectServer, recorded: ProjectTrust | None) -> dict[str, Any]:
    change, parts = server.change(recorded)
    return {
        "id": server.label,
        "runs": server.runs,
        "reads": list(server.reads),
        "env_names": list(server.env_names),
        "inherits": server.inherits if server.inherits == "*" else list(server.inherits),
        "enabled": server.enabled,
        "change": change,
        "changed": list(parts),
    }


def _show(project: ProjectFile, rows: list[dict[str, Any]], opts: Globals) -> None:
    console = opts.console()
    err = opts.console(stderr=True)
    for warning in project.warnings:
        err.print(f"warning: {safe(warning)}")
    if not rows:
        return
    console.print(safe(f"{project.path} starts these servers (as written; nothing is expanded):"))
    for row in rows:
        console.print(safe(f"  {row['id']}: {row['runs']}"))
        for line in _details(row):
            console.print(safe(f"      {line}"))


def _details(row: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if row["reads"]:
        lines.append("reads " + ", ".join(row["reads"]))
    if row["env_names"]:
        lines.append("sets env " + ", ".join(row["env_names"]))
    if row["inherits"] == "*":
        lines.append("inherits your whole environment, but for secret-looking names")
    elif row["inherits"]:
        lines.append("inherits " + ", ".join(row["inherits"]) + " from your environment")
    if not row["enabled"]:
        lines.append("disabled for now (enabled: false); trusting it lets it start once enabled")
    if row["change"] == "added":
        lines.append("added since you trusted this workspace")
    elif row["change"] == "changed":
        what = ", ".join(row["changed"])
        lines.append(f"changed since you trusted it ({what})" if what else "changed since you trusted it")
    elif row["change"] == "unchanged":
        lines.append("trusted already, unchanged")
    return lines


def _trusted_line(root: Path, project: ProjectFile) -> str:
    count = len(project.servers)
    if not count:
        return f"trusted {root}: {project.path} lists no servers; one added later will ask first"
    servers = "its server starts" if count == 1 else f"its {count} servers start"
    return (
        f"trusted {root}: {servers} from now on, as shown; "
        "a server added or changed later does not start until you trust it again"
    )
