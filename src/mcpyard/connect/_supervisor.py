"""One supervisor per server: connect, list, follow changes, reconnect, stop; a snapshot per change (CONN-1 to 6).

The supervisor's fields are its own: everyone else sees the server through the immutable
`ServerSnapshot` it publishes (to `on_change`, and as `snapshot`), and reaches it through
its methods: `call`, `request`, `watch`, `unwatch`, `complete_sign_in`, `request_stop`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client._transport import Transport
from mcp.client.session import IncomingMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpyard.auth import AuthStore, SignIn
from mcpyard.catalog import clean_and_redact
from mcpyard.config import ServerSpec
from mcpyard.connect._calls import CallChannel, LogFn, ProgressFn
from mcpyard.connect._deprecations import Deprecations
from mcpyard.connect._egress import EgressGuard
from mcpyard.connect._environment import minimal_environment_note
from mcpyard.connect._http import HttpObservations
from mcpyard.connect._input import InputRelay, InputRouter
from mcpyard.connect._interruptions import CANCEL_GRACE, GONE, Interruptions
from mcpyard.connect._listing import ToolChanges, list_extras, list_tools
from mcpyard.connect._memory import ConfiguredConnections, Connections
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._snapshot import ServerSnapshot, State
from mcpyard.connect._stdio import StdioProcess, StdioTransport
from mcpyard.connect._tasks import TASK_CALLS
from mcpyard.connect._transports import ClientIdentity, Connector, failure_reason, timeout_reason
from mcpyard.connect._watch import ResourceWatch

__all__ = ["CANCEL_GRACE", "Supervisor"]

T = TypeVar("T")
_TEXTS = frozenset({"reason", "note", "protocol_version", "sign_in_url", "instructions"})
"""Snapshot fields that hold text a server may control."""

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
_HANDSHAKE_VERSIONS: frozenset[str] = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)


class Supervisor(Interruptions):
    """Owns one server's connection for the life of a host session.

    `run()`, its task, connects within `connect_timeout_secs`, lists every page of tools, keeps the
    listing fresh and stops the server when asked or cancelled; calls come from other tasks (`call()`).
    """

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        environ: Mapping[str, str],
        identity: ClientIdentity,
        on_change: Callable[[ServerSnapshot], None],
        reaper: Reaper | None = None,
        redact: Callable[[str], str] = str,
        auth_store: AuthStore | None = None,
        open_browser: bool = False,
        relay_input: bool = False,
        elicit: bool = False,
        on_resource_updated: Callable[[str, str], Awaitable[None]] | None = None,
        on_server_log: Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]] | None = None,
        egress: EgressGuard | None = None,
        connections: Connections | None = None,
    ) -> None:
        if egress is not None:
            # Through the outbound guard, no connection attempt outlasts its deadline (NET-2).
            spec = replace(spec, connect_timeout_secs=min(spec.connect_timeout_secs, egress.deadline_secs))
        self._spec = spec
        self._connector = Connector(spec, workspace, environ, reaper, auth_store, open_browser, egress)
        self._connections = connections or ConfiguredConnections()
        self._identity = identity
        self._on_change = on_change
        self._redact = redact
        """Applied to server text kept here (stderr lines, error texts) before it is ever cut."""
        self._snapshot = ServerSnapshot(spec.id, transport=spec.transport)
        self._inputs = InputRouter(spec.id) if relay_input or elicit else None
        """Sampling and elicitation are declared only when calls can relay them (the gateway); elicitation
        also when the host has an elicitor to ask."""
        self._sampling = relay_input
        self._calls = CallChannel(
            spec.id,
            redact=redact,
            inputs=self._inputs,
            snapshot=lambda: self._snapshot,
            stdio=self._is_stdio,
            traced=spec.transport in ("streamable_http", "sse"),
            on_lost=self._connection_lost,
            on_abandoned=self._after_abandon,
            on_idle_log=functools.partial(on_server_log, spec.id) if on_server_log is not None else None,
            limit_secs=egress.deadline_secs if egress is not None else None,
            max_response_bytes=egress.max_response_bytes if egress is not None else None,
        )
        sampling = self._inputs.sampling if self._inputs is not None else None
        roots = [workspace / Path(root).expanduser() for root in spec.roots]  # declared to these servers only
        self._deprecations = Deprecations(spec.id, self._warn, self._calls.on_log, sampling, roots)
        self._on_resource_updated = on_resource_updated
        self._watch = ResourceWatch(spec.id, self._resource_updated, self._warn, self._watched)
        self._sign_in: SignIn | None = None
        self._client: Client | None = None
        self._settled = anyio.Event()
        self._stop = anyio.Event()
        self._end = anyio.Event()
        self._changes = ToolChanges(spec.id, self._warn, lambda tools: self._publish(tools=tools))
        self._restart = False
        self._attempt_connected = False
        self._connect_scope: anyio.CancelScope | None = None
        self._broken: str | None = None
        """Why this connection was ended from here: the server sent a message that cannot be read."""
        self._reconnecting = False
        """A remote server that was connected and dropped: its tools stay listed until it is back."""
        self._stdio: StdioTransport | None = None
        self._process: StdioProcess | None = None
        """The stdio server's process as last started (its stderr tail goes into every snapshot)."""
        self._tg: anyio.abc.TaskGroup | None = None
        """The connection's task group: background work that ends with the connection."""

    # ----------------------------------------------------------------- what others see

    @property
    def snapshot(self) -> ServerSnapshot:
        return self._snapshot

    @property
    def in_flight(self) -> int:
        """Calls to this server not yet answered."""
        return self._calls.in_flight

    @property
    def settled(self) -> bool:
        """Whether the first connection attempt has ended (connected, failed, or waiting on a person)."""
        return self._settled.is_set()

    async def wait_settled(self) -> None:
        """Until the first connection attempt has ended, connected or not (or a sign-in waits on a person)."""
        await self._settled.wait()

    def _publish(self, **changes: Any) -> None:
        if self._process is not None:
            changes["stderr"] = tuple(self._process.stderr_tail)
        for key in _TEXTS.intersection(changes):
            # Server text goes everywhere from here, JSON included: cleaned, then redacted (CLI-1, SEC-3).
            if isinstance(text := changes[key], str):
                changes[key] = clean_and_redact(text, self._redact)
        self._snapshot = replace(self._snapshot, **changes)
        # Calls go through only while connected (not while signing in again, or reconnecting).
        self._calls.client = self._client if self._snapshot.state is State.CONNECTED else None
        self._calls.raw = self._stdio.raw if self._stdio is not None and self._calls.client is not None else None
        self._on_change(self._snapshot)

    def _warn(self, text: str) -> None:
        text = clean_and_redact(text, self._redact)
        if text not in self._snapshot.warnings:
            self._publish(warnings=(*self._snapshot.warnings, text))

    def _watched(self, uris: frozenset[str]) -> None:
        self._publish(watched=uris)

    @property
    def _is_stdio(self) -> bool:
        return self._spec.transport == "stdio"

    # ----------------------------------------------------------------- lifecycle

    def request_stop(self) -> None:
        self._stop.set()
        self._end.set()
        if self._connect_scope is not None and not self._attempt_connected:
            # A connect in progress (a slow start, a reconnect) is abandoned at once.
            self._connect_scope.cancel()

    async def run(self) -> None:
        """Connect and stay connected until asked to stop; reconnect remote servers that drop (CONN-4)."""
        backoff = BACKOFF_FIRST
        try:
            while not self._stop.is_set():
                was_connected = await self._connect_once()
                if self._stop.is_set():
                    break
                if self._restart:
                    self._restart = False
                    continue
                if self._is_stdio:
                    break
                if was_connected:
                    self._reconnecting = True
                    backoff = BACKOFF_FIRST
                elif not self._reconnecting:
                    break  # never connected: the reason stands until reload
                # Keep the tools, refuse calls, retry with backoff.
                reason = self._broken if was_connected else self._snapshot.reason
                why = f": {reason}" if reason else ""
                self._publish(state=State.FAILED, reason=f"connection lost{why}; reconnecting in {backoff:g} s")
                with anyio.move_on_after(backoff):
                    await self._stop.wait()
                backoff = min(backoff * 2, BACKOFF_MAX)
        finally:
            if self._stop.is_set() and self._snapshot.state in (State.CONNECTED, State.CONNECTING):
                self._publish(state=State.STOPPED, reason="stopped by mcpyard", tools=())
            self._publish(resources=(), templates=(), prompts=())
            self._settled.set()

    async def _connect_once(self) -> bool:
        """One connection's life. Returns whether it got connected."""
        self._end = anyio.Event()
        self._attempt_connected = False
        self._broken = None
        self._publish(state=State.CONNECTING)
        observations = HttpObservations(session_id=self._identity.session_id)
        process = StdioProcess(redact=self._redact)
        self._process = process if self._is_stdio else None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self._spec.connect_timeout_secs) as scope:
                self._connect_scope = scope
                try:
                    await self._session(await self._transport(observations, process), scope)
                except Exception:
                    if self._attempt_connected or not self._connector.falls_back(
                        self._snapshot.transport or "", observations
                    ):
                        raise
                    self._publish(transport="sse", note="the server refused streamable HTTP; using SSE")
                    await self._session(await self._transport(observations, process, sign_in=False), scope)
            if scope.cancelled_caught and not self._attempt_connected and not self._stop.is_set():
                self._fail(self._broken or timeout_reason(self._spec, process))
        except Exception as exc:
            # An error while a live connection winds down is a drop, not a failure to connect.
            if not self._attempt_connected:
                why = failure_reason(self._spec, exc, observations=observations, process=process, sign_in=self._sign_in)
                self._fail(self._broken or why)
        finally:
            self._connect_scope = None
            self._client = self._calls.client = self._calls.raw = None
            self._watch.detach()
            self._stdio = None
        connected = self._attempt_connected
        if connected and self._is_stdio and not self._stop.is_set() and not self._restart:
            self._publish(state=State.STOPPED, reason=process.describe_stop(), **GONE)
        return connected

    async def _transport(
        self, observations: HttpObservations, process: StdioProcess, *, sign_in: bool = True
    ) -> Transport:
        if (given := self._connections.transport(self._spec)) is not None:
            return given  # a server built in this process, say: no process, no wire
        if self._is_stdio:
            self._stdio = self._connector.stdio(process)
            return self._stdio
        auth: httpx2.Auth | None = None
        if sign_in and self._snapshot.transport in ("streamable_http", "sse"):
            made = await self._connector.sign_in(self._waiting_for_sign_in, self._sign_in_answered)
            if made is not None:
                auth, self._sign_in = made
        return self._connector.remote(self._snapshot.transport or "", observations, auth)

    async def _session(self, transport: Transport, scope: anyio.CancelScope) -> None:
        client = Client(
            transport,
            mode="auto",
            cache=None,
            message_handler=self._on_message,
            logging_callback=self._deprecations.on_log,
            log_level="debug",  # new-era servers send log messages only to requests that opt in
            list_roots_callback=self._deprecations.on_roots if self._spec.roots else None,
            client_info=types.Implementation(name=self._identity.name, version=self._identity.version),
            sampling_callback=self._deprecations.on_sampling if self._sampling else None,
            elicitation_callback=self._inputs.elicitation if self._inputs is not None else None,
            extensions=[TASK_CALLS],  # a new-era server may answer a call with a task (CALL-8)
        )
        async with client:
            self._deprecations.transport(self._snapshot.transport)
            await list_tools(client, self._spec.id, self._warn)
            # Some servers announce changes before a client can hear them: list once more (CONN-6).
            self._changes.forget()
            tools = await list_tools(client, self._spec.id, self._warn)
            resources, templates, prompts = await list_extras(client, self._spec.id, self._warn)
            async with anyio.create_task_group() as tg:
                self._tg = tg
                await self._changes.follow(client, tg)  # before `connected`: no later change goes unheard
                if self._stdio is not None:
                    tg.start_soon(self._watch_exit, self._stdio.process)
                await self._watch.attach(client, tg)
                scope.deadline = math.inf
                self._client = client
                self._reconnecting = False
                self._attempt_connected = True
                self._settled.set()
                self._publish(
                    state=State.CONNECTED,
                    reason=None,
                    sign_in_url=None,
                    protocol_version=client.protocol_version,
                    instructions=client.instructions,
                    tools=tools,
                    resources=resources,
                    templates=templates,
                    prompts=prompts,
                    pid=self._stdio.process.pid if self._stdio is not None else None,
                )
                await self._end.wait()
                self._tg = None
                tg.cancel_scope.cancel()
            self._client = None

    async def _watch_exit(self, process: StdioProcess) -> None:
        await process.exited.wait()
        if not self._stop.is_set() and not self._restart:
            # Its tools leave the catalog at once, before the transport is torn down (CONN-4); its
            # instructions leave the prompt from the next turn (INS-3).
            self._publish(state=State.STOPPED, reason=process.describe_stop(), **GONE)
        self._end.set()

    def _fail(self, reason: str) -> None:
        kept = {} if self._reconnecting else {"tools": (), "resources": (), "templates": (), "prompts": ()}
        if self._is_stdio and (note := minimal_environment_note(self._spec.inherit_env, reason)) is not None:
            reason = f"{reason}; {note}"  # a missing variable is a likely cause (CONN-2)
        self._settled.set()
        self._publish(state=State.FAILED, reason=reason, sign_in_url=None, **kept)

    # ----------------------------------------------------------------- listings

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self._unreadable(message)
        elif isinstance(message, types.ToolListChangedNotification):
            self._changes.heard()
        elif (
            isinstance(message, types.ResourceUpdatedNotification)
            and self._snapshot.protocol_version in _HANDSHAKE_VERSIONS
        ):
            # New-era updates come on the listen stream; one here is from a stream already closed.
            await self._watch.updated(str(message.params.uri))
        await anyio.lowlevel.checkpoint()

    async def _resource_updated(self, uri: str) -> None:
        if self._on_resource_updated is not None:
            await self._on_resource_updated(self._spec.id, uri)

    async def watch(self, uri: str) -> None:
        """Watch a resource for the gateway's clients (counted: the server is asked once per URI).

        Raises:
            CallError: not connected, no subscriptions offered, or the server refused.
        """
        await self._watch.watch(uri)

    async def unwatch(self, uri: str) -> None:
        await self._watch.unwatch(uri)

    # ----------------------------------------------------------------- calls

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout_secs: float | None,
        on_progress: ProgressFn | None = None,
        on_log: LogFn | None = None,
        on_input: InputRelay | None = None,
    ) -> types.CallToolResult:
        """Call one tool; see `CallChannel.call` (it raises `CallError` and `ServerError`)."""
        return await self._calls.call(
            tool, arguments, timeout_secs=timeout_secs, on_progress=on_progress, on_log=on_log, on_input=on_input
        )

    async def request(self, send: Callable[[Client], Awaitable[T]], *, timeout_secs: float | None) -> T:
        """One request beside tool calls (resources, prompts, completion); see `CallChannel.request`."""
        return await self._calls.request(send, timeout_secs=timeout_secs)

    async def relist(self) -> None:
        """List the tools again now, as if the server had announced a change; the new listing is published.

        Raises:
            CallError: not connected, or the listing failed.
        """
        tools = await self._calls.request(
            lambda client: list_tools(client, self._spec.id, self._warn), timeout_secs=self._spec.connect_timeout_secs
        )
        self._publish(tools=tools)

    def _connection_lost(self) -> None:
        if not self._is_stdio:
            self._end.set()
