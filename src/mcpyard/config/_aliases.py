"""Other clients' names for fields of the shared form (`mcpServers`), read as the fields they stand for."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["aliased"]

_SHARED_ALIASES = {"serverUrl": "url", "httpUrl": "url"}
"""Keys other clients write for a field of the shared form (Windsurf's `serverUrl`, Gemini CLI's `httpUrl`), read as
that field."""


def aliased(item: Mapping[str, object]) -> tuple[dict[str, object], dict[str, str]]:
    """The entry with another client's name for a field read as the field, in place, unless the field is there too;
    and each field read so, with the key it was written as (messages about it name that key).

    `disabled: true` (Cline's, Windsurf's, Roo's…) is read as `enabled: false`: a server another client was told
    to leave off is never started here either. Gemini CLI's `httpUrl` is streamable HTTP (no SSE fallback),
    unless the entry names its transport.
    """
    fields: dict[str, object] = {}
    written_as: dict[str, str] = {}
    for key, value in item.items():
        if key == "disabled" and isinstance(value, bool) and "enabled" not in item:
            fields["enabled"] = not value
        elif (alias := _SHARED_ALIASES.get(key)) is not None and alias not in item and alias not in fields:
            fields[alias], written_as[alias] = value, key
            if key == "httpUrl" and "transport" not in item and "type" not in item:
                fields["transport"] = "streamable_http"
        else:
            fields[key] = value
    return fields, written_as
