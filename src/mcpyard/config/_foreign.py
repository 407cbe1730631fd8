"""Which MCP client wrote a config file, and its servers in mcpyard's own form (`mcpyard import`, `--mcp-config`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from mcpyard.config._claude_user import claude_user_servers, is_claude_settings
from mcpyard.config._clients import SHARED_FAMILY, deny_excluded, gemini_choice, translate_entry
from mcpyard.config._detect import detect_format, reads_comments
from mcpyard.config._entry import EntryContext, value_problems
from mcpyard.config._expand import Expander
from mcpyard.config._fields import FIELDS
from mcpyard.config._imported import (
    FORMAT_NAMES,
    ClientFormat,
    ImportedConfig,
    ImportedServer,
    ImportNote,
    Notes,
    a_format,
)
from mcpyard.config._literal import secret_literals
from mcpyard.config._names import (
    NO_ALLOWLIST,
    allow_hint,
    approves_tools,
    leaves_out_tools,
    offers_only_tools,
    quote,
    tool_list,
)
from mcpyard.config._opencode import opencode_servers, opencode_tools
from mcpyard.config._read import SETTING_KEYS, Format, RawEntry, read_document
from mcpyard.config._variables import editor_workspace
from mcpyard.config._vscode import (
    INPUTS_WHY,
    note_settings_mcp,
    own_form_slip,
    vscode_marked,
    vscode_settings_servers,
)
from mcpyard.errors import ConfigError

__all__ = ["READ_DIRECTLY", "import_config", "read_directly", "translate"]

READ_DIRECTLY: frozenset[ClientFormat] = frozenset(
    {"vscode", "vscode-settings", "codex", "gemini", "claude-code-user", "zed", "opencode"}
)
"""What `--mcp-config` reads through the translation; the other clients' files are the shared form (CFG-2)."""
_CLIENT_NAMES: dict[ClientFormat, str] = {
    "vscode": "VS Code",
    "vscode-settings": "VS Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "zed": "Zed",
    "claude-code-user": "Claude Code",
    "opencode": "OpenCode",
}
_CONTAINERS: dict[ClientFormat, str] = {
    "vscode": "servers",
    "vscode-settings": "mcp.servers",
    "codex": "mcp_servers",
    "zed": "context_servers",
    "opencode": "mcp",
}
_OWN_STATE: frozenset[ClientFormat] = frozenset({"claude-code-user", "zed", "opencode", "vscode-settings"})
"""Clients whose file holds dozens of keys of their own beside the servers: one note for all of them."""
_UNKNOWN = (
    "is not a config mcpyard can read: it has neither `servers` nor `mcpServers` (nor a Codex [mcp_servers] table, "
    "nor Zed's `context_servers`, nor an `mcp` section); give a claude_desktop_config.json, a .mcp.json or "
    "~/.claude.json, a VS Code or Cursor mcp.json, a Windsurf mcp_config.json, a Codex config.toml, a VS Code, "
    "Gemini CLI or Zed settings.json, an OpenCode opencode.json or an mcpyard config"
)


def read_directly(
    document: Mapping[str, object], *, fmt: Format, path: Path, workspace: Path, label: str, separator: str = "__"
) -> ImportedConfig | None:
    """A VS Code, Codex or Gemini CLI file translated for `--mcp-config`; None for any other (read as it is).

    A `servers` object with a key VS Code does not read, without anything VS Code writes (a `type`, a
    `url`, `inputs`…), outside .vscode/mcp.json, is not read this way: it is more likely the own form
    with a mistake, and loading says how to write it.

    Raises:
        ConfigError: the file's servers are not shaped as its client writes them, or the file is one its keys
            would have misread (see `translate`).
    """
    client = detect_format(document, fmt, path)
    _refuse_misread(document, client, fmt=fmt, path=path, label=label)
    without_servers = client not in (None, "mcpyard") and _listed(client, document, path) is None
    if not without_servers and (
        client not in READ_DIRECTLY or (client == "vscode" and not vscode_marked(document, path))
    ):
        return None
    return translate(document, fmt=fmt, path=path, workspace=workspace, label=label, separator=separator)


