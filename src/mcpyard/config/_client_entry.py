"""One entry of another client's file as it is translated, and the keys most clients share (`type`, `oauth`…)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpyard.config._fields import OAUTH_FIELDS, TYPE_ALIASES
from mcpyard.config._imported import ClientFormat, Notes
from mcpyard.config._names import tool_list
from mcpyard.config._variables import rewrite

__all__ = [
    "SIGN_IN",
    "ClientEntry",
    "Handler",
    "copy_value",
    "disabled_key",
    "exclude_key",
    "oauth_key",
    "renamed",
    "server_url_key",
    "type_key",
]

_TEMPLATED = ("command", "args", "env", "cwd", "url", "headers")
_SECRET_REFERENCE = re.compile(r"\$\{secret:[A-Za-z0-9_][A-Za-z0-9_.\-]*\}")

SIGN_IN = (
    "mcpyard signs in to a remote server by itself when the server asks for it (`mcpyard login ID`); "
    "this client's own sign-in setting has no equivalent"
)
"""Why a client's own sign-in key is not copied."""
_OAUTH_KEYS = {
    "clientId": "client_id",
    "CLIENT_ID": "client_id",
    "clientSecret": "client_secret",
    "CLIENT_SECRET": "client_secret",
    "callbackPort": "redirect_port",
}
_OAUTH_REASONS = {
    "enabled": "mcpyard signs in whenever the server asks for it",
    "authorizationUrl": "mcpyard finds the sign-in endpoints from the server itself",
    "tokenUrl": "mcpyard finds the sign-in endpoints from the server itself",
    "redirectUri": (
        "mcpyard listens for the sign-in on a loopback address of its own; set oauth.redirect_port to fix its port"
    ),
    "tokenParamName": "mcpyard sends a token in the Authorization header only, never in a URL",
    "audiences": SIGN_IN,
}


@dataclass(slots=True)
class ClientEntry:
    """One entry being translated: what its client wrote, what it becomes, the tools it leaves out."""

    client: ClientFormat
    server: str
    written: Mapping[str, object]
    workspace: Path
    notes: Notes
    separator: str
    """The host's `tool_name_separator`: deny rules and hints name tools as the model sees them (CAT-1)."""
    out: dict[str, object] = field(default_factory=dict)
    excluded: list[str] = field(default_factory=list)
    excluded_by: str = ""
    """The keys that listed the tools to leave out (`excludeTools`, `disabledTools, excludeTools`…)."""

    def text(self, where: str, value: str) -> str:
        return rewrite(
            value, client=self.client, workspace=self.workspace, server=self.server, where=where, notes=self.notes
        )

    def ignore(self, key: str, why: str) -> None:
        self.notes.ignore(key, self.server, why)

    def said(self, key: str, why: str) -> None:
        self.notes.said(key, self.server, why)

    def read_as(self, key: str, field_name: str) -> None:
        """The client's `key` is read as mcpyard's `field_name`: messages about the field name the key."""
        if key != field_name:
            self.notes.written_as.setdefault(self.server, {})[field_name] = key

    def headers(self) -> dict[str, object]:
        headers = self.out.get("headers")
        if not isinstance(headers, dict):
            headers = {}
            self.out["headers"] = headers
        return headers


Handler = Callable[[ClientEntry, str, object], None]


def copy_value(entry: ClientEntry, key: str, value: object) -> None:
    if key not in _TEMPLATED:
        entry.out[key] = value
    elif isinstance(value, str):
        entry.out[key] = entry.text(key, value)
    elif isinstance(value, list):
        entry.out[key] = [
            entry.text(f"{key}[{i}]", item) if isinstance(item, str) else item for i, item in enumerate(value)
        ]
    elif isinstance(value, Mapping):
        entry.out[key] = {
            name: entry.text(f"{key}.{name}", item) if isinstance(item, str) else item for name, item in value.items()
        }
    else:
        entry.out[key] = value  # a wrong type: loading says what is wrong with it


def type_key(entry: ClientEntry, key: str, value: object) -> None:
    mapped = TYPE_ALIASES.get(value.lower()) if isinstance(value, str) else None
    if mapped is None:
        entry.ignore(
            key, "is not a transport mcpyard knows (stdio, http, sse or ws); the transport follows from command or url"
        )
    elif "transport" in entry.written:
        entry.ignore(key, "`transport` is set too, and is what mcpyard reads")
    else:
        entry.out["transport"] = mapped
        if mapped != value:
            entry.said(key, f"is transport {mapped}")


def renamed(field_name: str) -> Handler:
    """A handler for a client's key that is mcpyard's `field_name` under another name."""

    def handler(entry: ClientEntry, key: str, value: object) -> None:
        copy_value(entry, field_name, value)
        entry.read_as(key, field_name)
        entry.said(key, f"is {field_name}")

    return handler


def server_url_key(entry: ClientEntry, key: str, value: object) -> None:
    """Windsurf's `serverUrl`: its name for `url`."""
    if "url" in entry.written:
        entry.ignore(key, "`url` is set too, and is what mcpyard reads")
        return
    copy_value(entry, "url", value)
    entry.read_as(key, "url")
    entry.said(key, "is url")


def disabled_key(entry: ClientEntry, key: str, value: object) -> None:
    if not isinstance(value, bool):
        entry.ignore(key, "must be true or false; the server is enabled")
    elif "enabled" in entry.written:
        entry.ignore(key, "`enabled` is set too, and is what mcpyard reads")
    else:
        entry.out["enabled"] = not value
        if value:
            entry.said(key, "is written enabled = false: the server is listed, and does not start")


def oauth_key(entry: ClientEntry, key: str, value: object) -> None:
    if not isinstance(value, Mapping):
        entry.ignore(key, "must be an object of sign-in settings; " + SIGN_IN)
        return
    table: dict[str, object] = {}
    for sub, item in value.items():
        label = f"{key}.{sub}"
        mapped = sub if sub in OAUTH_FIELDS else _OAUTH_KEYS.get(sub)
        if mapped is None:
            entry.ignore(label, _OAUTH_REASONS.get(sub, "mcpyard does not read it"))
            continue
        secret = mapped in ("client_secret", "private_key")
        if secret and not (isinstance(item, str) and _SECRET_REFERENCE.fullmatch(item)):
            entry.ignore(
                label,
                "mcpyard reads a client secret only from a saved secret, so it is not copied; save it with "
                '`mcpyard secrets set NAME` and write oauth.client_secret = "${secret:NAME}"',
            )
            continue
        table[mapped] = entry.text(label, item) if isinstance(item, str) else item
        if mapped != sub:
            entry.said(label, f"is oauth.{mapped}")
    if table:
        entry.out["oauth"] = table


def exclude_key(entry: ClientEntry, key: str, value: object) -> None:
    """A list of tools to leave out, whichever client's name it has: denied once the entry is read (POL-4)."""
    if value == []:
        return  # leaves nothing out
    tools = tool_list(value)
    if tools is None:
        # Written wrong, it still says which tools to keep from running: those it names are denied (POL-4).
        listed = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        tools = [tool for tool in listed if isinstance(tool, str) and tool]
        left_out = len(listed) - len(tools)
        if not tools:
            entry.ignore(key, "must be a list of tool names; no tool is denied")
            return
        why = "is one name, not a list: read as a list of one"
        if not isinstance(value, str):
            why = f"must hold tool names only: {left_out} item(s) that are not are left out, the names are read"
        entry.said(key, why)
    entry.excluded.extend(tools)
    entry.excluded_by = f"{entry.excluded_by}, {key}" if entry.excluded_by else key
