"""The fields of a server entry (CFG-3): which keys exist, and type checks with precise messages."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from mcpyard.config._model import SourceKind, TransportName
from mcpyard.config._names import (
    NO_ALLOWLIST,
    allow_hint,
    approves_tools,
    deny_hint,
    describe_entry,
    leaves_out_tools,
    nearest,
    nearest_field,
    offers_only_tools,
    quote,
    tool_list,
    tool_prefix,
)
from mcpyard.config._read import Form
from mcpyard.errors import ConfigError

__all__ = [
    "FIELDS",
    "OAUTH_FIELDS",
    "TRANSPORTS",
    "FieldReader",
    "check_keys",
    "deny_hints",
    "env_label",
    "name_label",
]

FIELDS = (
    "command",
    "args",
    "env",
    "inherit_env",
    "cwd",
    "url",
    "transport",
    "headers",
    "name",
    "trust_annotations",
    "max_file_bytes",
    "shared_tools",
    "always_offer",
    "roots",
    "connect_timeout_secs",
    "call_timeout_secs",
    "shutdown_timeout_secs",
    "enabled",
    "oauth",
)
OAUTH_FIELDS = (
    "grant",
    "client_id",
    "client_secret",
    "private_key",
    "signing_algorithm",
    "token_endpoint_auth_method",
    "scopes",
    "client_metadata_url",
    "issuer",
    "redirect_port",
    "idp_token_endpoint",
    "idp_client_id",
    "id_token",
)
"""The keys of a server's `oauth` table (AUTH-2)."""
TRANSPORTS: tuple[TransportName, ...] = ("stdio", "streamable_http", "sse", "websocket")

TYPE_ALIASES: dict[str, TransportName] = {
    "stdio": "stdio",
    "http": "streamable_http",
    "streamable-http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamablehttp": "streamable_http",
    "sse": "sse",
    "ws": "websocket",
    "websocket": "websocket",
}
"""Values of the shared form's `type` key, which other MCP clients write instead of `transport`."""

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_VALUE_AFTER = re.compile(r"[:=].{8}", re.DOTALL)
"""A `:` or `=` with a value's worth of characters after it, in a name."""

_SHARED_HINTS = {
    "disabled": "it is read only as true or false, and only without `enabled`, which is what mcpyard reads",
    "timeout": "set `call_timeout_secs` (in seconds)",
    "serverUrl": "`url` is set too, and is what mcpyard reads; keep one of them",
    "httpUrl": "`url` (or `serverUrl`) is set too, and is what mcpyard reads; keep one of them",
}


def check_keys(
    fields: Mapping[str, object],
    *,
    server_id: str,
    form: Form,
    kind: SourceKind,
    path: Path,
    warnings: list[str],
    separator: str,
) -> None:
    """Refuse an unknown field of the own form; warn once per unknown key of the shared form (CFG-3).

    Another client's list of tools to leave out (`disabledTools`, `exclude_tools`, any word like disabled, excluded or
    blocked before `tools`) is left to `deny_hints` in the shared form, which needs to know which servers are used; in
    the own form, the error names the deny rule to write (POL-4).
    `separator`: the host's `tool_name_separator`, which rules name tools with (None: not known, `__` is written).

    Raises:
        ConfigError: an unknown field in the own form, naming field, entry and source.
    """
    where = describe_entry(server_id, kind, path)
    for key in fields:
        if key in FIELDS or (form == "shared" and (key == "type" or leaves_out_tools(key) or _no_tools(key, fields))):
            continue
        # Another client's key whose nearest field means something else (`shared_tools`…) says what to write instead.
        instead = _instead(fields, key, server_id=server_id, kind=kind, separator=separator)
        if form == "shared":
            close = nearest_field(key, FIELDS)
            guess = f"did you mean `{close}`? mcpyard does not read it" if close else "mcpyard does not read it"
            warnings.append(f"{where}: ignoring the key {quote(key)}; {instead or _SHARED_HINTS.get(key, guess)}")
            continue
        if key == "type":
            hint = "; write `transport` (stdio, streamable_http, sse or websocket)"
        elif key == "disabled":
            hint = '; to list the server and never start it, write `enabled = false` (in JSON `"enabled": false`)'
        elif instead:
            hint = f"; {instead}"
        else:
            close = nearest_field(key, FIELDS)
            hint = f"; did you mean `{close}`?" if close else f"; the fields are {', '.join(FIELDS)}"
        raise ConfigError(f"{where}: unknown field {quote(key)}{hint}", source=path, entry=server_id, field=key)
    oauth = fields.get("oauth")
    if isinstance(oauth, Mapping):
        _check_oauth_keys(oauth, where=where, server_id=server_id, form=form, path=path, warnings=warnings)