def import_config(path: Path, *, workspace: Path, separator: str = "__", home: str | None = None) -> ImportedConfig:
    """Read a config file of any MCP client mcpyard knows and translate it into mcpyard's own form.

    The format is read from the extension (`.toml`, else JSON), and the other one is tried when
    that fails. Comments are allowed where the client allows them (VS Code, Gemini CLI).

    Args:
        path: the file.
        workspace: what `${workspaceFolder}` stands for in a VS Code or Cursor file, but one in a project's
            `.vscode` or `.cursor` folder, where it is that project.
        separator: the `tool_name_separator` the servers will run with: deny rules for the tools a
            client leaves out name them with it, as the model sees them.
        home: the home folder (default: `HOME`): a `.cursor` folder there is Cursor's for every project.

    Raises:
        ConfigError: the file cannot be read or parsed, or holds no servers in a form mcpyard knows.
    """
    label = str(path)
    workspace = editor_workspace(path, workspace, os.environ.get("HOME") if home is None else home)
    fmt: Format = "toml" if path.suffix.lower() == ".toml" else "json"
    try:
        document = read_document(path, fmt, kind="flag", label=label, comments=reads_comments(path))
    except ConfigError as error:
        other: Format = "json" if fmt == "toml" else "toml"
        try:
            document = read_document(path, other, kind="flag", label=label, comments=reads_comments(path))
        except ConfigError:
            raise error from None
        fmt = other
    return translate(document, fmt=fmt, path=path, workspace=workspace, label=label, separator=separator)


def translate(
    document: Mapping[str, object], *, fmt: Format, path: Path, workspace: Path, label: str, separator: str = "__"
) -> ImportedConfig:
    """The servers of a parsed config file in mcpyard's own form, with what was understood and ignored (pure).

    Raises:
        ConfigError: no servers in a form mcpyard knows, servers not shaped as the client writes them, a Claude Code
            settings.json (no servers, and rules that are not mcpyard's), or a `servers` object with a setting or
            field of mcpyard's (the own form written by mistake, which read as VS Code's would lose it).
    """
    client = detect_format(document, fmt, path)
    _refuse_misread(document, client, fmt=fmt, path=path, label=label)
    if client is None and "servers" in document and "mcpServers" in document:
        raise ConfigError(f"{label} has both `servers` and `mcpServers`; keep one form", source=path)
    if client is None:
        raise ConfigError(f"{label} {_UNKNOWN}", source=path)
    container = _CONTAINERS.get(client, "mcpServers")
    listed = _listed(client, document, path)
    if client not in ("mcpyard", "claude-code-user") and listed is None:
        where = "[mcp_servers] tables" if container == "mcp_servers" else f"`{container}`"
        give = "VS Code keeps them in mcp.json beside it: give that file" if client == "vscode-settings" else ""
        raise ConfigError(
            f"{label} is {a_format(client)} with no MCP servers in it (no {where}), so there is nothing to "
            f"read; {give or 'add them there, or give the file that lists them'}",
            source=path,
        )
    notes = Notes()
    settings: dict[str, object] = {}
    if client == "mcpyard":
        own_separator = document.get("tool_name_separator")
        separator = own_separator if isinstance(own_separator, str) else separator  # its rules are read with it
        servers, settings = _own(
            document, fmt=fmt, label=label, path=path, workspace=workspace, notes=notes, separator=separator
        )
    else:
        if client == "claude-code-user":
            listed = claude_user_servers(document, workspace, notes)
        entries = _entries(listed, container=container, label=label, path=path)
        written_by: ClientFormat = "vscode" if client == "vscode-settings" else client  # the same entries, a level down
        servers = [
            ImportedServer(
                server_id,
                translate_entry(written_by, server_id, fields, workspace=workspace, notes=notes, separator=separator),
                notes.written_as.get(server_id, {}),
            )
            for server_id, fields in entries
        ]
        _top_level(client, document, container, notes)
        servers = gemini_choice(document, servers, notes) if client == "gemini" else servers
    problems = _problems(servers, path)
    deny_excluded(servers, notes, separator=separator, broken={note.server for note in problems if note.server})
    if client == "opencode":
        opencode_tools(document, servers, notes, separator=separator)
    if notes.deny:
        settings["permissions"] = _with_deny(settings.get("permissions"), notes.deny)
    return ImportedConfig(
        format=client,
        path=path,
        servers=tuple(servers),
        settings=settings,
        understood=tuple(notes.understood),
        ignored=tuple(notes.ignored),
        literal_secrets=tuple(
            ImportNote(where, server.id, _LITERAL) for server in servers for where in secret_literals(server.fields)
        ),
        problems=problems,
    )


