"""`mcpyard import FILE`: another MCP client's config, what mcpyard understood and ignored, and its own form of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from mcpyard.cli._common import Globals, environ, fail, print_json, with_globals
from mcpyard.cli._render import safe

if TYPE_CHECKING:
    from rich.console import Console

    from mcpyard.config import ImportedConfig, ImportNote

__all__ = ["import_file"]

_NAME = "mcp-servers.toml"
"""The file name suggested when --write names a folder."""


@with_globals
def import_file(
    opts: Globals,
    file: Annotated[
        Path,
        typer.Argument(
            help=(
                "The config file to read: a claude_desktop_config.json, a Claude Code .mcp.json or ~/.claude.json, "
                "a VS Code or Cursor mcp.json, a Windsurf mcp_config.json, a Codex config.toml, a Gemini CLI, "
                "Zed or VS Code settings.json or an OpenCode opencode.json."
            ),
            show_default=False,
        ),
    ],
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Write mcpyard's own form of it to this file: TOML if the name ends in .toml, else JSON.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="With --write: replace the file if it is there.")] = False,
) -> None:
    """Read another MCP client's config file and say what mcpyard understood and what it ignored.

    It names the file's format and lists each server (its id, transport, and command or URL),
    then each value that keeps a server from loading as written, each key mcpyard has no
    equivalent for, with why, and each value that looks like a secret written into the file
    (never the value itself). Nothing changes unless you pass
    --write FILE: then it writes the same servers in mcpyard's own form, readable by you only;
    it never replaces a file that is there unless you also pass --force.

    The VS Code, Codex, Gemini CLI, Zed and OpenCode files and Claude Code's ~/.claude.json can
    also be given to any command as they are, with --mcp-config FILE; Claude's other files,
    Cursor's and Windsurf's already are mcpyard's shared form.

    Exit codes: 0 the file was read (whatever was ignored); 2 it could not be read, is in no
    format mcpyard knows, or could not be written. --mcp-config and --trust mean nothing here;
    ${workspaceFolder} stands for --workspace, or for the project whose .vscode or .cursor
    folder holds the file.
    """
    from mcpyard._plan import resolve_workspace
    from mcpyard.config import import_config
    from mcpyard.errors import ConfigError, UsageError

    try:
        workspace = resolve_workspace(opts.workspace)
        imported = import_config(
            file.expanduser(), workspace=workspace, separator=_separator(workspace), home=environ().get("HOME", "")
        )
    except (ConfigError, UsageError) as exc:
        fail(str(exc))
    written = _write(imported, write, force=force) if write is not None else None
    if opts.json:
        print_json({**imported.to_json(), "written": str(written) if written is not None else None})
        return
    _show(imported, written, opts.console(), rich=opts.rich)


def _separator(workspace: Path) -> str:
    """The `tool_name_separator` of the user config: deny rules name tools with it ("__" when it cannot be read)."""
    from mcpyard._paths import config_home, user_config_file
    from mcpyard.config import load_config
    from mcpyard.errors import ConfigError

    env = environ()
    try:
        loaded = load_config(
            workspace=workspace,
            config_file=None,
            user_config_file=user_config_file(config_home(env)),
            trusted=False,
            environ=env,
            secrets={},
        )
    except ConfigError:
        return "__"  # the commands that run servers say what is wrong with it
    return loaded.settings.tool_name_separator


def _write(imported: ImportedConfig, target: Path, *, force: bool) -> Path:
    """Write the own form to `target`, whole or not at all, mode 0600; refuse a folder, and a file unless forced."""
    from mcpyard._atomic import write_atomic, write_new

    target = target.expanduser()
    if target.resolve() == imported.path.resolve():
        fail(f"--write names {target}, the file being read; give another file, so the original stays as it is")
    if target.is_dir():  # a folder (or a link to one) is never replaced by a file, --force or not
        fail(
            f"--write names {target}, which is a folder; nothing was written: give a file path such as {target / _NAME}"
        )
    fmt: Literal["json", "toml"] = "toml" if target.suffix.lower() == ".toml" else "json"
    try:
        data = imported.text(fmt).encode("utf-8")
    except ValueError:
        fail(f"{imported.path} holds text that is not valid Unicode, which no {fmt.upper()} file can carry; fix it")
    try:
        if force:
            write_atomic(target, data, mode=0o600)
        else:
            write_new(target, data, mode=0o600)
    except FileExistsError:
        fail(f"{target} is there already; nothing was written: pass --force to replace it, or give another file")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}; nothing was written")
    return target


def _show(imported: ImportedConfig, written: Path | None, console: Console, *, rich: bool) -> None:
    heading = "bold" if rich else None
    count = len(imported.servers)
    servers = "1 server" if count == 1 else f"{count} servers"
    console.print(safe(f"{imported.path}: {imported.a_format_name} with {servers}"), style=heading)
    by_server: dict[str | None, list[ImportNote]] = {}
    for note in imported.understood:
        by_server.setdefault(note.server, []).append(note)
    for server in imported.servers:
        unset = "no command or url, so it will not load" if server.transport is None else "(no command or url)"
        what = server.runs if server.runs is not None else server.url or unset
        off = "" if server.enabled else " (disabled)"
        console.print(safe(f"  {server.id} ({server.transport or 'no transport'}): {what}{off}"))
        for note in by_server.get(server.id, []):
            console.print(safe(f"      {note.key}: {note.why}"))
    for note in by_server.get(None, []):
        console.print(safe(f"  {note.key}: {note.why}"))
    unloadable = "Will not load as written (fix these in the file, or in what --write writes):"
    _section(console, unloadable, imported.problems, heading)
    _section(console, "Ignored, with why:", imported.ignored, heading)
    _section(
        console, "Values that look like secrets (copied as written, never shown):", imported.literal_secrets, heading
    )
    if written is not None:
        console.print(safe(f"Wrote mcpyard's own form to {written} (readable by you only)."), style=heading)
        console.print(safe(f"Use it with --mcp-config {written}, or copy its servers into your user config."))
    else:
        console.print("Nothing was written; to write mcpyard's own form, run again with --write FILE.")


def _section(console: Console, title: str, notes: tuple[ImportNote, ...], style: str | None) -> None:
    if not notes:
        return
    console.print(title, style=style)
    for note in notes:
        console.print(safe(f"  {note.line()}"))
