"""What a host knows now, read from the view it published last: tools, servers, history, status (API-1, API-2)."""

from __future__ import annotations

from mcpyard._status import Status, build_status
from mcpyard._tools import READ_RESULT_INFO, ToolInfo, offered_tools
from mcpyard._view import HostView, Publisher
from mcpyard.catalog import Catalog
from mcpyard.config import LoadedConfig, Mode
from mcpyard.connect import ServerSnapshot
from mcpyard.errors import StateError
from mcpyard.model import ToolFormatter
from mcpyard.pipeline import CallRecord, MemoryRecorder, Session

__all__ = ["HostReading"]


class HostReading:
    """The host's read side (a part of `Host`): every answer comes from its newest view, never from a server."""

    session: Session
    _views: Publisher
    _history: MemoryRecorder
    _formats: ToolFormatter

    @property
    def view(self) -> HostView:
        """What the host knows now, as one immutable view (replaced, never changed)."""
        view = self._views.view
        if view is None:
            raise StateError("the host is not open")
        return view

    @property
    def config(self) -> LoadedConfig:
        return self.view.plan.config

    @property
    def catalog(self) -> Catalog:
        return self.view.catalog

    @property
    def mode(self) -> Mode:
        return self.session.mode

    @property
    def session_id(self) -> str:
        return self.session.id

    def tools(self) -> list[ToolInfo]:
        """The model-facing tools of every connected server (CAT-1, CAT-3, CAT-4), then the built-in `read_result`."""
        return [*offered_tools(self.view), READ_RESULT_INFO]

    def server_tools(self) -> list[ToolInfo]:
        """The model-facing tools of the connected servers only (a pinned `off` or changed tool is held back)."""
        return offered_tools(self.view)

    def servers(self) -> list[ServerSnapshot]:
        """Each running server as its supervisor last saw it: state, listings, process."""
        return list(self.view.servers.values())

    def server(self, server_id: str) -> ServerSnapshot | None:
        """One running server's last snapshot, or None when it does not run (not configured, skipped, shadowed)."""
        return self.view.servers.get(server_id)

    def history(self) -> list[CallRecord]:
        """This session's calls, oldest first (the last 1,000): what ran, was refused or failed, and why."""
        return self._history.records()

    def status(self) -> Status:
        """Every configured server with its state and reason (CLI-1, API-2)."""
        return build_status(self.view, session_id=self.session_id, mode=self.mode, also=self._formats.warnings())
