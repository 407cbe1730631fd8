"""What a config of another MCP client became: its servers in mcpyard's own form, and notes on each key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcpyard.config._names import quote
from mcpyard.config._shown import shown_command, shown_url

__all__ = ["FORMAT_NAMES", "ClientFormat", "ImportNote", "ImportedConfig", "ImportedServer", "Notes", "a_format"]

ClientFormat = Literal[
    "mcpyard",
    "claude-desktop",
    "claude-code",
    "claude-code-user",
    "cursor",
    "vscode",
    "vscode-settings",
    "codex",
    "gemini",
    "windsurf",
    "cline",
    "roo-code",
    "zed",
    "opencode",
]

FORMAT_NAMES: dict[ClientFormat, str] = {
    "mcpyard": "mcpyard config",
    "claude-desktop": "Claude Desktop config",
    "claude-code": "Claude Code .mcp.json",
    "claude-code-user": "Claude Code ~/.claude.json",
    "cursor": "Cursor mcp.json",
    "vscode": "VS Code mcp.json",
    "vscode-settings": "VS Code settings.json",
    "codex": "Codex config.toml",
    "gemini": "Gemini CLI settings.json",
    "windsurf": "Windsurf mcp_config.json",
    "cline": "Cline cline_mcp_settings.json",
    "roo-code": "Roo Code MCP settings file",
    "zed": "Zed settings.json",
    "opencode": "OpenCode opencode.json",
}
"""How messages name each format."""
SHARED_FORM_NAME = "mcpServers file (the form Claude Desktop, Cursor and others share)"
"""How messages name a file in that form that no client's name or keys mark as its own."""


def a_format(client: ClientFormat) -> str:
    """The format's name with its article: "a Zed settings.json", "an OpenCode opencode.json"."""
    return _with_article(FORMAT_NAMES[client])


def _with_article(name: str) -> str:
    """`name` after "a", or "an" where it is said with a vowel first ("an mcpyard config": em-cee-pee)."""
    return f"{'an' if name[0] in 'AEIOUm' else 'a'} {name}"


@dataclass(frozen=True, slots=True)
class ImportNote:
    """One key of the file, what became of it and why.

    Attributes:
        key: the key as the file writes it (`trust`, `env.API_KEY`, `inputs`…).
        server: the server id it belongs to; None for a key of the whole file.
        why: a sentence in plain words, never a value from the file.
    """

    key: str
    server: str | None
    why: str

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "server": self.server, "why": self.why}

    def warning(self, label: str) -> str:
        """The status page's warning: `server 'gh' in --mcp-config file F: ignoring 'trust': why`."""
        where = f"server {quote(self.server)} in {label}" if self.server is not None else label
        return f"{where}: ignoring {quote(self.key)}: {self.why}"

    def line(self) -> str:
        """`server 'gh': `trust`: why` (ids and keys quoted, so no escape sequence passes)."""
        where = f"server {quote(self.server)}: " if self.server is not None else ""
        return f"{where}{quote(self.key)}: {self.why}"


@dataclass(frozen=True, slots=True)
class ImportedServer:
    """One server as mcpyard's own form writes it: its id and its fields (keys of the own form only)."""

    id: str
    fields: Mapping[str, object]
    written_as: Mapping[str, str] = field(default_factory=dict)
    """Fields its client wrote under another name, and that name (`url` → Windsurf's `serverUrl`)."""

    @property
    def transport(self) -> str | None:
        """Its transport: None with neither `command` nor `url` (it is skipped, as the loader says); else as written,
        else stdio for a command, websocket for ws://, else streamable HTTP."""
        if self.fields.get("command") is None and self.fields.get("url") is None:
            return None
        written = self.fields.get("transport")
        if isinstance(written, str):
            return written
        if "command" in self.fields:
            return "stdio"
        url = self.fields.get("url")
        if isinstance(url, str) and url.lower().startswith(("ws://", "wss://")):
            return "websocket"
        return "streamable_http"

    @property
    def runs(self) -> str | None:
        """The command line as written (nothing expanded), each value that looks like a secret cut to `…`, or None for
        a remote server."""
        command = self.fields.get("command")
        if not isinstance(command, str):
            return None
        args = self.fields.get("args")
        return shown_command(command, [arg for arg in args if isinstance(arg, str)] if isinstance(args, list) else [])

    @property
    def url(self) -> str | None:
        """The URL as written, without a query or user name: either may carry a credential."""
        url = self.fields.get("url")
        return shown_url(url) if isinstance(url, str) else None

    @property
    def enabled(self) -> bool:
        return self.fields.get("enabled") is not False

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "transport": self.transport,
            "command": self.runs,
            "url": self.url,
            "enabled": self.enabled,
        }


