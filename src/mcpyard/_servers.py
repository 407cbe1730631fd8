"""The host's running servers: one supervisor each, started, kept or stopped as the plan changes (CONN, CFG-7).

A lazy host starts a server only when something needs it: until then it is pending, offered
with the listing its definition gave last time (if any), and shown as not started.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

import anyio
import anyio.abc
import mcp_types as types

from mcpyard._listings import LISTINGS_FILE, ListingCache, MemoryListings
from mcpyard._plan import HostOptions, Plan, Running, plan_changes
from mcpyard._view import HostView
from mcpyard.auth import AUTH_FILE, AuthStore
from mcpyard.catalog import clean_and_redact_json
from mcpyard.config import ServerSpec
from mcpyard.connect import ClientIdentity, Reaper, ServerSnapshot, State, Supervisor
from mcpyard.secrets import Redactor

__all__ = ["CONNECT_SLACK", "NOT_STARTED", "Servers"]

NOT_STARTED = "not started yet: mcpyard starts it when a call needs one of its tools"

CONNECT_SLACK = 3.0
"""Beyond a server's connect and shutdown timeouts (a failed start is torn down before it is
reported), how long opening waits before giving up on it."""
TERM_GRACE = 2.0


class Servers:
    """Supervisors by server id, with the spec each was started with and its last snapshot.

    Every supervisor tells `on_change` of its snapshots and redacts what it keeps with the host's `redactor`;
    the reaper stops their process groups even if mcpyard itself is killed (CONN-5).
    """

    def __init__(
        self,
        options: HostOptions,
        identity: ClientIdentity,
        *,
        redactor: Callable[[], Redactor],
        on_change: Callable[[ServerSnapshot], None],
    ) -> None:
        self._options = options
        self._identity = identity
        self._redactor = redactor
        """The host's current redactor (a reload brings a new one): looked up on each use."""
        self._on_change = on_change
        self._reaper = Reaper()
        self._auth_store = options.auth_store or AuthStore(options.data_home / AUTH_FILE)
        self._supervisors: dict[str, Supervisor] = {}
        self._started: dict[str, ServerSpec] = {}
        self._finished: dict[str, anyio.Event] = {}
        self._snapshots: dict[str, ServerSnapshot] = {}
        self._listeners: list[Callable[[str, str], Awaitable[None]]] = []
        """`(server, uri)` callbacks for updates of watched resources (the gateway's subscriptions)."""
        self._log_listeners: list[Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]]] = []
        self._pending: dict[str, ServerSpec] = {}
        """Servers of a lazy host that nothing has needed yet."""
        listings = options.listings if options.listings is not None else ListingCache(options.data_home / LISTINGS_FILE)
        self.listings = listings
        """Each server definition's last listing: a pending server's tools, a name's owner before it connects."""
        self._unwatch = listings.watch(self._listed_elsewhere) if isinstance(listings, MemoryListings) else None

    @property
    def reaper(self) -> Reaper:
        """The host's watchdog process, which also starts its pre_call hooks where it can (POL-6)."""
        return self._reaper

    def get(self, server_id: str) -> Supervisor | None:
        return self._supervisors.get(server_id)

    def snapshots(self) -> Mapping[str, ServerSnapshot]:
        return MappingProxyType(dict(self._snapshots))

    def spec_of(self, server_id: str) -> ServerSpec | None:
        """The definition a server was started with (or waits to start with)."""
        return self._started.get(server_id) or self._pending.get(server_id)

    def pending(self) -> Mapping[str, ServerSpec]:
        """The servers of a lazy host that have not been started."""
        return MappingProxyType(dict(self._pending))

    def busy_among(self, new: Plan) -> int:
        """The calls in flight to servers that `new` would stop or restart."""
        return sum(
            supervisor.in_flight
            for server_id, supervisor in self._supervisors.items()
            if new.specs.get(server_id) != self._started.get(server_id)
        )

    def settled(self, server_id: str) -> bool:
        """Whether a started server's first connection attempt has ended (a pending one has not begun)."""
        supervisor = self._supervisors.get(server_id)
        return supervisor is not None and supervisor.settled

    def connections(self) -> Mapping[str, Supervisor]:
        return MappingProxyType(dict(self._supervisors))

    def heard(self, snapshot: ServerSnapshot) -> ServerSnapshot | None:
        """Keep a running server's new snapshot; returns the one it replaces (None: not a running server)."""
        before = self._snapshots.get(snapshot.id)
        if before is not None:
            self._snapshots[snapshot.id] = snapshot
        return before

    async def apply(
        self, old: Plan | None, new: Plan, tg: anyio.abc.TaskGroup, *, lazy: bool = False
    ) -> list[ServerSpec]:
        """Stop servers that left, changed, failed or stopped; start new and changed ones. Returns those started.

        `lazy`: new and changed servers wait, pending, until `start` is asked for them.
        """
        self._pending = {
            server_id: spec for server_id, spec in self._pending.items() if new.specs.get(server_id) == spec
        }
        running = {
            server_id: Running(self._started[server_id], s.snapshot.state not in (State.FAILED, State.STOPPED))
            for server_id, s in self._supervisors.items()
            if not self._finished[server_id].is_set()
        }
        changes = plan_changes(old, new, running)
        for server_id in [*changes.stop, *(i for i in self._supervisors if i not in running)]:
            self._supervisors[server_id].request_stop()
            await self._finished[server_id].wait()
            for table in (self._supervisors, self._started, self._finished, self._snapshots):
                table.pop(server_id, None)
        starting = [spec for spec in changes.start if spec.id not in self._pending]
        if lazy:
            for spec in starting:
                self._pending[spec.id] = spec
                self._snapshots[spec.id] = self._placeholder(spec)
            return []
        for spec in starting:
            self._start(spec, tg)
        return starting

    def _listed_elsewhere(self) -> None:
        """The program replaced the listings: each pending server whose listing changed is offered with it."""
        for server_id, spec in list(self._pending.items()):
            placeholder = self._placeholder(spec)
            if (before := self._snapshots.get(server_id)) is None or before.tools != placeholder.tools:
                self._on_change(placeholder)

    def _placeholder(self, spec: ServerSpec) -> ServerSnapshot:
        """A pending server as the host shows it: not started, with the tools its definition listed last time."""
        return ServerSnapshot(
            spec.id,
            state=State.STOPPED,
            reason=NOT_STARTED,
            transport=spec.transport,
            tools=tuple(self.listings.get(spec) or ()),
        )

    def keep_listing(self, snapshot: ServerSnapshot, tg: anyio.abc.TaskGroup) -> None:
        """Keep a connected server's new listing for the next start (its owner known before anything connects); a
        listing holding a secret mcpyard sent is not kept (what is stored is only what may be shown)."""
        if (spec := self.spec_of(snapshot.id)) is not None:
            put = functools.partial(self.listings.put, spec, snapshot.tools, holds_secret=self._redactor().contains)
            tg.start_soon(anyio.to_thread.run_sync, put)

    async def ready_for(self, name: str, view: HostView, tg: anyio.abc.TaskGroup | None) -> str | None:
        """For a lazy host: start, and wait for, only the server a call to `name` needs.

        Returns the definition hash the caller was offered when it came from a kept listing: the
        live tool must still have it (the listing is never trusted for the call itself).
        """
        entry = view.catalog.get(name)
        owners = [entry.server] if entry is not None else view.plan.owners_by_prefix(name)
        needed = [owner for owner in owners if owner in self._pending or not self.settled(owner)]
        if not needed or tg is None:
            return None
        offered = entry.definition_hash if entry is not None and entry.server in self._pending else None
        await self.start(needed, tg)
        return offered

    async def start(self, server_ids: list[str], tg: anyio.abc.TaskGroup) -> None:
        """Start the pending ones of these servers, then wait until each started one settled (within its limits)."""
        for server_id in server_ids:
            if (spec := self._pending.pop(server_id, None)) is not None:
                self._start(spec, tg)
        await self.settle([spec for server_id in server_ids if (spec := self._started.get(server_id)) is not None])

    def _start(self, spec: ServerSpec, tg: anyio.abc.TaskGroup) -> None:
        options = self._options
        supervisor = Supervisor(
            spec,
            workspace=options.workspace,
            environ=options.environ,
            identity=self._identity,
            on_change=self._on_change,
            reaper=self._reaper,
            redact=self._redact,
            auth_store=self._auth_store,
            open_browser=options.open_browser,
            relay_input=options.relay_input,
            elicit=options.elicit,
            on_resource_updated=self._resource_updated,
            on_server_log=self._server_log,
            egress=options.egress,
            connections=options.connections,
        )
        finished = anyio.Event()

        async def run_server() -> None:
            try:
                await supervisor.run()
            finally:
                finished.set()

        self._supervisors[spec.id] = supervisor
        self._started[spec.id] = spec
        self._finished[spec.id] = finished
        self._snapshots[spec.id] = supervisor.snapshot
        tg.start_soon(run_server, name=f"mcpyard server {spec.id}")

    async def settle(self, started: list[ServerSpec]) -> None:
        """Wait until each started server connected, failed or waits for sign-in, within its own time limits."""
        if not started:
            return
        limit = max(s.connect_timeout_secs + s.shutdown_timeout_secs for s in started) + TERM_GRACE + CONNECT_SLACK
        with anyio.move_on_after(limit):
            for spec in started:
                if (supervisor := self._supervisors.get(spec.id)) is not None:
                    await supervisor.wait_settled()

    def listen_logs(self, listener: Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]]) -> None:
        """Call `listener(server, message)` for each log message a server sends while none of its calls runs."""
        self._log_listeners.append(listener)

    def _redact(self, text: str) -> str:
        return self._redactor().redact(text)

    async def _server_log(self, server_id: str, message: types.LoggingMessageNotificationParams) -> None:
        # Server text like any other: cleaned, then redacted, before anyone hears it (SEC-3).
        data = clean_and_redact_json(message.model_dump(by_alias=True, exclude_none=True), self._redactor().redact_json)
        message = types.LoggingMessageNotificationParams.model_validate(data)
        for listener in list(self._log_listeners):
            with contextlib.suppress(Exception):  # one listener's failure is not another's
                await listener(server_id, message)

    def listen(self, listener: Callable[[str, str], Awaitable[None]]) -> None:
        """Call `listener(server, uri)` when a watched resource changes."""
        self._listeners.append(listener)

    async def _resource_updated(self, server_id: str, uri: str) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # one listener's failure is not another's
                await listener(server_id, uri)

    async def stop_all(self, leaving: BaseException | None) -> None:
        """Stop every server (CONN-5), in a hurry if the host was interrupted (Ctrl-C, a cancelled scope).

        `leaving`: the exception the host is closed with, if any; then the host's task group waits for the
        servers. Without one they are waited for here, and a cancellation meanwhile hurries them.
        """
        interrupted = isinstance(leaving, (anyio.get_cancelled_exc_class(), KeyboardInterrupt))
        for supervisor in self._supervisors.values():
            supervisor.request_stop()
            if interrupted:
                supervisor.hurry()
        if leaving is not None:
            return
        try:
            for finished in list(self._finished.values()):
                await finished.wait()
        except anyio.get_cancelled_exc_class():
            for supervisor in self._supervisors.values():
                supervisor.hurry()
            raise

    async def close(self) -> None:
        """After every server stopped: the reaper ends too (and a program's listings are no longer watched)."""
        if self._unwatch is not None:
            self._unwatch()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._reaper.close)
