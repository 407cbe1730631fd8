"""One server entry of another client, key by key, in mcpyard's own form: each key maps onto a field or says why not."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from pathlib import Path

from mcpyard.config._client_entry import (
    SIGN_IN,
    ClientEntry,
    Handler,
    copy_value,
    disabled_key,
    exclude_key,
    oauth_key,
    renamed,
    server_url_key,
    type_key,
)
from mcpyard.config._fields import FIELDS
from mcpyard.config._imported import ClientFormat, ImportedServer, Notes
from mcpyard.config._names import (
    NO_ALLOWLIST,
    allow_hint,
    approves_tools,
    credential_header,
    deny_rules,
    leaves_out_tools,
    nearest_field,
    offers_only_tools,
    prefix_users,
    quote,
    tool_prefix,
)
from mcpyard.config._opencode import OPENCODE_HANDLERS, OPENCODE_REASONS

__all__ = ["SHARED_FAMILY", "deny_excluded", "gemini_choice", "translate_entry"]

SHARED_FAMILY: frozenset[ClientFormat] = frozenset(
    {"claude-desktop", "claude-code", "claude-code-user", "cursor", "windsurf", "cline", "roo-code"}
)
"""Clients whose `mcpServers` entries are the shared form (CFG-2): mcpyard's own fields are read there too."""

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NO_ENV_FILE = (
    "mcpyard does not read env files; put the variables in env as ${VAR} references, or name them in inherit_env"
)
_NO_SANDBOX = "VS Code's sandbox for the server; mcpyard does not sandbox servers, and says so when it starts"

_REASONS: dict[str, dict[str, str]] = {
    "shared": {
        "timeout": "clients disagree on its unit (seconds or milliseconds); set call_timeout_secs, in seconds",
        "envFile": _NO_ENV_FILE,
        "headersHelper": (
            "mcpyard does not run a program to make headers; write them in headers with ${VAR} references"
        ),
        "description": "mcpyard shows what the server says of itself",
    },
    "vscode": {
        "envFile": _NO_ENV_FILE,
        "dev": "VS Code's development mode (restart on change, debugger); mcpyard starts the server as written",
        "sandboxEnabled": _NO_SANDBOX,
        "sandbox": _NO_SANDBOX,
        "gallery": "VS Code's record of where it installed the server from",
        "version": "VS Code's record of the version it installed",
    },
    "gemini": {
        "description": "mcpyard shows what the server says of itself",
        "authProviderType": SIGN_IN,
        "targetAudience": SIGN_IN,
        "targetServiceAccount": SIGN_IN,
        "tcp": 'a websocket given as `tcp`; write url = "ws://HOST:PORT" instead',
        "extensionName": "the Gemini CLI extension that added the server",
        "extension": "the Gemini CLI extension that added the server",
    },
    "zed": {"settings": "settings Zed gives an extension's server; mcpyard does not read them"},
    "opencode": OPENCODE_REASONS,
    "codex": {
        "bearer_token": (
            "a token written into the file, which Codex refuses too: it is not copied; put it in an environment "
            "variable and name that in bearer_token_env_var, or save it with `mcpyard secrets set NAME`"
        ),
        "required": "mcpyard starts the other servers when one fails, and the status page says why",
        "oauth_resource": SIGN_IN,
    },
}


def translate_entry(
    client: ClientFormat,
    server: str,
    written: Mapping[str, object],
    *,
    workspace: Path,
    notes: Notes,
    separator: str = "__",
    family: ClientFormat | None = None,
) -> dict[str, object]:
    """The own-form fields of one entry of `client`'s file; `notes` collects what was mapped, ignored and denied.

    `separator`: the host's `tool_name_separator`, which deny rules name tools with.
    `family`: whose keys the entry has, when not the file's client (mcpyard's own TOML `mcpServers`
    tables are the shared form).
    """
    entry = ClientEntry(client, server, written, workspace, notes, separator)
    keys = family or client
    group = "shared" if keys in SHARED_FAMILY else keys
    handlers = _HANDLERS.get(group, {})
    for key, value in written.items():
        handler = handlers.get(key) or _ANY_CLIENT.get(key) or (exclude_key if leaves_out_tools(key) else None)
        if handler is not None:
            handler(entry, key, value)
        elif key in _COPIED.get(group, ()):
            copy_value(entry, key, value)
        elif not approves_tools(key):  # said by `_finish`, which knows the tools' prefix
            entry.ignore(key, _REASONS.get(group, {}).get(key) or _unknown(key, group))
    _finish(entry)
    order = {name: index for index, name in enumerate(FIELDS)}
    return dict(sorted(entry.out.items(), key=lambda item: order.get(item[0], len(order))))


