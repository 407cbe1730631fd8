"""Resource subscriptions through the gateway, for clients of both eras (resources pass through, GW-1).

Handshake-era clients `resources/subscribe` on their connection and hear
`notifications/resources/updated` on it; new-era clients name the URIs on a
`subscriptions/listen` stream. Either way the resource is watched at its server
(`connect/_watch.py`, counted) for as long as someone wants it: until the client
unsubscribes, its connection closes, or its listen stream ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from mcpyard.errors import CallError

if TYPE_CHECKING:
    from mcpyard import Host

__all__ = ["MAX_CLIENT_SUBSCRIPTIONS", "MAX_SUBSCRIPTIONS", "Subscriptions"]

MAX_CLIENT_SUBSCRIPTIONS = 256
"""Resources one client may watch at once (per connection, or per listen stream)."""
MAX_SUBSCRIPTIONS = 4096
"""Resources watched for all clients together, in each era."""
NOTIFY_SECS = 2.0
"""How long telling one client of an update may take."""


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
        self._by_connection: dict[Connection, dict[str, _Subscription]] = {}
        """Handshake era: connection → URI → its subscription."""
        self._listened = 0
        """URIs watched for listen streams, all together."""
        host.on_resource_updated(self._updated)

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
        subscription = uris[uri] = _Subscription()  # taken now: a second subscribe while this one runs adds nothing
        try:
            server = await self._host.watch_resource(uri)
        except BaseException as exc:
            if uris.get(uri) is subscription:
                del uris[uri]
            if isinstance(exc, CallError):
                raise MCPError(types.INVALID_PARAMS, exc.message) from None
            raise
        if self._by_connection.get(connection) is not uris or uris.get(uri) is not subscription:
            # Unsubscribed, or the client left, while the watch started.
            with anyio.CancelScope(shield=True):
                await self._host.unwatch_resource(server, uri)
            return types.EmptyResult()
        subscription.server = server
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = self._connection_of(ctx)
        uris = self._by_connection.get(connection) if connection is not None else None
        if uris is not None:
            uri = str(params.uri)
            subscription = uris.pop(uri, None)
            if subscription is not None and subscription.server is not None:
                with anyio.CancelScope(shield=True):
                    await self._host.unwatch_resource(subscription.server, uri)
        return types.EmptyResult()

    async def _forget(self, connection: Connection) -> None:
        """The client left: all its watches end at once (the SDK gives a connection's teardown 5 s)."""
        watched = [(s.server, uri) for uri, s in self._by_connection.pop(connection, {}).items() if s.server]
        async with anyio.create_task_group() as tg:
            for server, uri in watched:
                tg.start_soon(self._host.unwatch_resource, server, uri)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """New era: the stream's shared resources are watched at their servers for as long as it is open."""
        wanted = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if len(wanted) > MAX_CLIENT_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_PARAMS, f"at most {MAX_CLIENT_SUBSCRIPTIONS} resources on one listen stream")
        shared = [uri for uri in wanted if self._shared_owner(uri) is not None]
        if self._listened + len(shared) > MAX_SUBSCRIPTIONS:
            raise MCPError(types.INVALID_REQUEST, "too many resources are watched; close some listen streams first")
        self._listened += len(shared)
        watched: list[tuple[str, str]] = []

        async def watch(uri: str) -> None:
            try:
                watched.append((await self._host.watch_resource(uri), uri))
            except Exception:  # honored, and never fires, like an unknown URI
                return

        try:
            async with anyio.create_task_group() as tg:
                for uri in shared:
                    tg.start_soon(watch, uri)
            return await self._listener(ctx, params)
        finally:
            self._listened -= len(shared)
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as tg:
                    for server, uri in watched:
                        tg.start_soon(self._host.unwatch_resource, server, uri)

    async def _updated(self, server: str, uri: str) -> None:
        """A watched resource changed: tell new-era listeners and the handshake-era clients subscribed to it.

        Each client gets `NOTIFY_SECS`: one that stopped reading holds up no one else.
        """
        await self._bus.publish(ResourceUpdated(uri=uri))

        async def tell(connection: Connection) -> None:
            with anyio.move_on_after(NOTIFY_SECS):
                await connection.notify("notifications/resources/updated", {"uri": uri})

        async with anyio.create_task_group() as tg:
            for connection, uris in list(self._by_connection.items()):
                subscription = uris.get(uri)
                if subscription is not None and subscription.server == server:
                    tg.start_soon(tell, connection)


@dataclass(eq=False, slots=True)
class _Subscription:
    server: str | None = None
    """The server watched for it; None while the watch starts."""
