"""The host as every reader sees it: one immutable `HostView`, published again whenever anything in it changes.

The call pipeline, the status page and the gateway read a view and nothing else of the
host; the host builds a new one when a server's snapshot, the catalog or the configuration
changes, and `newest()` gives whoever waited (an approval card) the one published last.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

import anyio
import mcp_types as types
from mcp import Client

from mcpyard._plan import Plan
from mcpyard.catalog import Catalog, ServerTools, build_catalog, tool_name
from mcpyard.config import HostSettings, ServerSpec
from mcpyard.connect import InputRelay, LogFn, ProgressFn, ServerSnapshot
from mcpyard.policy import PolicySource, Rules
from mcpyard.secrets import Redactor

T = TypeVar("T")

__all__ = ["HostView", "Publisher", "ServerConnection", "ViewCell"]


class ServerConnection(Protocol):
    """Where requests to one running server go (a `Supervisor`)."""

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

    async def request(self, send: Callable[[Client], Awaitable[T]], *, timeout_secs: float | None) -> T: ...

    async def watch(self, uri: str) -> None: ...

    async def unwatch(self, uri: str) -> None: ...

    async def relist(self) -> None: ...


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

    def server_of(self, name: str) -> str | None:
        """The server of tool `name` (as the model sees it): listed now, or listed earlier in this session."""
        entry = self.catalog.get(name)
        if entry is not None:
            return entry.server
        known = self.known.get(name)
        return known[0] if known is not None else None

    def task_target(self, server_id: str) -> str | None:
        """What the tasks of server `server_id` belong to, if it runs (`ServerSpec.task_target`)."""
        spec = self.plan.specs.get(server_id)
        return spec.task_target() if spec is not None else None

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


class Publisher:
    """Builds a host's views and publishes them: the newest in `cell`, and a wake-up for whoever waits."""

    def __init__(self, *, workspace: Path, environ: Mapping[str, str]) -> None:
        self.cell = ViewCell()
        self._workspace = workspace
        self._environ = environ
        self._known: dict[str, tuple[str, str]] = {}
        """Every model-facing name ever listed, with its server: a call to a tool of a stopped server names it."""
        self._changed = anyio.Event()

    @property
    def view(self) -> HostView | None:
        return self.cell.view

    def publish(
        self,
        plan: Plan,
        policies: PolicySource,
        redactor: Redactor,
        servers: Mapping[str, ServerSnapshot],
        connections: Mapping[str, ServerConnection],
        *,
        relist: bool,
    ) -> HostView:
        """A new view; its catalog is built again only when a listing (or the plan) changed."""
        old = self.cell.view
        catalog = old.catalog if old is not None and not relist else self._catalog(plan, redactor, servers)
        settings = plan.config.settings
        view = HostView(
            plan=plan,
            catalog=catalog,
            servers=servers,
            connections=connections,
            policies=policies,
            redactor=redactor,
            known=MappingProxyType(dict(self._known)),
            workspace=self._workspace,
            environ=self._environ,
            rules=Rules(settings.allow, settings.deny),
            cell=self.cell,
        )
        self.cell.view = view
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        return view

    def _catalog(self, plan: Plan, redactor: Redactor, servers: Mapping[str, ServerSnapshot]) -> Catalog:
        listings = [
            ServerTools(server_id, plan.prefixes[server_id], snapshot.tools)
            for server_id in plan.specs
            if (snapshot := servers.get(server_id)) is not None and snapshot.tools
        ]
        # Names given earlier stay with their tools while their servers are configured (CAT-1).
        held = {name: owner for name, owner in self._known.items() if owner[0] in plan.specs}
        catalog = build_catalog(listings, plan.config.settings.tool_name_separator, redactor=redactor, held=held)
        self._known.update((entry.name, (entry.server, entry.tool)) for entry in catalog.entries.values())
        return catalog

    async def changed(self) -> None:
        """Until the next view is published."""
        await self._changed.wait()