def deny_hints(
    fields: Mapping[str, object], *, server_id: str, kind: SourceKind, path: Path, separator: str, used: str | None
) -> list[str]:
    """One warning per list of tools to leave out that another client writes in a shared-form entry (POL-4).

    Args:
        separator: the host's `tool_name_separator`, which the deny rule to write names each tool with.
        used: the server whose tools this entry's tool prefix names, when it is another one (`server 'b' in
            user config F`): this entry is not used, and a rule for its tools would keep that one's from running.
    """
    where = describe_entry(server_id, kind, path)
    hints: list[str] = []
    for key in fields:
        if not leaves_out_tools(key) or _no_tools(key, fields):
            continue
        if used is None:
            hint = deny_hint(server_id, fields.get("name"), fields[key], separator=separator, where=_rules_file(kind))
            hint = hint if tool_list(fields[key]) is not None else f"it must be a list of tool names; {hint}"
        else:
            prefix = tool_prefix(server_id, fields.get("name"))
            hint = (
                f"this server is not used: {used} has the same tool prefix {quote(prefix)}, so a deny rule for "
                "these tools would apply to that server's tools instead; write none, or rename one of them with "
                "`name` to use both"
            )
        hints.append(f"{where}: ignoring the key {quote(key)}; {hint}")
    return hints


def _no_tools(key: str, fields: Mapping[str, object]) -> bool:
    """An empty list of tools of another client (Cline writes `"autoApprove": []` in every entry): nothing to say."""
    return fields[key] == [] and (leaves_out_tools(key) or approves_tools(key) or offers_only_tools(key))


def _instead(fields: Mapping[str, object], key: str, *, server_id: str, kind: SourceKind, separator: str) -> str | None:
    """What to write instead of another client's list of tools (POL-4, CFG-3); None for any other key."""
    where, name = _rules_file(kind), fields.get("name")
    if leaves_out_tools(key):
        hint = deny_hint(server_id, name, fields[key], separator=separator, where=where)
        return f"mcpyard leaves tools out with deny rules instead; {hint}"
    if approves_tools(key):
        return allow_hint(server_id, name, fields[key], separator=separator, where=where)
    return NO_ALLOWLIST if offers_only_tools(key) else None


def _rules_file(kind: SourceKind) -> str:
    """Where a rule goes: a project file may not set permissions (CFG-8)."""
    return "your user config or this file" if kind == "flag" else "your user config"


def _check_oauth_keys(
    oauth: Mapping[object, object], *, where: str, server_id: str, form: Form, path: Path, warnings: list[str]
) -> None:
    """The `oauth` table's keys, as strictly as the entry's own: an error in the own form, a warning in the shared."""
    for key in oauth:
        name = str(key)
        if name in OAUTH_FIELDS:
            continue
        close = nearest(name, OAUTH_FIELDS)
        if form == "shared":
            guess = f"did you mean `{close}`? " if close else ""
            warnings.append(f"{where}: ignoring the key {quote(f'oauth.{name}')}; {guess}mcpyard does not read it")
            continue
        hint = f"; did you mean `{close}`?" if close else f"; the keys of oauth are {', '.join(OAUTH_FIELDS)}"
        raise ConfigError(
            f"{where}: unknown field {quote(f'oauth.{name}')}{hint}",
            source=path,
            entry=server_id,
            field=f"oauth.{name}",
        )


def env_label(prefix: str, key: str) -> str:
    """`env.TOKEN`, `headers.X-Api-Key`, or `env['odd key']` when the key is not a plain name."""
    if _PLAIN_KEY.fullmatch(key):
        return f"{prefix}.{key}"
    return f"{prefix}[{quote(key)}]"