def _unknown(key: str, group: str) -> str:
    if offers_only_tools(key):
        return NO_ALLOWLIST
    if group == "shared":
        close = nearest_field(key, FIELDS)
        if close:
            return f"did you mean `{close}`? mcpyard does not read it"
    return "mcpyard has no equivalent; it does not read it"


def _finish(entry: ClientEntry) -> None:
    """What needs the whole entry: the tools it leaves out (denied by `deny_excluded`) or runs without asking (named
    with the entry's tool prefix), and oauth beside a credential header."""
    for key in [key for key, value in entry.written.items() if approves_tools(key) and value != []]:
        hint = allow_hint(
            entry.server, entry.out.get("name"), entry.written[key], separator=entry.separator, where="your user config"
        )
        entry.ignore(key, hint)
    if entry.excluded:
        entry.notes.excluded[entry.server] = (entry.excluded_by, tuple(entry.excluded))
    headers = entry.out.get("headers")
    names = [str(name) for name in headers] if isinstance(headers, Mapping) else []
    if "oauth" in entry.out and any(credential_header(name) for name in names):
        del entry.out["oauth"]
        entry.ignore(
            "oauth", "its headers carry a credential already, and mcpyard never also signs in; the headers are kept"
        )


def deny_excluded(servers: Sequence[ImportedServer], notes: Notes, *, separator: str, broken: Set[str]) -> None:
    """Deny the tools each server's entry leaves out (POL-4), named as the model sees them with `separator` (CAT-1).

    Not for a server another one takes its tool prefix from (the later of two, enabled and without a problem in
    `broken`, is used): the rule would keep that other server's tools from running, so it is said and not written.
    """
    used = prefix_users((s.id, s.fields.get("name")) for s in servers if s.enabled and s.id not in broken)
    for server in servers:
        if server.id not in notes.excluded:
            continue
        key, tools = notes.excluded[server.id]
        name, prefix = server.fields.get("name"), tool_prefix(server.id, server.fields.get("name"))
        other = used.get(prefix, server.id)
        if other != server.id:
            notes.ignore(
                key,
                server.id,
                f"this server is not used: server {quote(other)} in this file has the same tool prefix "
                f"{quote(prefix)}, so no deny rule is written (it would apply to that server's tools); to use both, "
                "rename one of them with `name`",
            )
            continue
        rules = deny_rules(server.id, name, tools, separator=separator)
        notes.deny.extend(rule for rule in rules if rule not in notes.deny)
        notes.said(
            key,
            server.id,
            f"each tool listed is denied in permissions.deny ({', '.join(rules)}), named as the model sees it",
        )


# Gemini CLI (settings.json): `url` is SSE and `httpUrl` streamable HTTP, a timeout in milliseconds, tool filters.


def _gemini_url(entry: ClientEntry, key: str, value: object) -> None:
    if key == "url" and "httpUrl" in entry.written:
        entry.ignore(key, "httpUrl is set too, and is what Gemini CLI and mcpyard use")
        return
    copy_value(entry, "url", value)
    entry.read_as(key, "url")
    if key == "httpUrl":
        entry.out["transport"] = "streamable_http"
        entry.said(key, "is url, with transport streamable_http")
    elif "type" not in entry.written and "transport" not in entry.written:
        entry.out["transport"] = "sse"
        entry.said(key, "is an SSE endpoint to Gemini CLI (its httpUrl is streamable HTTP): url, with transport sse")


def _shared_http_url(entry: ClientEntry, key: str, value: object) -> None:
    """Gemini CLI's `httpUrl` in the shared form, as the loader reads it: the url unless `url` is there too."""
    if "url" in entry.written or "serverUrl" in entry.written:
        entry.ignore(key, "`url` (or `serverUrl`) is set too, and is what mcpyard reads")
    else:
        _gemini_url(entry, key, value)


