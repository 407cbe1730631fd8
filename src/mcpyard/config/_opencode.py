"""OpenCode's `opencode.json`: its MCP servers under `mcp` (or, in its newer form, `mcp.servers`), key by key.

A server is `{"type": "local", "command": [program, arguments…], "environment": {…}}` or
`{"type": "remote", "url": …, "headers": {…}}`, with `enabled` (`disabled` in the newer form);
values may read `{env:NAME}`, which mcpyard writes `${NAME}` (`_variables.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcpyard.config._client_entry import ClientEntry, Handler, copy_value, disabled_key, oauth_key, renamed
from mcpyard.config._imported import ImportedServer, Notes
from mcpyard.config._names import deny_rules

__all__ = ["OPENCODE_HANDLERS", "OPENCODE_REASONS", "opencode_marked", "opencode_servers", "opencode_tools"]

_KINDS = ("local", "remote")
_FILES = ("opencode.json", "opencode.jsonc")


def opencode_marked(document: Mapping[str, object], path: Path | None = None) -> bool:
    """Whether a file says it is OpenCode's, servers or not: by its `$schema` (opencode.ai) or its name."""
    schema = document.get("$schema")
    return (isinstance(schema, str) and "opencode.ai" in schema) or (path is not None and path.name in _FILES)


def opencode_servers(document: Mapping[str, object], path: Path | None = None) -> Mapping[str, object] | None:
    """The table of servers of an OpenCode config (`mcp.servers`, else `mcp`), or None when `document` is not one
    (neither marked as OpenCode's nor holding an entry of its `type`s) or has no `mcp` table."""
    mcp = document.get("mcp")
    if not isinstance(mcp, Mapping):
        return None
    nested = mcp.get("servers")
    table = nested if isinstance(nested, Mapping) else mcp
    typed = any(isinstance(entry, Mapping) and entry.get("type") in _KINDS for entry in table.values())
    return table if typed or opencode_marked(document, path) else None


def _type(entry: ClientEntry, key: str, value: object) -> None:
    if value == "local":
        entry.out["transport"] = "stdio"
        entry.said(key, "is transport stdio")
    elif value == "remote":
        entry.said(key, "a remote server: streamable HTTP, falling back to SSE, as OpenCode connects")
    else:
        entry.ignore(key, "is neither local nor remote; the transport follows from command or url")


def _command(entry: ClientEntry, key: str, value: object) -> None:
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        copy_value(entry, "command", value[0])
        if len(value) > 1:
            copy_value(entry, "args", value[1:])
        entry.said(key, "one list of the program and its arguments: read as command and args")
    else:
        copy_value(entry, key, value)


OPENCODE_HANDLERS: dict[str, Handler] = {
    "type": _type,
    "command": _command,
    "environment": renamed("env"),
    "disabled": disabled_key,
    "oauth": oauth_key,
}
OPENCODE_REASONS = {
    "timeout": "OpenCode's wait for the server's tools, in milliseconds; set connect_timeout_secs, in seconds",
}


def opencode_tools(
    document: Mapping[str, object], servers: Sequence[ImportedServer], notes: Notes, *, separator: str
) -> None:
    """OpenCode's `tools` map, its way to switch tools off: each `<server>_<tool>: false` (a glob too) is a deny rule.

    OpenCode names a server's tool `<server>_<tool>`; a key that starts with no server's name is a tool of
    OpenCode's own (`bash`, `write`…), which mcpyard does not have.
    """
    table = document.get("tools")
    if not isinstance(table, Mapping):
        if "tools" in document:
            notes.ignore("tools", None, "must be an object of tool names to true or false; no tool is denied")
        return
    from mcpyard.catalog import sanitize_name, server_prefix

    # Longest name first: `git_hub_x` belongs to server `git_hub` before server `git`.
    owners = sorted(servers, key=lambda server: len(server.id), reverse=True)
    for key, value in table.items():
        label, head = f"tools.{key}", re.split(r"[*?\[]", str(key))[0]
        owner = next((s for s in owners if head.startswith(sanitize_name(s.id) + "_")), None)
        if head != key and any(s is not owner and _may_name(sanitize_name(s.id) + "_", head) for s in servers):
            owner = None  # a glob that reaches the tools of another server too: the rule is for you to write
        if value is True:
            continue
        if value is not False:
            notes.ignore(label, None, "must be true or false; no tool is denied")
        elif owner is None:
            notes.ignore(
                label,
                None,
                "names no tool of a server in this file (a tool of OpenCode's own, or a glob over several servers); "
                "to keep a server's tool from running, add its name as the model sees it, such as "
                f'permissions.deny = ["SERVER{separator}TOOL"], to your user config',
            )
        else:
            tool = str(key)[len(sanitize_name(owner.id)) + 1 :]
            name = owner.fields.get("name")
            if any(char in tool for char in "*?["):  # a glob: kept as written after the prefix
                rule = f"{server_prefix(name if isinstance(name, str) else None, owner.id, 0)}{separator}{tool}"
            else:
                [rule] = deny_rules(owner.id, name, [tool], separator=separator)
            notes.deny.extend([rule] if rule not in notes.deny else [])
            notes.said(label, owner.id, f"false: denied in permissions.deny ({rule}), named as the model sees it")


def _may_name(prefix: str, head: str) -> bool:
    """Whether a glob starting with the literal `head` may match a tool of the server whose names start `prefix`."""
    return prefix.startswith(head) or head.startswith(prefix)
