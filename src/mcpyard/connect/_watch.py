"""The resources someone watches on one server, kept subscribed across reconnects, in either era.

Handshake-era servers take `resources/subscribe` and send `notifications/resources/updated`;
new-era servers take the URIs on one `subscriptions/listen` stream, opened again whenever the
set of watched URIs changes. Either way an update goes to `on_update(uri)`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Awaitable, Callable, Iterator

import anyio
import anyio.abc
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpyard.connect._errors import describe_failure
from mcpyard.errors import CallError

__all__ = ["ResourceWatch"]

UpdateFn = Callable[[str], Awaitable[None]]
WATCH_SECS = 10.0
"""How long subscribing or unsubscribing may take, or a new-era server to acknowledge its listen stream."""


@contextlib.contextmanager
def _handshake_era() -> Iterator[None]:
    """`resources/(un)subscribe` are deprecated in the new era; for handshake-era servers they are the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


class ResourceWatch:
    """Watched URIs of one server, counted: the server is asked once per URI, however many watch it."""

    def __init__(
        self,
        server_id: str,
        on_update: UpdateFn,
        warn: Callable[[str], None],
        on_watched: Callable[[frozenset[str]], None] = lambda uris: None,
    ) -> None:
        self._server_id = server_id
        self._on_update = on_update
        self._warn = warn
        self._on_watched = on_watched
        """Told the watched URIs whenever the set changes."""
        self._counts: dict[str, int] = {}
        self._client: Client | None = None
        self._changed = anyio.Event()
        self._listening: frozenset[str] = frozenset()
        self._heard = anyio.Event()
        self._pending: dict[str, anyio.Event] = {}
        """URIs whose first watcher is subscribing; set once that has settled."""

    @property
    def uris(self) -> frozenset[str]:
        return frozenset(self._counts)

    def _modern(self, client: Client) -> bool:
        return client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS

    async def attach(self, client: Client, tg: anyio.abc.TaskGroup) -> None:
        """A connection is up: subscribe again to everything watched (after a reconnect too)."""
        self._client = client
        if self._modern(client):
            tg.start_soon(self._listen_loop, client)
            return
        for uri in list(self._counts):
            try:
                with anyio.fail_after(WATCH_SECS), _handshake_era():
                    await client.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
            except Exception as exc:  # the others still work; the status page says what failed
                self._warn(f"server {self._server_id!r}: subscribing again to {uri!r} failed: {describe_failure(exc)}")

    def detach(self) -> None:
        self._client = None
        self._listening = frozenset()

    async def watch(self, uri: str) -> None:
        """Count one more watcher of `uri`; the first one subscribes.

        Raises:
            CallError: the server is not connected, does not offer subscriptions, or refused this one.
        """
        while (pending := self._pending.get(uri)) is not None:
            await pending.wait()  # another watcher's subscribe settles first: then look again
        if uri in self._counts:
            self._counts[uri] += 1
            return
        client = self._client
        if client is None:
            raise CallError("server_unavailable", f"server {self._server_id!r} is not connected")
        resources = client.server_capabilities.resources
        if not self._modern(client) and not (resources and resources.subscribe):
            raise CallError("unsupported", f"server {self._server_id!r} does not offer resource subscriptions")
        settled = self._pending[uri] = anyio.Event()
        try:
            if self._modern(client):
                self._counts[uri] = 1
                self._changed.set()
                with anyio.move_on_after(WATCH_SECS):  # not acknowledged in time: watched, and maybe never heard
                    while uri not in self._listening and self._client is client:
                        await self._heard.wait()
            else:
                with anyio.fail_after(WATCH_SECS), _handshake_era():
                    await client.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
                self._counts[uri] = 1
        except Exception as exc:
            self._counts.pop(uri, None)
            raise CallError(
                "server_error", f"server {self._server_id!r} refused to watch {uri!r}: {describe_failure(exc)}"
            ) from None
        except BaseException:
            self._counts.pop(uri, None)
            raise
        finally:
            del self._pending[uri]
            settled.set()
            self._on_watched(self.uris)

    async def unwatch(self, uri: str) -> None:
        """Count one watcher less; the last one unsubscribes."""
        count = self._counts.get(uri, 0)
        if count > 1:
            self._counts[uri] = count - 1
            return
        if self._counts.pop(uri, None) is None:
            return
        self._on_watched(self.uris)
        client = self._client
        if client is None:
            return
        if self._modern(client):
            self._changed.set()
            return
        # One that cannot (or does not answer in time): its updates are dropped by `updated`.
        with contextlib.suppress(Exception), anyio.move_on_after(WATCH_SECS), _handshake_era():
            await client.unsubscribe_resource(uri)  # pyright: ignore[reportDeprecated]

    async def updated(self, uri: str) -> None:
        """The server says `uri` changed; only watched URIs are passed on."""
        if uri in self._counts:
            await self._on_update(uri)

    async def _listen_loop(self, client: Client) -> None:
        """One `subscriptions/listen` stream for the watched URIs, opened again when they change."""
        while True:
            self._changed = anyio.Event()
            uris = self.uris
            async with anyio.create_task_group() as tg:
                if uris:
                    tg.start_soon(self._listen, client, uris)
                else:
                    self._listened(frozenset())
                await self._changed.wait()
                tg.cancel_scope.cancel()

    async def _listen(self, client: Client, uris: frozenset[str]) -> None:
        try:
            async with client.listen(resource_subscriptions=sorted(uris)) as subscription:
                self._listened(uris)
                async for event in subscription:
                    if isinstance(event, ResourceUpdated):
                        await self.updated(event.uri)
        except Exception as exc:  # watching stops; calls and listings still work
            self._warn(f"server {self._server_id!r}: cannot follow resource updates: {describe_failure(exc)}")
            self._listened(uris)

    def _listened(self, uris: frozenset[str]) -> None:
        self._listening = uris
        self._heard.set()
        self._heard = anyio.Event()
