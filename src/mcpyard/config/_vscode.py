"""VS Code's two places for MCP servers: its `mcp.json` (`servers`, `inputs`), and the `mcp` section of its user
`settings.json`, where it kept them before `mcp.json` (the same `servers` and `inputs`, one level down)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mcpyard.config._fields import FIELDS
from mcpyard.config._imported import Notes
from mcpyard.config._read import SETTING_KEYS

__all__ = [
    "INPUTS_WHY",
    "SETTINGS_KEYS",
    "note_settings_mcp",
    "own_form_slip",
    "vscode_marked",
    "vscode_settings_servers",
]

_KEYS = frozenset({"type", "envFile", "dev", "gallery", "sandboxEnabled", "sandbox"})
"""Keys of a server entry only VS Code writes."""
_READ = _KEYS | {"command", "args", "env", "cwd", "url", "headers"}
"""Keys of a server entry VS Code reads."""
SETTINGS_KEYS = frozenset(
    {
        "editor.fontSize",
        "editor.formatOnSave",
        "editor.tabSize",
        "files.autoSave",
        "workbench.colorTheme",
        "workbench.startupEditor",
        "window.zoomLevel",
        "telemetry.telemetryLevel",
        "chat.mcp.access",
        "chat.mcp.discovery.enabled",
    }
)
"""Settings at the top of many a VS Code user settings.json: a file with these and no servers is one."""
INPUTS_WHY = (
    "VS Code asks for these values when a server starts; mcpyard cannot ask then, so each ${input:ID} reads the "
    "saved secret ID instead (`mcpyard secrets set ID`); no value or default is copied"
)


def vscode_marked(document: Mapping[str, object], path: Path) -> bool:
    """A VS Code mcp.json says so: its place (.vscode/mcp.json), `inputs`, servers with a `type` (as VS Code writes
    them), a `url` (a remote server, which VS Code also writes without a `type`) or its other keys; or nothing in it
    but servers of keys VS Code reads (a command and its arguments, as many a README shows VS Code's file), where the
    own form would lose nothing by it."""
    servers = document.get("servers")
    entries = (
        [entry for entry in servers.values() if isinstance(entry, Mapping)] if isinstance(servers, Mapping) else []
    )
    placed = (path.parent.name, path.name) == (".vscode", "mcp.json")
    if placed or "inputs" in document or any((_KEYS | {"url"}) & set(entry) for entry in entries):
        return True
    if not isinstance(servers, Mapping) or set(document) != {"servers"}:
        return False
    return all(  # no server at all: VS Code's file with none yet (the own form's `servers` is a list)
        isinstance(entry, Mapping) and "command" in entry and set(entry) <= _READ for entry in servers.values()
    )


def own_form_slip(document: Mapping[str, object]) -> tuple[str, str | None] | None:
    """What makes a `servers` object mcpyard's own form written by mistake rather than VS Code's mcp.json, which
    would drop it: a setting of mcpyard's beside it (`mode`, `permissions`…) or a field of mcpyard's that VS Code
    does not read in one of its servers (`trust_annotations`…). The key and its server (None: beside the servers);
    None: nothing of mcpyard's."""
    servers = document.get("servers")
    if not isinstance(servers, Mapping):
        return None
    for key in document:
        if key in SETTING_KEYS:
            return key, None
    for server_id, entry in servers.items():
        for key in entry if isinstance(entry, Mapping) else ():
            if key in FIELDS and key not in _READ:
                return key, str(server_id)
    return None


def vscode_settings_servers(document: Mapping[str, object]) -> object:
    """What `mcp.servers` of a VS Code settings.json holds (None: nothing, or no such section)."""
    mcp = document.get("mcp")
    return mcp.get("servers") if isinstance(mcp, Mapping) else None


def note_settings_mcp(document: Mapping[str, object], notes: Notes) -> None:
    """The keys of a settings.json's `mcp` section beside its servers."""
    mcp = document.get("mcp")
    section: Mapping[str, object] = mcp if isinstance(mcp, Mapping) else {}
    for key, value in section.items():
        if key == "inputs":
            if value != []:
                notes.ignore("mcp.inputs", None, INPUTS_WHY)
        elif key != "servers":
            notes.ignore(f"mcp.{key}", None, "a setting of VS Code itself, not an MCP server; mcpyard does not read it")
