"""Claude Code's own file (`~/.claude.json`): its servers for every folder, and those it keeps for each project folder.

Claude Code writes the servers a user added for all their folders (its "user" scope) under the
top-level `mcpServers`, and those added for one folder only (its "local" scope) under
`projects.<that folder's absolute path>.mcpServers`, beside much of its own state. Read for a
workspace, the file gives both: the user's servers, then the workspace's own, which win on a
shared name (as in Claude Code). Other folders' servers are counted, never read.

Its settings (`~/.claude/settings.json`, a project's `.claude/settings.json`) hold no servers, and
their `permissions` are Claude Code's rules, not mcpyard's: such a file is named for what it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mcpyard.config._imported import Notes
from mcpyard.config._read import SETTING_KEYS

__all__ = ["CLAUDE_USER_FILE", "claude_user_servers", "is_claude_settings", "is_claude_user_file"]

_MCPYARD_ONLY = frozenset(SETTING_KEYS) - {"permissions", "hooks", "model"}
"""Settings only mcpyard writes (Claude Code's settings have `permissions`, `hooks` and `model` too)."""

CLAUDE_USER_FILE = ".claude.json"
_PROJECT_KEYS = frozenset(
    {"mcpServers", "allowedTools", "hasTrustDialogAccepted", "enabledMcpjsonServers", "disabledMcpServers"}
)
"""Keys Claude Code writes in each folder's table of `projects`."""
_SETTINGS_NAMES = ("settings.json", "settings.local.json")
_SETTINGS_KEYS = frozenset(
    {
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "apiKeyHelper",
        "cleanupPeriodDays",
        "includeCoAuthoredBy",
        "statusLine",
        "outputStyle",
        "forceLoginMethod",
        "awsAuthRefresh",
        "spinnerTipsEnabled",
        "alwaysThinkingEnabled",
        "disableAllHooks",
    }
)
"""Top-level keys only Claude Code's settings.json writes."""
_PERMISSION_KEYS = frozenset({"ask", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"})
"""Keys of Claude Code's `permissions` that mcpyard's do not have."""


def is_claude_user_file(document: Mapping[str, object], path: Path | None) -> bool:
    """Whether `document` is Claude Code's own file: by its name, or a `projects` table shaped as Claude Code's."""
    projects = document.get("projects")
    if not isinstance(projects, Mapping):
        return path is not None and path.name == CLAUDE_USER_FILE and "mcpServers" in document
    return (path is not None and path.name == CLAUDE_USER_FILE) or any(
        isinstance(table, Mapping) and _PROJECT_KEYS & set(table) for table in projects.values()
    )


def is_claude_settings(document: Mapping[str, object], path: Path | None) -> bool:
    """Whether `document` is Claude Code's settings.json: no servers, and its place (`.claude/settings.json`), a
    key only it writes, or `permissions` of Claude Code's: its own keys (`ask`, `defaultMode`…) or its rules for
    its tools (`Bash(npm test:*)`, `Read(./src)`: no tool name has parentheses) and for MCP tools (`mcp__github`)."""
    if "servers" in document or "mcpServers" in document:
        return False
    placed = path is not None and path.parent.name == ".claude" and path.name in _SETTINGS_NAMES
    written = document.get("permissions")
    permissions = written if isinstance(written, Mapping) else {}
    rules = [rule for key in ("allow", "deny", "ask") for rule in _strings(permissions.get(key))]
    # Beside a setting only mcpyard has (`mode`…), the rules are mcpyard's: a server may have the id `mcp`.
    ours = bool(_MCPYARD_ONLY & set(document))
    return (
        placed
        or bool(_SETTINGS_KEYS & set(document))
        or bool(_PERMISSION_KEYS & set(permissions))
        or (not ours and any("(" in rule or rule.startswith("mcp__") for rule in rules))
    )


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def claude_user_servers(document: Mapping[str, object], workspace: Path, notes: Notes) -> dict[str, object]:
    """The servers the file gives `workspace`: the user's, then the workspace's own (winning on a shared name)."""
    user = document.get("mcpServers")
    servers: dict[str, object] = dict(user) if isinstance(user, Mapping) else {}
    projects = document.get("projects")
    tables = projects if isinstance(projects, Mapping) else {}
    mine = _own_table(tables, workspace)
    own = mine.get("mcpServers") if isinstance(mine, Mapping) else None
    if isinstance(own, Mapping) and own:
        for name in own:
            if name in servers:
                notes.said(
                    f"projects.{workspace}.mcpServers.{name}",
                    str(name),
                    "replaces the server of the same name Claude Code has for every folder, as Claude Code reads it",
                )
        servers.update(own)
    off = mine.get("disabledMcpServers") if isinstance(mine, Mapping) else None
    for name in off if isinstance(off, list) else ():
        entry = servers.get(name) if isinstance(name, str) else None
        if isinstance(entry, Mapping):  # switched off in Claude Code's /mcp for this folder: listed, never started
            servers[name] = {**entry, "enabled": False}
            notes.said(
                f"projects.{workspace}.disabledMcpServers",
                name,
                "switched off for this folder in Claude Code: listed and never started, as there",
            )
    elsewhere = sum(
        1
        for table in tables.values()
        if table is not mine
        and isinstance(table, Mapping)
        and isinstance(table.get("mcpServers"), Mapping)
        and table["mcpServers"]
    )
    read = f"the servers Claude Code keeps for this folder ({workspace}) are read" if own else ""
    if elsewhere:
        others = f"{elsewhere} other folder{'s' if elsewhere > 1 else ''}"
        skipped = f"those it keeps for {others} are not: read the file from that folder (--workspace) for its own"
        read = f"{read}; {skipped}" if read else skipped[0].upper() + skipped[1:]
    if read:
        notes.said("projects", None, read)
    return servers


def _own_table(tables: Mapping[object, object], workspace: Path) -> object:
    """The table of `projects` for `workspace`, found by its path as written or as resolved."""
    for candidate in dict.fromkeys((str(workspace), os.path.realpath(workspace))):
        if candidate in tables:
            return tables[candidate]
    return None
