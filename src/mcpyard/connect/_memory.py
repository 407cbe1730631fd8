"""How servers are reached, as a seam: the configured transport, or a server built in this process.

`Connections` answers, for one server, the transport to reach it by in place of the one its
configuration names, or None for the configured one (the production answer, always).
`InMemoryServers` answers with the SDK's in-memory transport over a server built in this
process: the whole protocol, with no process and no wire. Each connection builds a new server,
as each start of a process would, so a reconnect or a reload meets a fresh one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp.client._transport import Transport

from mcpyard.config import ServerSpec

if TYPE_CHECKING:  # the server side of the SDK is imported only by a program that builds servers
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

__all__ = ["ConfiguredConnections", "Connections", "InMemoryServers", "ServerFactory"]

ServerFactory = Callable[[], "Server[Any] | MCPServer"]
"""Builds one server (an SDK `Server` or `MCPServer`), afresh for each connection."""


class Connections(Protocol):
    """Says how to reach a server in place of its configured transport."""

    def transport(self, spec: ServerSpec) -> Transport | None:
        """The transport to reach `spec`'s server by, or None to use the configured one."""
        ...


class ConfiguredConnections:
    """Every server is reached as its configuration says (production)."""

    def transport(self, spec: ServerSpec) -> None:
        del spec


class InMemoryServers:
    """Servers built in this process by id, reached over the SDK's in-memory transport.

    A server whose id is not in the table is reached as configured. Its configured transport
    still names it everywhere (the status page, `transport`); only the connection differs.
    """

    def __init__(self, servers: Mapping[str, ServerFactory]) -> None:
        self._servers = dict(servers)

    def transport(self, spec: ServerSpec) -> Transport | None:
        from mcp.client._memory import InMemoryTransport

        build = self._servers.get(spec.id)
        return None if build is None else InMemoryTransport(build())
