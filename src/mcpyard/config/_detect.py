"""Which MCP client wrote a config file: by its keys and shape, and by its file's name and place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from mcpyard.config._claude_user import is_claude_user_file
from mcpyard.config._imported import ClientFormat
from mcpyard.config._opencode import opencode_marked, opencode_servers
from mcpyard.config._read import CODEX_KEYS, SETTING_KEYS, Format
from mcpyard.config._vscode import SETTINGS_KEYS, vscode_settings_servers

__all__ = ["detect_format", "reads_comments"]

_COMMENTED: frozenset[ClientFormat] = frozenset({"vscode", "vscode-settings", "gemini", "zed", "opencode"})
"""Clients that read comments and trailing commas in their JSON (JSONC)."""

_GEMINI_KEYS = frozenset(
    {"httpUrl", "trust", "includeTools", "excludeTools", "authProviderType", "targetAudience", "targetServiceAccount"}
)
_GEMINI_TOP = frozenset({"selectedAuthType", "allowMCPServers", "excludeMCPServers", "mcpServerCommand"})
_CURSOR_KEYS = frozenset({"envFile", "auth"})
_CURSOR_VARIABLES = ("${env:", "${userHome}", "${workspaceFolder}", "${workspaceFolderBasename}", "${pathSeparator}")
_SETTINGS: dict[ClientFormat, tuple[tuple[str, str], frozenset[str]]] = {
    "codex": ((".codex", "config.toml"), CODEX_KEYS),
    "claude-desktop": (("", "claude_desktop_config.json"), frozenset({"globalShortcut"})),
    "zed": (("zed", "settings.json"), frozenset({"buffer_font_size", "ui_font_size", "vim_mode", "language_models"})),
    "vscode-settings": (("User", "settings.json"), SETTINGS_KEYS),
    "gemini": (
        (".gemini", "settings.json"),
        _GEMINI_TOP
        | {"theme", "contextFileName", "general", "ui", "context", "security", "privacy", "telemetry", "ide"}
        | {"checkpointing", "preferredEditor", "usageStatisticsEnabled", "autoAccept", "coreTools", "excludeTools"},
    ),
}
"""Where each client keeps its settings file (any folder: ""), and keys only it writes at the top: a file with no
servers is its."""


def detect_format(document: Mapping[str, object], fmt: Format, path: Path | None = None) -> ClientFormat | None:
    """Which client's file this is, by its keys and shape (and its file name where the shape alone cannot say).

    `servers` as a list is mcpyard's own form and `servers` as an object keyed by name is VS
    Code's (`mcp.servers` in its settings.json); TOML `[mcp_servers.<id>]` tables are Codex's, and so is a
    TOML file without them or `mcp` whose top level has Codex's settings (`approval_policy`, a string `model`…);
    `mcpServers` is the client's whose file name or folder it has (claude_desktop_config.json,
    .mcp.json, mcp_config.json, .cursor/, .gemini/); elsewhere Gemini CLI's when an entry has a key
    only Gemini writes (`httpUrl`, `trust`, `includeTools`…), Windsurf's when one has `serverUrl`,
    else Claude Desktop's, Claude Code's or Cursor's. None: no servers in any form mcpyard knows.
    """
    if fmt == "toml":
        if "mcp" in document:
            return "mcpyard"
        if isinstance(document.get("mcp_servers"), Mapping):
            return "codex"
        if "mcp_servers" in document:
            return None
        if _settings_of("codex", document, path) or _codex_model(document):
            return "codex"
        return "mcpyard" if any(key in SETTING_KEYS for key in document) else None
    servers, shared = document.get("servers"), document.get("mcpServers")
    if "servers" in document and "mcpServers" in document:
        return None
    if servers is None and is_claude_user_file(document, path):
        return "claude-code-user"
    if servers is None and shared is None and isinstance(document.get("context_servers"), Mapping):
        return "zed"
    if (
        servers is None
        and shared is None
        and (opencode_marked(document, path) or opencode_servers(document) is not None)
    ):
        return "opencode"
    if servers is None and shared is None and vscode_settings_servers(document) is not None:
        return "vscode-settings"
    if servers is None and shared is None:
        clients: tuple[ClientFormat, ...] = ("gemini", "claude-desktop", "zed", "vscode-settings")
        # Its place first: Zed's settings.json has a `theme` too, a key Gemini CLI writes.
        for client in (*(c for c in clients if _placed(c, path)), *(c for c in clients if _settings_of(c, document))):
            return client
    if isinstance(servers, Mapping):
        return "vscode"
    # A container of the wrong type is still its form's: reading it says what is wrong, as loading does.
    if "servers" in document or ("mcpServers" not in document and any(k in SETTING_KEYS for k in document)):
        return "mcpyard"
    if "mcpServers" in document:
        return _shared_client(document, shared if isinstance(shared, Mapping) else {}, path)
    # No servers in any form: a file where a client keeps its servers (a Cursor mcp.json of `{}`) is that client's.
    return "vscode" if "inputs" in document else _by_place(path)


def _placed(client: ClientFormat, path: Path | None) -> bool:
    """Whether the file is where `client` keeps its settings file."""
    folder, name = _SETTINGS[client][0]
    return path is not None and path.name == name and folder in ("", path.parent.name)


def _settings_of(client: ClientFormat, document: Mapping[str, object], path: Path | None = None) -> bool:
    """A settings file of `client` with no servers in it: by its place, or a top-level key only that client writes."""
    return _placed(client, path) or any(key in _SETTINGS[client][1] for key in document)


def _codex_model(document: Mapping[str, object]) -> bool:
    """Codex's `model = "o3"`: mcpyard's own `model` is a table, so a string one, with no other setting of mcpyard's
    nor its servers (`servers`, `mcpServers` written at the top), is Codex's settings."""
    others = [key for key in document if key in (*SETTING_KEYS, "servers", "mcpServers") and key != "model"]
    return isinstance(document.get("model"), str) and not others


