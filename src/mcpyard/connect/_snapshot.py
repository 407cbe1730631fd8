"""What one server looks like at a moment: its state and listings, published whole on every change (CLI-1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["ServerSnapshot", "State"]


class State(StrEnum):
    """Where a server's connection is in its life."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"
    """Not connected: never got there (the reason says why), or a remote one that dropped and is retried."""
    STOPPED = "stopped"
    """A stdio server whose process ended, or any server stopped by mcpyard."""
    WAITING_FOR_SIGN_IN = "waiting_for_sign_in"


@dataclass(frozen=True, slots=True)
class ServerSnapshot:
    """One server as its supervisor last saw it; immutable, replaced whole on every change.

    Texts here (reason, note, warnings) are already redacted; listings are in wire (JSON) form.
    """

    id: str
    state: State = State.CONNECTING
    reason: str | None = None
    note: str | None = None
    """Something the status page should say even while connected (a restart, a fallback)."""
    transport: str | None = None
    """The transport in use (`sse` after a streamable HTTP server refused, CONN-1)."""
    protocol_version: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    resources: tuple[Mapping[str, Any], ...] = ()
    templates: tuple[Mapping[str, Any], ...] = ()
    prompts: tuple[Mapping[str, Any], ...] = ()
    instructions: str | None = None
    sign_in_url: str | None = None
    """The sign-in page's address while waiting for sign-in (AUTH-2)."""
    warnings: tuple[str, ...] = ()
    pid: int | None = None
    """The stdio server's process id, once started."""
    stderr: tuple[str, ...] = ()
    """The last lines a stdio server wrote to its standard error (redacted), as of this snapshot."""
    watched: frozenset[str] = frozenset()
    """Resource URIs watched at this server for the gateway's clients (counted once each)."""

    @property
    def connected(self) -> bool:
        return self.state is State.CONNECTED
