"""The validated configuration: one `ServerSpec` per entry, host settings and warnings."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeGuard, get_args

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_STORED_RESULT_BYTES",
    "MODES",
    "Hook",
    "HostSettings",
    "LoadedConfig",
    "Mode",
    "ModelSettings",
    "OAuthGrant",
    "OAuthSettings",
    "ServerSpec",
    "SourceKind",
    "SpecState",
    "TokenEndpointAuthMethod",
    "TransportName",
    "is_mode",
]

SourceKind = Literal["flag", "user", "project"]
TransportName = Literal["stdio", "streamable_http", "sse", "websocket"]
Mode = Literal["read-only", "plan", "ask", "auto"]
MODES: tuple[Mode, ...] = get_args(Mode)
"""Every mode, from the most careful to the most trusting (POL-1)."""


def is_mode(value: object) -> TypeGuard[Mode]:
    """Whether `value` names a mode."""
    return value in MODES


OAuthGrant = Literal["authorization_code", "client_credentials", "cross_app_access"]
TokenEndpointAuthMethod = Literal["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]
SpecState = Literal["ok", "failed", "skipped", "untrusted", "disabled"]
"""What the configuration alone says of an entry, before any connection:
`ok` (start it), `failed` (a bad value stops it, `problem` says why), `skipped` (neither
command nor url), `untrusted` (project file of an untrusted workspace), `disabled`."""

DEFAULT_MAX_FILE_BYTES = 33_554_432
DEFAULT_MAX_RESULT_BYTES = 65_536
DEFAULT_MAX_STORED_RESULT_BYTES = 16_777_216


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """A remote server's `oauth` table (AUTH-2), expanded and checked; secrets are values here, never shown.

    Attributes:
        grant: `authorization_code` (a person signs in in a browser), `client_credentials`
            (unattended: the client authenticates itself, no browser) or `cross_app_access`
            (enterprise-managed, SEP-990: the enterprise identity provider's ID token is exchanged
            there for an identity assertion grant, which the authorization server takes).
        client_id: a client registered beforehand at the authorization server; None: mcpyard
            registers (client ID metadata document, else dynamic registration).
        client_secret: that client's secret, from `${secret:NAME}`.
        private_key: a PEM private key, from `${secret:NAME}`, for `private_key_jwt`.
        signing_algorithm: the JWS algorithm of the client assertion (from the key when not set).
        token_endpoint_auth_method: how the client authenticates at the token endpoint; None: chosen
            from what the authorization server offers (`client_secret_basic` first).
        scopes: asked for besides those the server names in its challenge or metadata.
        client_metadata_url: the https URL of mcpyard's client ID metadata document, used as the
            client id where the authorization server supports it.
        issuer: the authorization server the credentials belong to; they are never sent to another.
        redirect_port: the loopback port of the sign-in callback, for a client registered with one.
        idp_token_endpoint: cross-app access: the identity provider's token endpoint (RFC 8693 exchange).
        idp_client_id: cross-app access: mcpyard's client id at the identity provider.
        id_token: cross-app access: the person's ID token from the identity provider, from `${secret:NAME}`.
    """

    grant: OAuthGrant = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    token_endpoint_auth_method: TokenEndpointAuthMethod | None = None
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None
    issuer: str | None = None
    redirect_port: int | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    id_token: str | None = field(default=None, repr=False)


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
    always_offer: tuple[str, ...] = ()
    """Globs on the server's own tool names: these are offered even when the catalog is searched (MOD-4)."""
    roots: tuple[str, ...] = ()
    """Folders the server is told as its roots when it asks (relative ones from the workspace); none: mcpyard does
    not declare roots to it (a server that takes roots may let them replace the folders its arguments name)."""
    connect_timeout_secs: float = 30.0
    call_timeout_secs: float | None = 60.0
    shutdown_timeout_secs: float = 5.0
    enabled: bool = True
    oauth: OAuthSettings | None = field(default=None, repr=False)
    """How to sign in (AUTH-2), when the entry says; None: the defaults (browser sign-in, registering)."""
    secret_values: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """`(name, value)` of every `${secret:…}` expanded into this entry, for redaction."""
    references: tuple[tuple[str, str, str], ...] = ()
    """`(field, reference, outcome)` of every `${…}` in the entry (`set`, `unset`, `default used`…); no values."""

    def task_target(self) -> str:
        """What the server's tasks belong to: its address, or its command line, hashed. A task made by one server is
        never followed on another that took its name (CALL-8)."""
        target = [self.transport, self.url, self.command, list(self.args), self.cwd]
        return hashlib.sha256(json.dumps(target).encode()).hexdigest()

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
            self.oauth,
            self.roots,
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


ToolSearchMode = Literal["auto", "always", "off"]
TOOL_SEARCH_MODES: tuple[ToolSearchMode, ...] = ("auto", "always", "off")


@dataclass(frozen=True, slots=True)
class ToolSearchSettings:
    """When a model is offered `find_tools` in place of every tool (MOD-4).

    Attributes:
        mode: `auto` (past either budget), `always`, or `off` (every tool, however many).
        max_tools: more tools than this are searched for, not listed.
        max_tokens: definitions longer than this (estimated at 4 characters a token) likewise.
    """

    mode: ToolSearchMode = "auto"
    max_tools: int = 40
    max_tokens: int = 10_000


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
    tool_search: ToolSearchSettings = ToolSearchSettings()


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The result of reading every source: servers in priority-merged order, settings, warnings."""

    servers: tuple[ServerSpec, ...]
    settings: HostSettings
    warnings: tuple[str, ...]
    sources: tuple[tuple[SourceKind, Path], ...]
    """The sources that were read, highest priority first."""
