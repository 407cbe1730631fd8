"""The status page's data: `Host.status()` and `mcpyard status --json` (CLI-1, API-2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["ServerState", "ServerStatus", "Status", "ToolStatus"]

ServerState = Literal[
    "connected",
    "failed",
    "stopped",
    "skipped",
    "shadowed",
    "untrusted",
    "disabled",
    "waiting_for_sign_in",
    "connecting",
]


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """One tool on the status page."""

    name: str
    tool: str
    annotations: dict[str, Any]
    definition_hash: str
    policy: str | None = None
    """The pinned policy (POL-5): `run_freely`, `ask_first`, `off`; `changed` when the definition
    moved since it was reviewed; `removed` when the server no longer lists it. None: not pinned."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tool": self.tool,
            "annotations": self.annotations,
            "definition_hash": self.definition_hash,
            "policy": self.policy,
        }


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One configured server on the status page."""

    id: str
    name: str
    source: str
    state: ServerState
    reason: str | None = None
    transport: str | None = None
    protocol_version: str | None = None
    tools: tuple[ToolStatus, ...] = ()
    headers_sent: tuple[str, ...] = ()
    headers_not_sent: tuple[str, ...] = ()
    instructions_bytes: int = 0
    sign_in_url: str | None = None
    note: str | None = None
    command: str | None = None
    url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "state": self.state,
            "reason": self.reason,
            "transport": self.transport,
            "protocol_version": self.protocol_version,
            "tools": [tool.to_json() for tool in self.tools],
            "headers_sent": list(self.headers_sent),
            "headers_not_sent": list(self.headers_not_sent),
            "instructions_bytes": self.instructions_bytes,
            "sign_in_url": self.sign_in_url,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class Status:
    """The whole status page."""

    session_id: str
    mode: str
    workspace: Path
    warnings: tuple[str, ...]
    servers: tuple[ServerStatus, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "mode": self.mode,
            "workspace": str(self.workspace),
            "warnings": list(self.warnings),
            "servers": [server.to_json() for server in self.servers],
        }