def _refuse_misread(
    document: Mapping[str, object], client: ClientFormat | None, *, fmt: Format, path: Path, label: str
) -> None:
    """Refuse a file its keys would have read as what it is not, losing what it says: Claude Code's settings.json
    (its `permissions` are Claude Code's rules) and mcpyard's own form with a `servers` object (read as VS Code's,
    its `mode`, `permissions` or a server's field would be dropped)."""
    if fmt == "json" and client != "claude-code-user" and is_claude_settings(document, path):
        raise ConfigError(
            f"{label} is a Claude Code settings.json with no MCP servers in it, so there is nothing to read; Claude "
            "Code keeps them in ~/.claude.json and a project's .mcp.json: give one of those",
            source=path,
        )
    slip = own_form_slip(document) if client == "vscode" else None
    if slip is not None:
        key, server = slip
        where = "beside `servers` is a setting" if server is None else f"in server {quote(server)} is a field"
        raise ConfigError(
            f"{label}: {quote(key)} {where} of mcpyard's, which a VS Code mcp.json (read as it is at .vscode/mcp.json, "
            "or once a server has its `type`) does not have: this is mcpyard's own form written by mistake, and none "
            'of it is read. Write `servers` as a list of objects, each with an `id` (`"servers": [{"id": "…", …}]`), '
            "or use `mcpServers` for an object keyed by id",
            source=path,
            entry=server,
            field=key,
        )


def _problems(servers: list[ImportedServer], path: Path) -> tuple[ImportNote, ...]:
    """What keeps each translated server from loading, in the loader's words."""
    nothing = Expander(environ={}, secrets={}, restricted=False)  # values are read as written: nothing is expanded
    context = EntryContext(kind="flag", path=path, form="own", expander=nothing)
    return tuple(
        ImportNote(key, server.id, why)
        for server in servers
        for key, why in value_problems(RawEntry(server.id, server.fields, server.written_as), context)
    )


def _listed(client: ClientFormat, document: Mapping[str, object], path: Path) -> object:
    """What holds the servers of `client`'s file (None: it has none; Claude Code's are gathered from the whole file)."""
    if client == "opencode":
        return opencode_servers(document, path)
    if client == "vscode-settings":
        return vscode_settings_servers(document)
    return document.get(_CONTAINERS.get(client, "mcpServers"))


_LITERAL = (
    "holds a value written into the file that looks like a secret; it is copied as written, into a file only you "
    "may read. To keep it out of config files, save it with `mcpyard secrets set NAME` and write ${secret:NAME}"
)


def _entries(value: object, *, container: str, label: str, path: Path) -> list[tuple[str, Mapping[str, object]]]:
    where = f"[{container}]" if container == "mcp_servers" else f"`{container}`"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{label}: {where} must be an object whose keys are the server ids", source=path)
    entries: list[tuple[str, Mapping[str, object]]] = []
    for server_id, fields in value.items():
        if not server_id:
            raise ConfigError(f"{label}: a server name in {where} is empty; name it", source=path)
        if not isinstance(fields, Mapping):
            raise ConfigError(
                f"{label}: server {quote(str(server_id))} in {where} must be an object",
                source=path,
                entry=str(server_id),
            )
        entries.append((str(server_id), {str(key): item for key, item in fields.items()}))
    return entries