def _shared_client(document: Mapping[str, object], shared: Mapping[str, object], path: Path | None) -> ClientFormat:
    entries = [entry for entry in shared.values() if isinstance(entry, Mapping)]
    keys = {str(key) for entry in entries for key in entry}
    if (placed := _by_place(path)) is not None and placed != "vscode":
        return placed
    # Only then Gemini's own keys: a Windsurf or Claude file with an entry copied from Gemini CLI stays theirs.
    if keys & _GEMINI_KEYS or _GEMINI_TOP & set(document) or isinstance(document.get("mcp"), Mapping):
        return "gemini"
    if "serverUrl" in keys:
        return "windsurf"
    texts = [text for entry in entries for text in _strings(entry)]
    remote_untyped = any("url" in entry and "type" not in entry for entry in entries)
    if keys & _CURSOR_KEYS or remote_untyped or any(marker in text for text in texts for marker in _CURSOR_VARIABLES):
        return "cursor"
    if "type" in keys or "headersHelper" in keys:
        return "claude-code"
    return "claude-desktop"


_BY_PLACE: dict[tuple[str, str], ClientFormat] = {
    ("claude_desktop_config.json", ""): "claude-desktop",
    (".mcp.json", ""): "claude-code",
    ("mcp_config.json", ""): "windsurf",
    ("cline_mcp_settings.json", ""): "cline",
    ("mcp_settings.json", ""): "roo-code",  # Roo Code's own (Cline's fork); its project file is .roo/mcp.json
    ("", ".roo"): "roo-code",
    ("", ".cursor"): "cursor",
    ("", ".gemini"): "gemini",
    ("mcp.json", ".vscode"): "vscode",
}
"""Where each client keeps its servers: a file name, a folder, or both."""


def _by_place(path: Path | None) -> ClientFormat | None:
    """The client that keeps its servers in a file of this name or folder, if any."""
    if path is None:
        return None
    for (name, folder), client in _BY_PLACE.items():
        if name in ("", path.name) and folder in ("", path.parent.name):
            return client
    return None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def reads_comments(path: Path) -> Callable[[dict[str, object]], bool]:
    """For `read_document`: whether a document that needed its comments stripped is one whose client allows them."""

    def allowed(document: dict[str, object]) -> bool:
        return detect_format(document, "json", path) in _COMMENTED

    return allowed