def _gemini_timeout(entry: ClientEntry, key: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        entry.ignore(key, "must be a number of milliseconds greater than 0; the call timeout stays 60 s")
        return
    seconds = value / 1000
    entry.out["call_timeout_secs"] = int(seconds) if float(seconds).is_integer() else seconds
    entry.said(key, f"{value} ms is call_timeout_secs {entry.out['call_timeout_secs']}")


def _shared_timeout(entry: ClientEntry, key: str, value: object) -> None:
    """Cline and Roo Code give a server's `timeout` in seconds; other clients' files say nothing of its unit."""
    if entry.client not in ("cline", "roo-code"):
        entry.ignore(key, _REASONS["shared"]["timeout"])
    elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        entry.ignore(key, "must be a number of seconds greater than 0; the call timeout stays 60 s")
    else:
        entry.out["call_timeout_secs"] = value
        entry.said(key, f"{value} s is call_timeout_secs {value}")


def _gemini_trust(entry: ClientEntry, key: str, value: object) -> None:
    if value is False:
        return
    from mcpyard.catalog import sanitize_name

    entry.ignore(
        key,
        "mcpyard never skips asking because another client trusted a server; to let this server's tools run "
        f'without asking, add permissions.allow = ["{sanitize_name(entry.server)}{entry.separator}*"] to your own '
        "config yourself",
    )


# Codex (config.toml): its own names for headers, timeouts and the environment.


def _codex_startup_ms(entry: ClientEntry, key: str, value: object) -> None:
    if "startup_timeout_sec" in entry.written:
        entry.ignore(key, "startup_timeout_sec is set too, and is what Codex and mcpyard use")
    elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        entry.ignore(key, "must be a number of milliseconds greater than 0; the connect timeout stays 30 s")
    else:
        entry.out["connect_timeout_secs"] = value / 1000
        entry.said(key, f"{value} ms is connect_timeout_secs {value / 1000}")


def _codex_headers(entry: ClientEntry, key: str, value: object) -> None:
    if not isinstance(value, Mapping):
        entry.ignore(key, "must be a table of header names to values; no header is sent")
        return
    headers = entry.headers()
    for name, item in value.items():
        if key == "http_headers":
            headers[name] = item
        elif isinstance(item, str) and _VARIABLE.fullmatch(item):
            headers[name] = f"${{{item}}}"
        else:
            entry.ignore(f"{key}.{name}", "must name an environment variable; the header is not sent")
    entry.said(key, "is headers" if key == "http_headers" else "is headers, each read from its variable as ${VAR}")


def _codex_bearer(entry: ClientEntry, key: str, value: object) -> None:
    written = [entry.written.get("http_headers"), entry.written.get("env_http_headers")]
    if any(
        isinstance(table, Mapping) and any(str(name).lower() == "authorization" for name in table) for table in written
    ):
        entry.ignore(key, "an Authorization header is set too, and is what mcpyard sends")
    elif isinstance(value, str) and _VARIABLE.fullmatch(value):
        entry.headers()["Authorization"] = f"Bearer ${{{value}}}"
        entry.said(key, f"is the header Authorization = Bearer ${{{value}}}")
    else:
        entry.ignore(key, "must name an environment variable; no token is sent")


def _codex_env_vars(entry: ClientEntry, key: str, value: object) -> None:
    entry.out["inherit_env"] = value
    entry.said(key, "is inherit_env: those variables are passed on from mcpyard's environment")


def _codex_scopes(entry: ClientEntry, key: str, value: object) -> None:
    entry.out["oauth"] = {"scopes": value}
    entry.said(key, "is oauth.scopes")


# Zed (settings.json, `context_servers`): `command` a string, or (as Zed wrote it before) a table of path, args, env.

_ZED_COMMAND = {"path": "command", "args": "args", "env": "env"}


def _zed_command(entry: ClientEntry, key: str, value: object) -> None:
    if not isinstance(value, Mapping):
        copy_value(entry, key, value)
        return
    for part, item in value.items():
        name = _ZED_COMMAND.get(str(part))
        if name is None:
            entry.ignore(f"{key}.{part}", "mcpyard has no equivalent; it does not read it")
        elif name != "command" and name in entry.written:
            entry.ignore(f"{key}.{part}", f"`{name}` is set too, and is what mcpyard reads")
        else:
            copy_value(entry, name, item)
    entry.said(key, "a table of path, args and env (as Zed wrote it before): read as command, args and env")


def _zed_source(entry: ClientEntry, key: str, value: object) -> None:
    if value == "extension":
        entry.ignore(key, "a Zed extension starts this server, which mcpyard cannot do: write its command or url")


_SHARED_HANDLERS: dict[str, Handler] = {
    "type": type_key,
    "transportType": type_key,  # Cline's name for it before `type`
    "timeout": _shared_timeout,
    "oauth": oauth_key,
    "auth": oauth_key,
    "serverUrl": server_url_key,
    "httpUrl": _shared_http_url,
    "trust": _gemini_trust,
}
_ANY_CLIENT: dict[str, Handler] = {"disabled": disabled_key}
"""Keys read alike in every client's entry: `disabled`, a server left off. A list of tools to leave out is read alike
too (POL-4), under any client's name for it (`leaves_out_tools`), since people copy entries between clients."""
_HANDLERS: dict[str, dict[str, Handler]] = {
    "zed": {"command": _zed_command, "source": _zed_source},
    "opencode": OPENCODE_HANDLERS,
    "shared": _SHARED_HANDLERS,
    "vscode": {"type": type_key},
    "gemini": {
        "type": type_key,
        "url": _gemini_url,
        "httpUrl": _gemini_url,
        "serverUrl": server_url_key,  # Windsurf's, in an entry copied from its file
        "timeout": _gemini_timeout,
        "trust": _gemini_trust,
        "oauth": oauth_key,
    },
    "codex": {
        "env_vars": _codex_env_vars,
        "http_headers": _codex_headers,
        "env_http_headers": _codex_headers,
        "bearer_token_env_var": _codex_bearer,
        "startup_timeout_sec": renamed("connect_timeout_secs"),
        "startup_timeout_ms": _codex_startup_ms,
        "tool_timeout_sec": renamed("call_timeout_secs"),
        "scopes": _codex_scopes,
    },
}
_COPIED: dict[str, tuple[str, ...]] = {
    "shared": tuple(name for name in FIELDS if name != "oauth"),
    "vscode": ("command", "args", "env", "cwd", "url", "headers"),
    "gemini": ("command", "args", "env", "cwd", "headers"),
    "codex": ("command", "args", "env", "cwd", "url", "enabled"),
    "zed": ("args", "env", "url", "headers", "enabled"),
    "opencode": ("url", "headers", "enabled"),
}


def gemini_choice(document: Mapping[str, object], servers: list[ImportedServer], notes: Notes) -> list[ImportedServer]:
    """Gemini CLI's lists of servers allowed and excluded (`mcp.allowed`/`mcp.excluded`, formerly top-level)."""
    table = document.get("mcp")
    mcp = table if isinstance(table, Mapping) else {}
    allowed, excluded = (
        mcp.get("allowed", document.get("allowMCPServers")),
        mcp.get("excluded", document.get("excludeMCPServers")),
    )
    for key in mcp:
        if key not in ("allowed", "excluded"):
            notes.ignore(f"mcp.{key}", None, "a setting of Gemini CLI itself; mcpyard does not read it")
    off: dict[str, str] = {}
    if isinstance(allowed, list) and allowed:
        off |= {s.id: "is not in Gemini CLI's allowed servers" for s in servers if s.id not in allowed}
    if isinstance(excluded, list):
        off |= {s.id: "is in Gemini CLI's excluded servers" for s in servers if s.id in excluded}
    chosen: list[ImportedServer] = []
    for server in servers:
        if server.id not in off:
            chosen.append(server)
            continue
        notes.said("enabled", server.id, f"{off[server.id]}, so it is written enabled = false")
        chosen.append(ImportedServer(server.id, {**server.fields, "enabled": False}, server.written_as))
    return chosen
