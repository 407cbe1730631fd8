"""The status page's data, built by one pure function of a host view: `Host.status()`, `status --json` (API-2)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpyard.catalog import RefusedTool, clean_and_redact, clean_text
from mcpyard.config import ServerSpec, source_words

if TYPE_CHECKING:
    from mcpyard._view import HostView

__all__ = ["ServerState", "ServerStatus", "Status", "ToolStatus", "build_status"]

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
    refused_tools: tuple[RefusedTool, ...] = ()
    """Tools the server lists that are not offered, each with why (a schema past a bound)."""
    stderr: tuple[str, ...] = ()
    """The last lines a stdio server wrote to its standard error, cleaned and redacted (what `doctor` shows)."""

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
            "refused_tools": [
                {"name": tool.name, "tool": tool.tool, "reason": tool.reason} for tool in self.refused_tools
            ],
            "stderr": list(self.stderr),
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


def build_status(view: HostView, *, session_id: str, mode: str, also: Iterable[str] = ()) -> Status:
    """Every configured server with its state and reason, its tools and their policies (CLI-1, API-2).

    `also`: more warnings of the session (tools a model format left out, MOD-1).

    Texts a server or a project file controls (reasons, notes, warnings, tool names) are cleaned
    here, whatever reads them (the JSON too), and redacted once more with the view's redactor.
    """
    redact = view.redactor.redact
    warnings = [clean_and_redact(text, redact) for text in view.plan.config.warnings]
    warnings += view.catalog.warnings
    servers: list[ServerStatus] = []
    removed = view.removed()
    for spec in view.plan.config.servers:
        servers.append(_server_status(view, spec, removed))
        snapshot = view.servers.get(spec.id)
        if snapshot is not None:
            warnings.extend(text for w in snapshot.warnings if (text := clean_and_redact(w, redact)) not in warnings)
        warnings.extend(
            f"server {refused.server!r}: tool {clean_text(refused.tool)!r} is not offered: {refused.reason} "
            "(report it to the server's maintainers)"
            for refused in view.catalog.refused_of_server(spec.id)
        )
    warnings.extend(text for text in also if text not in warnings)
    return Status(
        session_id=session_id, mode=mode, workspace=view.workspace, warnings=tuple(warnings), servers=tuple(servers)
    )


def _server_status(view: HostView, spec: ServerSpec, removed: dict[str, tuple[str, str]]) -> ServerStatus:
    from mcpyard._plan import header_names, websocket_note

    plan = view.plan
    base: dict[str, Any] = {
        "id": spec.id,
        "name": plan.prefixes[spec.id],
        "source": spec.source,
        "transport": spec.transport,
        **header_names(spec),
        "command": spec.command,
        "url": spec.url,
    }
    redact = view.redactor.redact
    if spec.state != "ok":
        reason = clean_and_redact(spec.problem, redact) if spec.problem else spec.problem
        return ServerStatus(state=spec.state, reason=reason, **base)
    if (owner := plan.shadowed_by.get(spec.id)) is not None:
        reason = (
            f"shadowed by server {owner.id!r} from the {source_words(owner.source)} {owner.source_path}: "
            f"both use the tool prefix {plan.prefixes[spec.id]!r}; rename one with `name`"
        )
        return ServerStatus(state="shadowed", reason=reason, **base)
    snapshot = view.servers.get(spec.id)
    if snapshot is None:  # being started by a reload right now
        return ServerStatus(state="connecting", reason="starting", **base)
    base["transport"] = snapshot.transport
    policies = view.policies
    tools = tuple(
        ToolStatus(
            entry.name,
            clean_text(entry.tool),
            dict(entry.annotations),
            entry.definition_hash,
            policies.policy(entry.server, entry.tool, entry.definition_hash),
        )
        for entry in view.catalog.of_server(spec.id)
    )
    reviewed = policies.reviewed(spec.id)
    tools += tuple(
        ToolStatus(name, clean_text(tool), {}, reviewed.get(tool, ""), "removed")
        for name, (server, tool) in removed.items()
        if server == spec.id
    )
    return ServerStatus(
        state=snapshot.state.value,
        reason=clean_and_redact(snapshot.reason, redact) if snapshot.reason else None,
        protocol_version=clean_text(snapshot.protocol_version) if snapshot.protocol_version else None,
        tools=tools,
        instructions_bytes=len((snapshot.instructions or "").encode()),
        sign_in_url=snapshot.sign_in_url if snapshot.state == "waiting_for_sign_in" else None,
        note=clean_and_redact(snapshot.note, redact) if snapshot.note else websocket_note(spec),
        refused_tools=tuple(view.catalog.refused_of_server(spec.id)),
        stderr=tuple(clean_and_redact(line, redact) for line in snapshot.stderr),
        **base,
    )
