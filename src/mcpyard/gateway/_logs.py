"""Downstream servers' log messages for the gateway's clients: each client's level, during a call and between them.

During a call a message goes to the client that made it, at or above that client's level (set
with `logging/setLevel`, default `info`). A message a server sends while none of its calls runs
goes to every handshake-era client that set a level, on its own channel; new-era clients hear
log messages only on a request's stream, so such a message cannot reach them.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpyard.gateway._context import LEVELS

__all__ = ["DEFAULT_LEVEL", "LogLevels", "send_log_message"]

DEFAULT_LEVEL: types.LoggingLevel = "info"


async def send_log_message(
    session: Any, level: types.LoggingLevel, data: Any, logger: str | None, related: str | None
) -> None:
    """`session.send_log_message` without the SDK's deprecation warning for the handshake era's logging,
    which the gateway serves on purpose: a gateway never prints Python warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        sending = session.send_log_message(level, data, logger, related)
    await sending


class LogLevels:
    """Each client connection's log level, and the sending of messages that belong to no call."""

    def __init__(self, shared: Callable[[str], bool]) -> None:
        self._shared = shared
        """Whether a server's messages may reach the gateway's clients (it shares tools)."""
        self._levels: weakref.WeakKeyDictionary[Connection, types.LoggingLevel] = weakref.WeakKeyDictionary()

    def set(self, connection: Connection | None, level: types.LoggingLevel) -> None:
        if connection is not None:
            self._levels[connection] = level

    def wants(self, connection: Connection | None, level: types.LoggingLevel) -> bool:
        """Whether a message at `level` is at or above what this client asked for."""
        asked = self._levels.get(connection, DEFAULT_LEVEL) if connection is not None else DEFAULT_LEVEL
        return LEVELS.index(level) >= LEVELS.index(asked)

    async def between_calls(self, server: str, message: types.LoggingMessageNotificationParams) -> None:
        """A message sent while none of the server's calls runs: to each handshake-era client that set a level."""
        if not self._shared(server):
            return
        params = message.model_dump(by_alias=True, exclude_none=True, mode="json")
        for connection, level in list(self._levels.items()):
            if connection.protocol_version in MODERN_PROTOCOL_VERSIONS or not connection.has_standalone_channel:
                continue
            if LEVELS.index(message.level) < LEVELS.index(level):
                continue
            try:
                await connection.notify("notifications/message", params)
            except Exception:  # a client that went away: nothing to tell it
                self._levels.pop(connection, None)
