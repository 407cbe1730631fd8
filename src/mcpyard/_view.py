"""The host as every reader sees it: one immutable `HostView`, published again whenever anything in it changes.

The call pipeline, the status page and the gateway read a view and nothing else of the
host; the host builds a new one when a server's snapshot, the catalog or the configuration
changes, and `newest()` gives whoever waited (an approval card) the one published last.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types

from mcpyard.catalog import Catalog, tool_name
from mcpyard.config import HostSettings, ServerSpec
from mcpyard.connect import InputRelay, LogFn, ProgressFn, ServerSnapshot
from mcpyard.policy import PolicySource, Rules
from mcpyard.secrets import Redactor

if TYPE_CHECKING:
    from mcpyard._plan import Plan

__all__ = ["HostView", "ServerConnection", "ViewCell"]


class ServerConnection(Protocol):
    """Where a call to one server goes (a `Supervisor`)."""

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout_secs: float | None,
        on_progress: ProgressFn | None = None,
        on_log: LogFn | None = None,
        on_input: InputRelay | None = None,
    ) -> types.CallToolResult: ...


class ViewCell:
    """Holds the newest view a host published; every view of that host shares it."""

    __slots__ = ("view",)

    def __init__(self) -> None:
        self.view: HostView | None = None


@dataclass(frozen=True, slots=True, eq=False)
class HostView:
    """Everything a call, the status page or the gateway reads of a host at one moment.

    Attributes:
        plan: the configuration and what it says to run (who shadows whom, tool prefixes).
        catalog: the model-facing tools of the connected servers (CAT).
        servers: each running server's last snapshot, by id.
        connections: where calls to each running server go, by id.
        policies: reviewed per-tool policies (POL-5).
        redactor: every secret value mcpyard sends, replaced by its name in what comes back (SEC-3).
        known: every model-facing name listed in this host session, with its server and tool.
        rules: the allow and deny rules (POL-4).
    """

    plan: Plan
    catalog: Catalog
    servers: Mapping[str, ServerSnapshot]
    connections: Mapping[str, ServerConnection]
    policies: PolicySource
    redactor: Redactor
    known: Mapping[str, tuple[str, str]]
    workspace: Path
    environ: Mapping[str, str]
    rules: Rules
    cell: ViewCell = field(default_factory=ViewCell, repr=False)

    @property
    def settings(self) -> HostSettings:
        return self.plan.config.settings

    @property
    def specs(self) -> Mapping[str, ServerSpec]:
        """The servers that run (configured, valid, not shadowed), by id."""
        return self.plan.specs

    def newest(self) -> HostView:
        """The view the host published last (this one, unless something changed since)."""
        return self.cell.view or self

    def removed(self) -> dict[str, tuple[str, str]]:
        """Reviewed tools a connected server no longer lists, by model-facing name (POL-5)."""
        found: dict[str, tuple[str, str]] = {}
        separator = self.settings.tool_name_separator
        for server_id, snapshot in self.servers.items():
            reviewed = self.policies.reviewed(server_id)
            if not reviewed or not snapshot.connected:
                continue
            listed = {str(wire.get("name")) for wire in snapshot.tools}
            prefix = self.plan.prefixes[server_id]
            for tool in sorted(set(reviewed) - listed):
                found[tool_name(prefix, separator, tool)] = (server_id, tool)
        return found
