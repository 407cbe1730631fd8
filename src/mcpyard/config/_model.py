"""The validated configuration: one `ServerSpec` per entry, host settings and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_STORED_RESULT_BYTES",
    "Hook",
    "HostSettings",
    "LoadedConfig",
    "Mode",
    "ModelSettings",
    "ServerSpec",
    "SourceKind",
    "SpecState",
    "TransportName",
]

SourceKind = Literal["flag", "user", "project"]
TransportName = Literal["stdio", "streamable_http", "sse", "websocket"]
Mode = Literal["read-only", "plan", "ask", "auto"]
SpecState = Literal["ok", "failed", "skipped", "untrusted", "disabled"]
"""What the configuration alone says of an entry, before any connection:
`ok` (start it), `failed` (a bad value stops it, `problem` says why), `skipped` (neither
command nor url), `untrusted` (project file of an untrusted workspace), `disabled`."""

DEFAULT_MAX_FILE_BYTES = 33_554_432
DEFAULT_MAX_RESULT_BYTES = 65_536
DEFAULT_MAX_STORED_RESULT_BYTES = 16_777_216


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured MCP server, fully expanded and validated.

    `problem` is set (and `state` is `failed`, `skipped` or `untrusted`) when the entry
    cannot start; the message names the field and never contains a secret value.
    `transport` is `None` only for entries that are not started; a `url` with no
    configured transport is `streamable_http` with `sse_fallback` set.
    """

    id: str
    source: SourceKind
    source_path: Path
    position: int
    """Index of the entry across all merged sources, used for `mcp0`, `mcp1`… prefixes."""
    name: str
    """Tool prefix as configured (`name`, else the id); sanitized by the catalog."""
    state: SpecState = "ok"
    problem: str | None = None
    transport: TransportName | None = None
    sse_fallback: bool = False
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    inherit_env: tuple[str, ...] | Literal["*"] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    trust_annotations: bool = True
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    shared_tools: tuple[str, ...] | None = None
    connect_timeout_secs: float = 30.0
    call_timeout_secs: float | None = 60.0
    shutdown_timeout_secs: float = 5.0
    enabled: bool = True
    secret_values: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """`(name, value)` of every `${secret:…}` expanded into this entry, for redaction."""
    references: tuple[tuple[str, str, str], ...] = ()
    """`(field, reference, outcome)` of every `${…}` in the entry (`set`, `unset`, `default used`…); no values."""

    def fingerprint(self) -> tuple[object, ...]:
        """Everything that, when changed, means the server must be restarted on reload."""
        return (
            self.state,
            self.problem,
            self.transport,
            self.sse_fallback,
            self.command,
            self.args,
            self.env,
            self.inherit_env,
            self.cwd,
            self.url,
            self.headers,
            self.connect_timeout_secs,
            self.shutdown_timeout_secs,
            self.enabled,
        )


@dataclass(frozen=True, slots=True)
class Hook:
    """A `hooks.pre_call` entry (POL-6)."""

    match: str
    command: str


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The `model` table (MOD-3): the chat model `mcpyard chat` talks to, unless its flags say otherwise.

    Attributes:
        base_url: the OpenAI-compatible endpoint (Anthropic's API with `provider = "anthropic"`).
        model: the model's name there.
        api_key_secret: the saved secret holding the key (`api_key = "${secret:NAME}"`); None: no key.
        provider: `openai` (any OpenAI-compatible endpoint) or `anthropic`.
    """

    base_url: str | None = None
    model: str | None = None
    api_key_secret: str | None = None
    provider: Literal["openai", "anthropic"] | None = None


@dataclass(frozen=True, slots=True)
class HostSettings:
    """Host settings (CFG-8), from the flag file and the user config only."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    mode: Mode | None = None
    tool_name_separator: Literal["__", "_"] = "__"
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    max_stored_result_bytes: int = DEFAULT_MAX_STORED_RESULT_BYTES
    grants: tuple[Path, ...] = ()
    hooks: tuple[Hook, ...] = ()
    model: ModelSettings = ModelSettings()


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The result of reading every source: servers in priority-merged order, settings, warnings."""

    servers: tuple[ServerSpec, ...]
    settings: HostSettings
    warnings: tuple[str, ...]
    sources: tuple[tuple[SourceKind, Path], ...]
    """The sources that were read, highest priority first."""
