"""Resource subscriptions through the gateway, for clients of both eras (resources pass through, GW-1).

Handshake-era clients `resources/subscribe` on their connection and hear
`notifications/resources/updated` on it; new-era clients name the URIs on a
`subscriptions/listen` stream. Either way the resource is watched at its server
(`connect/_watch.py`, counted) for as long as someone wants it: until the client
unsubscribes, its connection closes, or its listen stream ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from mcpyard._passthrough import on_resource_updated, unwatch_resource, watch_resource
from mcpyard.errors import CallError

if TYPE_CHECKING:
    from mcpyard._host import Host

__all__ = ["MAX_CLIENT_SUBSCRIPTIONS", "MAX_SUBSCRIPTIONS", "Subscriptions"]

MAX_CLIENT_SUBSCRIPTIONS = 256
"""Resources one client may watch at once (per connection, or per listen stream)."""
MAX_SUBSCRIPTIONS = 4096
"""Handshake-era subscriptions of all clients together."""


class Subscriptions:
    """Who watches which shared resource, and the handlers that keep it so."""

    def __init__(
        self,
        host: Host,
        bus: InMemorySubscriptionBus,
        shared_owner: Callable[[str], str | None],
        connection_of: Callable[[ServerRequestContext[Any]], Connection | None],
    ) -> None:
        self._host = host
        self._bus = bus
        self._listener = ListenHandler(bus)
        self._shared_owner = shared_owner
        self._connection_of = connection_of
        self._by_connection: dict[Connection, dict[str, str | None]] = {}
        """Handshake era: connection → URI → the server watched for it (None while the watch starts)."""
        on_resource_updated(host, self._updated)

    def _count(self) -> int:
        return sum(len(uris) for uris in self._by_connection.values())

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        connection = self._connection_of(ctx)
        if self._shared_owner(uri) is None or connection is None:
            raise MCPError(types.INVALID_PARAMS, f"no shared resource {uri!r}")
        uris = self._by_connection.get(connection)
        if uris is not None and uri in uris:
            return types.EmptyResult()
        if (uris is not None and len(uris) >= MAX_CLIENT_SUBSCRIPTIONS) or self._count() >= MAX_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_REQUEST, "too many resource subscriptions; unsubscribe from some first")
        if uris is None:
            uris = self._by_connection[connection] = {}
            # A client that leaves without unsubscribing: its watches end with its connection.
            connection.exit_stack.push_async_callback(self._forget, connection)
        uris[uri] = None  # taken now, so a second subscribe to it while this one runs adds nothing
        try:
            server = await watch_resource(self._host, uri)
        except BaseException as exc:
            uris.pop(uri, None)
            if isinstance(exc, CallError):
                raise MCPError(types.INVALID_PARAMS, exc.message) from None
            raise
        if self._by_connection.get(connection) is not uris or uri not in uris:
            # Unsubscribed, or the client left, while the watch started.
            await unwatch_resource(self._host, server, uri)
            return types.EmptyResult()
        uris[uri] = server
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = self._connection_of(ctx)
        uris = self._by_connection.get(connection) if connection is not None else None
        if uris is not None:
            uri = str(params.uri)
            server = uris.pop(uri, None)
            if server is not None:
                await unwatch_resource(self._host, server, uri)
        return types.EmptyResult()

    async def _forget(self, connection: Connection) -> None:
        for uri, server in self._by_connection.pop(connection, {}).items():
            if server is not None:
                await unwatch_resource(self._host, server, uri)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """New era: the stream's shared resources are watched at their servers for as long as it is open."""
        wanted = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if len(wanted) > MAX_CLIENT_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_PARAMS, f"at most {MAX_CLIENT_SUBSCRIPTIONS} resources on one listen stream")
        watched: list[tuple[str, str]] = []

        async def watch(uri: str) -> None:
            try:
                watched.append((await watch_resource(self._host, uri), uri))
            except Exception:  # honored, and never fires, like an unknown URI
                return

        try:
            async with anyio.create_task_group() as tg:
                for uri in wanted:
                    if self._shared_owner(uri) is not None:
                        tg.start_soon(watch, uri)
            return await self._listener(ctx, params)
        finally:
            with anyio.CancelScope(shield=True):
                for server, uri in watched:
                    await unwatch_resource(self._host, server, uri)

    async def _updated(self, server: str, uri: str) -> None:
        """A watched resource changed: tell new-era listeners and the handshake-era clients subscribed to it."""
        await self._bus.publish(ResourceUpdated(uri=uri))
        for connection, uris in list(self._by_connection.items()):
            if uris.get(uri) == server:
                await connection.notify("notifications/resources/updated", {"uri": uri})
