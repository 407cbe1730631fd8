"""OpenCode's `opencode.json`: its MCP servers under `mcp` (or, in its newer form, `mcp.servers`), key by key.

A server is `{"type": "local", "command": [program, arguments…], "environment": {…}}` or
`{"type": "remote", "url": …, "headers": {…}}`, with `enabled` (`disabled` in the newer form);
values may read `{env:NAME}`, which mcpyard writes `${NAME}` (`_variables.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from mcpyard.config._client_entry import ClientEntry, Handler, copy_value, disabled_key, oauth_key, renamed

__all__ = ["OPENCODE_HANDLERS", "OPENCODE_REASONS", "opencode_servers"]

_KINDS = ("local", "remote")


def opencode_servers(document: Mapping[str, object]) -> Mapping[str, object] | None:
    """The table of servers of an OpenCode config (`mcp.servers`, else `mcp`), or None when `document` is not one."""
    mcp = document.get("mcp")
    if not isinstance(mcp, Mapping):
        return None
    nested = mcp.get("servers")
    table = nested if isinstance(nested, Mapping) else mcp
    schema = document.get("$schema")
    marked = isinstance(schema, str) and "opencode.ai" in schema
    typed = any(isinstance(entry, Mapping) and entry.get("type") in _KINDS for entry in table.values())
    return table if marked or typed else None


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