@dataclass(frozen=True, slots=True)
class ImportedConfig:
    """A config file of another MCP client (or mcpyard's own), translated into mcpyard's own form.

    Attributes:
        format: which client's file it is.
        path: the file read.
        servers: its servers in file order, as the own form writes them.
        settings: host settings the translation sets (`permissions.deny` for tools a client excluded),
            or, for mcpyard's own file, the settings it has.
        understood: keys read in a way worth saying (a `type` mapped, a timeout converted…).
        ignored: keys mcpyard has no equivalent for, each with why.
        literal_secrets: values written into the file that look like secrets: copied as written,
            never shown; each says how to keep it out of the file.
        problems: values that keep a server from loading as written (a string where a list goes, a
            number where text goes…): mcpyard refuses that server, read directly or as written, until
            the file is fixed.
    """

    format: ClientFormat
    path: Path
    servers: tuple[ImportedServer, ...]
    settings: Mapping[str, object] = field(default_factory=dict)
    understood: tuple[ImportNote, ...] = ()
    ignored: tuple[ImportNote, ...] = ()
    literal_secrets: tuple[ImportNote, ...] = ()
    problems: tuple[ImportNote, ...] = ()

    @property
    def format_name(self) -> str:
        """The format in words: `Gemini CLI settings.json`, `VS Code mcp.json`…; an `mcpServers` file that nothing
        marks as any one client's (its name, its folder, a key only one client writes) is named for the form."""
        if self.format == "claude-desktop" and self.path.name != "claude_desktop_config.json":
            return SHARED_FORM_NAME
        return FORMAT_NAMES[self.format]

    @property
    def a_format_name(self) -> str:
        """`format_name` with its article, as a sentence says it ("an OpenCode opencode.json")."""
        return _with_article(self.format_name)

    def document(self) -> dict[str, object]:
        """mcpyard's own form as a JSON document: `servers` (a list, each with `id`) and the host settings."""
        servers: list[object] = [{"id": server.id, **server.fields} for server in self.servers]
        return {"servers": servers, **self.settings}

    def text(self, fmt: Literal["json", "toml"]) -> str:
        """The own form as a file's text: JSON, or TOML with `[[mcp.servers]]` tables after a comment saying its origin.

        Raises:
            ValueError: a value cannot be written in that format (a lone surrogate in a string).
        """
        from mcpyard.config._own_text import own_text

        text = own_text(self.document(), fmt)
        if fmt == "toml":
            text = f"# mcpyard's own form, written by `mcpyard import` from {self.a_format_name}\n\n{text}"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "format": self.format,
            "path": str(self.path),
            "servers": [server.to_json() for server in self.servers],
            "understood": [note.to_json() for note in self.understood],
            "ignored": [note.to_json() for note in self.ignored],
            "literal_secrets": [note.to_json() for note in self.literal_secrets],
            "problems": [note.to_json() for note in self.problems],
            "settings": dict(self.settings),
        }


@dataclass(slots=True)
class Notes:
    """What a translation says as it goes: understood and ignored keys, and the deny rules it adds."""

    understood: list[ImportNote] = field(default_factory=list)
    ignored: list[ImportNote] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    excluded: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """The tools each server's entry leaves out, by id, with the key that lists them: denied once it is known which
    servers are used (a rule names tools by prefix, which two servers may share)."""
    written_as: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each server's fields its client wrote under another name, and that name (`url` → `serverUrl`), by id."""

    def said(self, key: str, server: str | None, why: str) -> None:
        note = ImportNote(key, server, why)
        if note not in self.understood:
            self.understood.append(note)

    def ignore(self, key: str, server: str | None, why: str) -> None:
        note = ImportNote(key, server, why)
        if note not in self.ignored:
            self.ignored.append(note)
