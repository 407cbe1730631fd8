"""One supervisor per server: connect, list, watch for changes, call, stop (CONN-1 to CONN-6, CALL-2)."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client._transport import Transport
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpyard.auth import AuthStore, ServerTokens, SignIn, SignInProvider, free_loopback_port
from mcpyard.config import ServerSpec
from mcpyard.connect._environment import server_environment
from mcpyard.connect._errors import describe_failure, leaf_exception, public_url
from mcpyard.connect._http import HttpObservations, sse_transport, streamable_transport
from mcpyard.connect._input import InputRelay, InputRouter, WaitingCall
from mcpyard.connect._listing import list_extras, list_tools
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._stdio import StdioProcess, StdioTransport
from mcpyard.connect._trace import split_trace_headers, tool_call_trace
from mcpyard.connect._watch import ResourceWatch
from mcpyard.connect._websocket import websocket_transport
from mcpyard.errors import CallError, McpyardError, ServerError
from mcpyard.secrets._inventory import credential_header

__all__ = [
    "CANCEL_GRACE",
    "ClientIdentity",
    "ProgressFn",
    "Supervisor",
    "SupervisorState",
]

T = TypeVar("T")
SupervisorState = Literal["connecting", "connected", "failed", "stopped", "waiting_for_sign_in"]
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
LogFn = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]

CANCEL_GRACE = 2.0
"""How long a stdio server has to show it is alive after a cancellation before it is killed (CALL-2)."""
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """How mcpyard introduces itself to servers, and the host session it speaks for."""

    name: str
    version: str
    session_id: str = ""


class Supervisor:
    """Owns one server's connection for the life of a host session.

    `run()` is the supervisor's task: it connects within `connect_timeout_secs`, lists
    every page of tools, keeps the listing fresh, and stops the server when asked or
    when the host is cancelled. Calls come from other tasks through `call()`.
    """

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        environ: Mapping[str, str],
        identity: ClientIdentity,
        on_change: Callable[[Supervisor], None],
        reaper: Reaper | None = None,
        redact: Callable[[str], str] = str,
        auth_store: AuthStore | None = None,
        open_browser: bool = False,
        relay_input: bool = False,
        on_resource_updated: Callable[[str, str], Awaitable[None]] | None = None,
    ) -> None:
        self.spec = spec
        self._workspace = workspace
        self._environ = environ
        self._identity = identity
        self._on_change = on_change
        self._reaper = reaper
        self._redact = redact
        self._auth_store = auth_store
        self._open_browser = open_browser
        self._inputs = InputRouter(spec.id) if relay_input else None
        """Sampling and elicitation are declared only when calls can relay them (the gateway)."""
        self.sign_in: SignIn | None = None
        """The sign-in in progress or last made (AUTH-2); its page address is on the status page."""
        """Applied to server text kept here (stderr lines, error texts) before it is ever cut."""
        self.state: SupervisorState = "connecting"
        self.reason: str | None = None
        self.note: str | None = None
        """Something the status page should say even while connected (a restart, a fallback)."""
        self.protocol_version: str | None = None
        self.transport_used: str | None = spec.transport
        self.tools: tuple[Mapping[str, Any], ...] = ()
        self.instructions: str | None = None
        self.resources: tuple[Mapping[str, Any], ...] = ()
        """Resources the server lists, in wire form (passed through by the gateway)."""
        self.prompts: tuple[Mapping[str, Any], ...] = ()
        """Prompts the server lists, in wire form."""
        self.templates: tuple[Mapping[str, Any], ...] = ()
        """Resource templates the server lists, in wire form."""
        self.settled = anyio.Event()
        """Set once the first connection attempt has ended, connected or not."""
        self.warnings: list[str] = []
        self.process: StdioProcess | None = None
        """The stdio server's process as last seen (exit code, stderr tail)."""
        self._client: Client | None = None
        self._stop = anyio.Event()
        self._end: anyio.Event = anyio.Event()
        self._relist = anyio.Event()
        self._restart = False
        self._attempt_connected = False
        self._connect_scope: anyio.CancelScope | None = None
        self._reconnecting = False
        """A remote server that was connected and dropped: its tools stay listed until it is back."""
        self._lost = False
        self._stdio: StdioTransport | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        """The connection's task group: background work that ends with the connection."""
        self._in_flight = 0
        self._log_sinks: list[LogFn] = []
        self._audiences: list[str] = []
        """Whose each call in flight is (`InputRelay.audience`; "host" for the library's own calls)."""
        self._on_resource_updated = on_resource_updated
        self.watch = ResourceWatch(spec.id, self._resource_updated, self._warn)
        """Resources the gateway's clients are subscribed to on this server."""

    # ----------------------------------------------------------------- lifecycle

    @property
    def is_stdio(self) -> bool:
        return self.spec.transport == "stdio"

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
                if self.is_stdio:
                    break
                if was_connected:
                    self._reconnecting = True
                    backoff = BACKOFF_FIRST
                elif not self._reconnecting:
                    break  # never connected: the reason stands until reload
                # Keep the tools, refuse calls, retry with backoff.
                why = f" ({self.reason})" if not was_connected and self.reason else ""
                self.state = "failed"
                self.reason = f"connection lost{why}; reconnecting in {backoff:g} s"
                self._on_change(self)
                with anyio.move_on_after(backoff):
                    await self._stop.wait()
                backoff = min(backoff * 2, BACKOFF_MAX)
        finally:
            if self._stop.is_set() and self.state in ("connected", "connecting"):
                self.state = "stopped"
                self.reason = "stopped by mcpyard"
                self.tools = ()
            self.resources = self.prompts = self.templates = ()
            self.settled.set()

    async def _connect_once(self) -> bool:
        """One connection's life. Returns whether it got connected."""
        self._end = anyio.Event()
        self._lost = False
        self._attempt_connected = False
        self.state = "connecting"
        self._on_change(self)
        timeout = self.spec.connect_timeout_secs
        observations = HttpObservations(session_id=self._identity.session_id)
        process = StdioProcess(redact=self._redact)
        self.process = process if self.is_stdio else None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                self._connect_scope = scope
                try:
                    await self._session(self._transport(observations, process), scope)
                except Exception:
                    if self._attempt_connected or not self._should_fall_back(observations):
                        raise
                    # The streamable POST was refused with 404/405: an old-style SSE server (CONN-1).
                    self.transport_used = "sse"
                    self.note = "the server refused streamable HTTP; using SSE"
                    await self._session(sse_transport(self._url, self._headers, observations), scope)
            if scope.cancelled_caught and not self._attempt_connected and not self._stop.is_set():
                self._fail(self._timeout_reason(process))
        except Exception as exc:
            # An error while a live connection winds down is a drop, not a failure to connect.
            if not self._attempt_connected:
                self._fail(self._failure_reason(exc, observations, process))
        finally:
            self._connect_scope = None
            self._client = None
            self.watch.detach()
            self._stdio = None
        connected = self._attempt_connected
        if connected and self.is_stdio and not self._stop.is_set() and not self._restart:
            self.state = "stopped"
            self.reason = f"the server process {process.describe_exit()}"
            self.tools = ()
            self.resources = self.prompts = self.templates = ()
            self.instructions = None
            self._on_change(self)
        return connected

    def _should_fall_back(self, observations: HttpObservations) -> bool:
        return (
            self.spec.sse_fallback and self.transport_used == "streamable_http" and observations.saw("POST", 404, 405)
        )

    @property
    def _url(self) -> str:
        assert self.spec.url is not None
        return self.spec.url

    @property
    def _headers(self) -> dict[str, str]:
        return dict(split_trace_headers(self.spec.headers)[0])

    def _transport(self, observations: HttpObservations, process: StdioProcess) -> Transport:
        spec = self.spec
        if spec.transport == "stdio":
            assert spec.command is not None
            cwd = Path(spec.cwd) if spec.cwd else self._workspace
            if not cwd.is_absolute():
                cwd = self._workspace / cwd
            self._stdio = StdioTransport(
                spec.command,
                spec.args,
                env=server_environment(self._environ, spec.inherit_env, spec.env),
                cwd=os.fspath(cwd),
                shutdown_timeout=spec.shutdown_timeout_secs,
                process=process,
                reaper=self._reaper,
            )
            return self._stdio
        if self.transport_used == "sse":
            return sse_transport(self._url, self._headers, observations, self._auth())
        if self.transport_used == "streamable_http":
            return streamable_transport(self._url, self._headers, observations, self._auth())
        if self.transport_used == "websocket":
            return websocket_transport(self._url, open_timeout=spec.connect_timeout_secs)
        raise CallError("unsupported_transport", f"transport {spec.transport!r} is not available yet")

    async def _session(self, transport: Transport, scope: anyio.CancelScope) -> None:
        client = Client(
            transport,
            mode="auto",
            cache=None,
            message_handler=self._on_message,
            logging_callback=self._on_log,
            # New-era servers send log messages only to requests that opt in.
            log_level="debug",
            client_info=types.Implementation(name=self._identity.name, version=self._identity.version),
            sampling_callback=self._inputs.sampling if self._inputs is not None else None,
            elicitation_callback=self._inputs.elicitation if self._inputs is not None else None,
        )
        async with client:
            self.protocol_version = client.protocol_version
            self.instructions = client.instructions
            self.tools = await self._list_tools(client)
            # Some servers announce changes before a client can hear them: list once more (CONN-6).
            self._relist = anyio.Event()
            self.tools = await self._list_tools(client)
            self.resources, self.templates, self.prompts = await list_extras(client, self.spec.id, self._warn)
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if self._hears_changes(client):
                    # Subscribed before `connected`, so no change after that moment goes unheard.
                    await tg.start(self._listen_modern, client)
                tg.start_soon(self._follow_changes, client)
                if self._stdio is not None:
                    tg.start_soon(self._watch_exit, self._stdio.process)
                await self.watch.attach(client, tg)
                scope.deadline = math.inf
                self._client = client
                self.state = "connected"
                self.reason = None
                self._reconnecting = False
                self._attempt_connected = True
                self.settled.set()
                self._on_change(self)
                await self._end.wait()
                self._tg = None
                tg.cancel_scope.cancel()
            self._client = None

    async def _watch_exit(self, process: StdioProcess) -> None:
        await process.exited.wait()
        if not self._stop.is_set() and not self._restart:
            # Its tools leave the catalog at once, before the transport is torn down (CONN-4).
            self.state = "stopped"
            self.reason = f"the server process {process.describe_exit()}"
            self.tools = ()
            self.resources = self.prompts = self.templates = ()
            self.instructions = None  # its section leaves the prompt from the next turn (INS-3)
            self._on_change(self)
        self._end.set()

    def _auth(self) -> SignInProvider | None:
        """OAuth for a remote server, unless its headers already carry a credential (AUTH-3)."""
        if self._auth_store is None or any(credential_header(name) for name, _ in self.spec.headers):
            return None
        tokens = ServerTokens(self._auth_store, self.spec.id)
        try:
            stored = self._auth_store.read().get(self.spec.id) or {}
        except McpyardError:
            stored = {}
        port = stored.get("redirect_port") if isinstance(stored.get("redirect_port"), int) else None
        sign_in = SignIn(
            port=port or free_loopback_port(),
            open_browser=self._open_browser,
            on_waiting=self._waiting_for_sign_in,
            on_answered=self._sign_in_answered,
        )
        self.sign_in = sign_in
        return SignInProvider(self._url, tokens, sign_in)

    def _waiting_for_sign_in(self, url: str) -> None:
        # Sign-in waits on a person: no connect deadline, and the other servers are not held back (CONN-3).
        if self._connect_scope is not None and not self._attempt_connected:
            self._connect_scope.deadline = math.inf
        self.state = "waiting_for_sign_in"
        self.reason = "waiting for sign-in: open the page below, or paste the address it sends you to"
        self.settled.set()
        self._on_change(self)

    def _sign_in_answered(self) -> None:
        if self._attempt_connected:
            # A sign-in asked for during the session (a rejected token, more scope): it goes on.
            self.state = "connected"
        else:
            if self._connect_scope is not None:
                self._connect_scope.deadline = anyio.current_time() + self.spec.connect_timeout_secs
            self.state = "connecting"
        self.reason = None
        if self.sign_in is not None and self._auth_store is not None:
            port = self.sign_in.port
            store = self._auth_store

            async def remember() -> None:
                await store.update(self.spec.id, redirect_port=port)

            if self._tg is not None:
                self._tg.start_soon(remember)
        self._on_change(self)

    def complete_sign_in(self, redirect_url: str) -> bool:
        """A redirect address pasted back by a person on a machine with no browser (AUTH-2)."""
        return self.sign_in is not None and self.sign_in.complete(redirect_url)

    def _fail(self, reason: str) -> None:
        self.state = "failed"
        self.reason = reason
        if not self._reconnecting:
            self.tools = ()
            self.resources = self.prompts = self.templates = ()
        self.settled.set()
        self._on_change(self)

    def _timeout_reason(self, process: StdioProcess) -> str:
        text = f"did not finish connecting within {self.spec.connect_timeout_secs:g} s"
        if self.is_stdio:
            text += " (no answer to the MCP handshake: is this an MCP stdio server?)"
            if process.stderr_tail:
                text += "; stderr: " + " | ".join(process.stderr_tail)
        return text

    def _failure_reason(self, exc: BaseException, observations: HttpObservations, process: StdioProcess) -> str:
        leaf = leaf_exception(exc)
        if self.is_stdio and process.pid is not None and process.returncode is not None:
            return f"the server process {process.describe_exit()} before the handshake finished"
        if self.sign_in is not None and self.sign_in.failure is not None:
            return f"sign-in did not complete: {self.sign_in.failure}"
        if not self.is_stdio and (status := observations.last_error()) is not None:
            return f"{public_url(self.spec.url)} answered HTTP {status}"
        return describe_failure(leaf, command=self.spec.command, url=self.spec.url)

    # ----------------------------------------------------------------- listings

    async def request(self, send: Callable[[Client], Awaitable[T]]) -> T:
        """One request beside tool calls (the gateway's pass-through of resources, prompts, completion).

        Raises:
            CallError: the server is not connected, or answered with an error.
        """
        client = self._client
        if client is None or self.state != "connected":
            raise CallError("server_unavailable", self._unavailable_message())
        timeout = self.spec.call_timeout_secs
        try:
            with anyio.fail_after(timeout if timeout is not None else math.inf):
                return await send(client)
        except MCPError as exc:
            raise ServerError(self.spec.id, exc.message) from None
        except TimeoutError:
            raise CallError("timeout", f"server {self.spec.id!r} did not answer within {timeout:g} s") from None
        except (RuntimeError, ValidationError) as exc:
            first = (self._redact(str(exc)).splitlines() or [type(exc).__name__])[0][:300]
            raise CallError("invalid_result", f"server {self.spec.id!r} sent an invalid answer: {first}") from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            raise CallError("connection_lost", self._lost_message()) from None

    async def _list_tools(self, client: Client) -> tuple[Mapping[str, Any], ...]:
        return await list_tools(client, self.spec.id, self._warn)

    async def _resource_updated(self, uri: str) -> None:
        if self._on_resource_updated is not None:
            await self._on_resource_updated(self.spec.id, uri)

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message goes to whoever is waiting on a call to it (the gateway's clients).

        A message says nothing of the call it is about: while calls of two audiences (two clients
        of the gateway) are in flight, it goes to neither, as input requests do.
        """
        if len(set(self._audiences)) > 1:
            return
        for sink in list(self._log_sinks):
            with contextlib.suppress(Exception):  # a sink whose client left: the others still hear
                await sink(params)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist.set()
        elif isinstance(message, types.ResourceUpdatedNotification) and self.protocol_version in _HANDSHAKE_VERSIONS:
            # New-era updates come on the listen stream; one here is from a stream already closed.
            await self.watch.updated(str(message.params.uri))
        await anyio.lowlevel.checkpoint()

    @staticmethod
    def _hears_changes(client: Client) -> bool:
        """Whether the server is of the new era and announces tool changes (through `listen()`)."""
        tools = client.server_capabilities.tools
        return bool(tools and tools.list_changed) and client.protocol_version not in _HANDSHAKE_VERSIONS

    async def _follow_changes(self, client: Client) -> None:
        """Re-list when the server says its tools changed (both eras, CONN-4)."""
        while True:
            await self._relist.wait()
            self._relist = anyio.Event()
            try:
                self.tools = await self._list_tools(client)
            except Exception as exc:  # a failed refresh keeps the last listing
                self._warn(f"server {self.spec.id!r}: refreshing tools failed: {describe_failure(exc)}")
                continue
            self._on_change(self)

    async def _listen_modern(self, client: Client, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                async for _event in subscription:
                    self._relist.set()
        except Exception as exc:  # the listing still works; only change notices are lost
            self._warn(f"server {self.spec.id!r}: cannot follow tool changes: {describe_failure(exc)}")
            with contextlib.suppress(RuntimeError):
                task_status.started()

    # ----------------------------------------------------------------- calls

    @property
    def in_flight(self) -> int:
        return self._in_flight

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
        """Call one tool; progress restarts the clock; timeouts and cancels send `notifications/cancelled`.

        Raises:
            CallError: `server_unavailable`, `timeout`, `server_error` or `connection_lost`.
        """
        client = self._client
        if client is None or self.state != "connected":
            raise CallError("server_unavailable", self._unavailable_message())
        self._in_flight += 1
        audience = on_input.audience if on_input is not None else "host"
        self._audiences.append(audience)
        if on_log is not None:
            self._log_sinks.append(on_log)
        try:
            with anyio.CancelScope() as scope:
                if timeout_secs is not None:
                    scope.deadline = anyio.current_time() + timeout_secs

                waiting: WaitingCall | None = None

                async def restart_clock(progress: float, total: float | None, message: str | None) -> None:
                    if waiting is not None:
                        waiting.restart()
                    elif timeout_secs is not None:
                        scope.deadline = anyio.current_time() + timeout_secs
                    if on_progress is not None:
                        await on_progress(progress, total, message)

                try:
                    with tool_call_trace(), self._waiting_input(on_input, scope, timeout_secs) as waiting:
                        return await client.call_tool(tool, dict(arguments), progress_callback=restart_clock)
                except MCPError as exc:
                    if self._closed_locally(exc):
                        self._connection_lost()
                        raise CallError("connection_lost", self._lost_message()) from None
                    # The server's own words: the pipeline fences, caps and redacts them like a result.
                    raise ServerError(self.spec.id, exc.message) from None
                except (RuntimeError, ValidationError) as exc:  # the SDK's output-schema and model checks
                    first = (self._redact(str(exc)).splitlines() or [type(exc).__name__])[0][:300]
                    message = f"server {self.spec.id!r} sent an invalid result: {first}"
                    raise CallError("invalid_result", message) from None
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
                    self._connection_lost()
                    raise CallError("connection_lost", self._lost_message()) from None
            self._after_abandon(client)
            raise CallError(
                "timeout",
                f"tool {tool!r} on server {self.spec.id!r} did not answer within {timeout_secs:g} s; "
                "mcpyard cancelled it (raise `call_timeout_secs`, or set it to null "
                "for tools that wait on a person)",
            )
        except anyio.get_cancelled_exc_class():
            self._after_abandon(client)
            raise
        finally:
            self._in_flight -= 1
            self._audiences.remove(audience)
            if on_log is not None:
                self._log_sinks.remove(on_log)

    def _waiting_input(
        self, relay: InputRelay | None, scope: anyio.CancelScope, timeout_secs: float | None
    ) -> contextlib.AbstractContextManager[WaitingCall | None]:
        if self._inputs is None:
            return contextlib.nullcontext()
        return self._inputs.waiting(relay or InputRelay(audience="host", ask=None), scope, timeout_secs)

    def _closed_locally(self, exc: MCPError) -> bool:
        """The SDK's own "connection closed", not a server error that happens to use code -32000."""
        return exc.code == types.CONNECTION_CLOSED and exc.message.strip().lower() == "connection closed"

    def _unavailable_message(self) -> str:
        what = {"connecting": "is still connecting", "failed": "is not connected", "stopped": "has stopped"}
        text = f"server {self.spec.id!r} {what.get(self.state, 'is not available')}"
        return text + (f": {self.reason}" if self.reason else "")

    def _lost_message(self) -> str:
        if self.is_stdio:
            return f"server {self.spec.id!r} closed the connection during the call (its process ended)"
        return f"the connection to server {self.spec.id!r} was lost during the call; mcpyard is reconnecting"

    def _connection_lost(self) -> None:
        if not self.is_stdio:
            self._lost = True
            self._end.set()

    def _after_abandon(self, client: Client) -> None:
        """A stdio server has 2 s after a cancellation to show it is alive, else it is restarted (CALL-2)."""
        stdio = self._stdio
        if stdio is None or self._client is not client:
            return

        async def probe() -> None:
            with anyio.move_on_after(CANCEL_GRACE) as waited:
                with contextlib.suppress(Exception):
                    await client.list_tools()
            if waited.cancelled_caught and self._stdio is stdio and not self._stop.is_set():
                self.note = f"restarted: did not answer {CANCEL_GRACE:g} s after a cancellation, so mcpyard killed it"
                self._restart = True
                stdio.kill()
                self._end.set()

        if self._tg is not None:
            self._tg.start_soon(probe)


_HANDSHAKE_VERSIONS: frozenset[str] = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