def name_label(prefix: str, key: str) -> str:
    """`env_label` for a name that is wrong: a whole header line or `NAME=value` written as a name may carry a
    secret, so a name with more than a few characters after a `:` or `=` is shown up to it (and any at most 40)."""
    if _PLAIN_KEY.fullmatch(key):
        return f"{prefix}.{key}"
    shown = key[:40]
    if (found := _VALUE_AFTER.search(key)) is not None:
        shown = key[: found.start()][:40]
    return f"{prefix}[{quote(shown + '…' if shown != key else shown)}]"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class FieldReader:
    """Reads typed fields of one entry, collecting `<field>: <what is wrong and the fix>` problems.

    A missing field, or JSON `null`, gives the default. A wrong value gives the default
    too and adds a problem, so every problem of an entry is reported at once.
    """

    def __init__(self, fields: Mapping[str, object], written_as: Mapping[str, str] | None = None) -> None:
        self._fields = fields
        self._written_as = written_as or {}
        """Fields written under another client's name (`url` as `serverUrl`): messages name them so."""
        self.faults: list[tuple[str, str]] = []
        """Each problem: the field as messages name it, and what is wrong with it and the fix."""

    @property
    def problems(self) -> list[str]:
        """Each problem as one `<field>: <what is wrong and the fix>`."""
        return [f"{key}: {message}" for key, message in self.faults]

    def bad(self, key: str, message: str) -> None:
        """Note a problem with the field `key` (as messages name it)."""
        self.faults.append((self._written_as.get(key, key), message))

    def text(self, key: str) -> str | None:
        value = self._fields.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.bad(key, f"must be a string, not {_kind(value)}")
            return None
        if not value:
            self.bad(key, "is empty; give a value or remove the field")
            return None
        return value

    def texts(self, key: str) -> tuple[str, ...] | None:
        value = self._fields.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            self.bad(key, f"must be a list of strings, not {_kind(value)}")
            return None
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.bad(key, f"must be a list of strings; item {index} is {_kind(item)}, quote it")
                return None
        return tuple(value)

    def table(self, key: str) -> tuple[tuple[str, str], ...]:
        value = self._fields.get(key)
        if value is None:
            return ()
        if not isinstance(value, dict):
            self.bad(key, f"must be an object of names to strings, not {_kind(value)}")
            return ()
        pairs: list[tuple[str, str]] = []
        for name, item in value.items():
            if not isinstance(item, str):
                self.bad(name_label(key, name), f"must be a string, not {_kind(item)}; quote it")
                continue
            pairs.append((name, item))
        return tuple(pairs)

    def variable_names(self, key: str) -> tuple[str, ...] | Literal["*"]:
        value = self._fields.get(key)
        if value == "*":
            return "*"
        if value is None:
            return ()
        names = self.texts(key)
        if names is None:
            field, message = self.faults[-1]
            self.faults[-1] = (field, message + ', or "*" for the whole environment')
            return ()
        for index, name in enumerate(names):
            if not name or "=" in name or "\0" in name:
                self.bad(f"{key}[{index}]", "is not a variable name (empty, or holds `=` or NUL)")
                return ()
        return names

    def flag(self, key: str, default: bool) -> bool:
        value = self._fields.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.bad(key, f"must be true or false, not {_kind(value)}")
            return default
        return value

    def whole(self, key: str, default: int) -> int:
        value = self._fields.get(key)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            shown = repr(value) if isinstance(value, int | float) else _kind(value)
            self.bad(key, f"must be a whole number of at least 1, not {shown}")
            return default
        return value

    def seconds(self, key: str, default: float | None, *, nullable: bool = False) -> float | None:
        value = self._fields.get(key)
        if nullable and ((value is None and key in self._fields) or value == "none"):
            return None
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            shown = repr(value) if isinstance(value, int | float) else _kind(value)
            fix = '; for no limit write null (JSON) or "none" (TOML)' if nullable else ""
            self.bad(key, f"must be a number of seconds greater than 0, not {shown}{fix}")
            return default
        return float(value)

    def transport(self, key: str) -> TransportName | None:
        value = self._fields.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            for name in TRANSPORTS:
                if value == name:
                    return name
            if key == "type" and value.lower() in TYPE_ALIASES:
                return TYPE_ALIASES[value.lower()]
        choices = "stdio, http, streamable-http, sse or ws" if key == "type" else ", ".join(TRANSPORTS)
        alias = TYPE_ALIASES.get(value.lower()) if isinstance(value, str) else None
        fix = f" (`{value}` is written `{alias}` here)" if alias and key != "type" else ""
        shown = quote(value) if isinstance(value, str) else _kind(value)
        self.bad(key, f"must be one of {choices}, not {shown}{fix}")
        return None