def _top_level(client: ClientFormat, document: Mapping[str, object], container: str, notes: Notes) -> None:
    """Keys beside the servers: another client's own settings, ignored with a word on what they are."""
    name = _CLIENT_NAMES.get(client, FORMAT_NAMES[client])
    if client in _OWN_STATE:
        top = container.partition(".")[0]  # VS Code's `mcp.servers` is in its `mcp`
        said = ("tools",) if client == "opencode" else ()  # its switches for tools, read as deny rules
        state = [key for key in document if key not in (top, "projects", "$schema", *said)]
        if state:
            keys = ", ".join(state[:3]) + (", …" if len(state) > 3 else "")
            notes.ignore(keys, None, f"{name}'s own settings beside its servers; mcpyard does not read them")
        if client == "vscode-settings":
            note_settings_mcp(document, notes)
        return
    for key in document:
        if key in (container, "$schema") or (
            client == "gemini" and key in ("mcp", "allowMCPServers", "excludeMCPServers")
        ):
            continue
        if client == "vscode" and key == "inputs":
            if document[key] != []:  # VS Code's new file has an empty list: nothing to say
                notes.ignore(key, None, INPUTS_WHY)
        elif client in SHARED_FAMILY:
            notes.ignore(key, None, "not an MCP server; mcpyard does not read it")
        else:
            notes.ignore(key, None, f"a setting of {name} itself, not an MCP server; mcpyard does not read it")


def _own(
    document: Mapping[str, object],
    *,
    fmt: Format,
    label: str,
    path: Path,
    workspace: Path,
    notes: Notes,
    separator: str,
) -> tuple[list[ImportedServer], dict[str, object]]:
    """mcpyard's own file: its servers as written (fields it does not have are ignored), its settings kept.

    Its `mcpServers` entries are the shared form, read as in any other client's file (`separator`: the one the
    file sets, else the host's).
    """
    container = document.get("mcp", {}) if fmt == "toml" else document
    if not isinstance(container, Mapping):
        raise ConfigError(f"{label}: `mcp` must be a table holding `servers` or `mcpServers`", source=path)
    servers: list[ImportedServer] = []
    listed = container.get("servers", [])
    if not isinstance(listed, list):
        raise ConfigError(f"{label}: `servers` must be a list of objects, each with an `id`", source=path)
    seen: set[str] = set()
    for index, item in enumerate(listed, start=1):
        server_id = item.get("id") if isinstance(item, Mapping) else None
        if not isinstance(item, Mapping) or not isinstance(server_id, str) or not server_id or server_id in seen:
            raise ConfigError(f"{label}: entry {index} of `servers` needs an `id` of its own", source=path)
        seen.add(server_id)
        for key in item:
            if leaves_out_tools(key) and (tools := tool_list(item[key])) is not None:
                # Denied below, as another client's list is; two such lists in one entry are both denied.
                keys, listed = notes.excluded.get(server_id, ("", ()))
                notes.excluded[server_id] = (f"{keys}, {key}" if keys else str(key), (*listed, *tools))
            elif key != "id" and key not in FIELDS:
                notes.ignore(str(key), server_id, _own_ignored(server_id, key, item, separator))
        servers.append(ImportedServer(server_id, {k: v for k, v in item.items() if k in FIELDS}))
    shared = container.get("mcpServers", {})
    for server_id, fields in _entries(shared, container="mcpServers", label=label, path=path):
        translated = translate_entry(
            "mcpyard", server_id, fields, workspace=workspace, notes=notes, separator=separator, family="claude-desktop"
        )
        servers.append(ImportedServer(server_id, translated, notes.written_as.get(server_id, {})))
    settings = {str(key): value for key, value in document.items() if key in SETTING_KEYS}
    return servers, settings


def _own_ignored(server_id: str, key: str, item: Mapping[str, object], separator: str) -> str:
    """Why a key of an own-form entry is left out: another client's list of tools says what mcpyard has instead."""
    if offers_only_tools(key):
        return NO_ALLOWLIST
    if approves_tools(key):
        return allow_hint(server_id, item.get("name"), item[key], separator=separator, where="your user config")
    if leaves_out_tools(key):
        return "must be a list of tool names; no tool is denied"
    return "not a field of mcpyard's own form; it is left out"


def _with_deny(permissions: object, rules: list[str]) -> object:
    """The file's `permissions` with `rules` added to its `deny` list; a value of the wrong type is kept as written
    (loading says what is wrong with it)."""
    if permissions is None:
        return {"deny": list(rules)}
    if not isinstance(permissions, Mapping):
        return permissions
    deny = permissions.get("deny", [])
    if not isinstance(deny, list):
        return permissions
    return {**permissions, "deny": [*deny, *(rule for rule in rules if rule not in deny)]}
