"""Requests to one server's live connection: tool calls with timeout, cancel and progress; log audiences (CALL-2)."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from mcpyard.connect._errors import too_large
from mcpyard.connect._guarded import refused_size
from mcpyard.connect._input import Clock, InputRelay, InputRouter, WaitingCall
from mcpyard.connect._legacy_tasks import call_as_task, runs_as_task
from mcpyard.connect._pipe import on_asyncio
from mcpyard.connect._raw import RawCalls
from mcpyard.connect._snapshot import ServerSnapshot, State
from mcpyard.connect._tasks import reporting_progress, resume_task, resumed_task
from mcpyard.connect._trace import tool_call_trace
from mcpyard.errors import CallError, ServerError

__all__ = ["CallChannel", "LogFn", "ProgressFn"]

T = TypeVar("T")
ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
LogFn = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]
_LOST = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream)
_UNAVAILABLE = {
    State.CONNECTING: "is still connecting",
    State.FAILED: "is not connected",
    State.STOPPED: "has stopped",
    State.WAITING_FOR_SIGN_IN: "is waiting for sign-in",
}


class CallChannel:
    """The calls in flight to one server over its current connection.

    The supervisor opens it on a connection (`client`) and closes it when the connection
    ends; `on_lost` tells the supervisor the connection broke under a call, and
    `on_abandoned(client)` that a call was given up on (timeout or cancel), so a stdio
    server that stays silent can be restarted. Through the outbound guard, `limit_secs` is the
    total time any call or request may take, progress or not (NET-2; the time a person spends
    answering the server's question is not counted), and an answer the guard
    refused for its size (over `max_response_bytes`) is that error, not the server's.
    """

    def __init__(
        self,
        server_id: str,
        *,
        redact: Callable[[str], str],
        inputs: InputRouter | None,
        snapshot: Callable[[], ServerSnapshot],
        stdio: bool,
        traced: bool,
        on_lost: Callable[[], None],
        on_abandoned: Callable[[Client], None],
        on_idle_log: LogFn | None = None,
        limit_secs: float | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        self.server_id = server_id
        self.client: Client | None = None
        """The live connection's client, or None while not connected."""
        self.raw: RawCalls | None = None
        """The live stdio connection's fast path for tool calls, if it has one."""
        self.in_flight = 0
        self._redact = redact
        self._inputs = inputs
        self._snapshot = snapshot
        self._stdio = stdio
        self._traced = traced
        """HTTP requests carry a trace per tool call (CALL-3); stdio and websocket carry none."""
        self._on_lost = on_lost
        self._on_abandoned = on_abandoned
        self._on_idle_log = on_idle_log
        """Where a log message goes that comes while no call is in flight."""
        self._log_sinks: list[LogFn] = []
        self._audiences: list[str] = []
        """Whose each call in flight is (`InputRelay.audience`; "host" for the library's own calls)."""
        self._limit = limit_secs
        self._capped = max_response_bytes is not None

    def _live(self) -> Client:
        client = self.client
        if client is None:
            snapshot = self._snapshot()
            what = _UNAVAILABLE.get(snapshot.state, "is not available")
            why = f": {snapshot.reason}" if snapshot.reason else ""
            raise CallError("server_unavailable", f"server {self.server_id!r} {what}{why}")
        return client

    def _lost(self) -> str:
        if self._stdio:
            snapshot = self._snapshot()
            if snapshot.state is not State.CONNECTED and snapshot.reason:
                return f"server {self.server_id!r} stopped during the call: {snapshot.reason}"
            return f"server {self.server_id!r} closed the connection during the call (its process ended)"
        return f"the connection to server {self.server_id!r} was lost during the call; mcpyard is reconnecting"

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
            CallError: `server_unavailable`, `timeout`, `invalid_result` or `connection_lost`.
            ServerError: the server answered with an error (its words, for the pipeline to fence).
        """
        client = self._live()
        if not self._traced and self._limit is None and on_asyncio():
            # No trace and no total deadline (stdio, websocket): the common case, on a lighter clock.
            return await self._call_plain(client, tool, arguments, timeout_secs, on_progress, on_log, on_input)
        self.in_flight += 1
        audience = on_input.audience if on_input is not None else "host"
        self._audiences.append(audience)
        if on_log is not None:
            self._log_sinks.append(on_log)
        try:
            with (
                anyio.CancelScope(deadline=anyio.current_time() + (self._limit or math.inf)) as total,
                anyio.CancelScope() as scope,
            ):
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

                sent = arguments if type(arguments) is dict else dict(arguments)
                try:
                    with (
                        tool_call_trace() if self._traced else contextlib.nullcontext(),
                        self._waiting_input(on_input, scope, timeout_secs, total) as waiting,
                        reporting_progress(restart_clock),  # a task's polls are progress too
                    ):
                        return await self._send(client, tool, sent, timeout_secs, restart_clock)
                except MCPError as exc:
                    if _closed_locally(exc):
                        self._on_lost()
                        raise CallError("connection_lost", self._lost()) from None
                    self._refused(exc)
                    # The server's own words: the pipeline fences, caps and redacts them like a result.
                    raise ServerError(self.server_id, exc.message) from None
                except (RuntimeError, ValidationError) as exc:  # the SDK's output-schema and model checks
                    raise CallError("invalid_result", f"{self._invalid(exc, 'result')}") from None
                except _LOST:
                    self._on_lost()
                    raise CallError("connection_lost", self._lost()) from None
            self._on_abandoned(client)
            if total.cancelled_caught:
                raise CallError("timeout", _past_limit(tool, self.server_id, self._limit or 0))
            raise CallError("timeout", _timed_out(tool, self.server_id, timeout_secs))
        except anyio.get_cancelled_exc_class():
            self._on_abandoned(client)
            raise
        finally:
            self.in_flight -= 1
            self._audiences.remove(audience)
            if on_log is not None:
                self._log_sinks.remove(on_log)

    async def _call_plain(
        self,
        client: Client,
        tool: str,
        arguments: Mapping[str, Any],
        timeout_secs: float | None,
        on_progress: ProgressFn | None,
        on_log: LogFn | None,
        on_input: InputRelay | None,
    ) -> types.CallToolResult:
        """`call` without a trace or a total deadline, timed by one event-loop timer instead of cancel scopes.

        The timer cancels this task when it fires; the SDK then sends `notifications/cancelled`
        as for any cancelled request, and the cancellation is turned into a `timeout` error here.
        Progress moves the timer on; a person answering the server's question stops it. Outer
        cancellation (a caller giving up) passes through.
        """
        self.in_flight += 1
        audience = on_input.audience if on_input is not None else "host"
        self._audiences.append(audience)
        if on_log is not None:
            self._log_sinks.append(on_log)
        clock = _TaskClock(timeout_secs)
        waiting: WaitingCall | None = None

        async def restart_clock(progress: float, total: float | None, message: str | None) -> None:
            if waiting is not None:
                waiting.restart()
            else:
                clock.restart()
            if on_progress is not None:
                await on_progress(progress, total, message)

        try:
            clock.start()
            try:
                with (
                    self._waiting_input(on_input, clock, timeout_secs, None) as waiting,
                    reporting_progress(restart_clock),
                ):
                    sent = arguments if type(arguments) is dict else dict(arguments)
                    return await self._send(client, tool, sent, timeout_secs, restart_clock)
            except MCPError as exc:
                if _closed_locally(exc):
                    self._on_lost()
                    raise CallError("connection_lost", self._lost()) from None
                self._refused(exc)
                raise ServerError(self.server_id, exc.message) from None
            except (RuntimeError, ValidationError) as exc:
                raise CallError("invalid_result", f"{self._invalid(exc, 'result')}") from None
            except _LOST:
                self._on_lost()
                raise CallError("connection_lost", self._lost()) from None
            finally:
                clock.stop()
        except asyncio.CancelledError:
            self._on_abandoned(client)
            if not clock.expired():
                raise
        finally:
            self.in_flight -= 1
            self._audiences.remove(audience)
            if on_log is not None:
                self._log_sinks.remove(on_log)
        raise CallError("timeout", _timed_out(tool, self.server_id, timeout_secs))

    def _send(
        self, client: Client, tool: str, arguments: dict[str, Any], timeout_secs: float | None, progress: ProgressFnT
    ) -> Awaitable[types.CallToolResult]:
        """The call itself: as a task of the 2025-11-25 protocol when a handshake-era server requires one, or, when
        resuming, the server's task followed (CALL-8)."""
        if (task_id := resumed_task()) is not None:
            return resume_task(client, tool, task_id)
        if runs_as_task(client, self._snapshot().tools, tool):
            return call_as_task(client, self.server_id, tool, arguments, timeout_secs=timeout_secs, progress=progress)
        if (raw := self.raw) is not None and raw.armed:
            return raw.call(client, tool, arguments, progress)
        return client.call_tool(tool, arguments, progress_callback=progress)

    async def request(self, send: Callable[[Client], Awaitable[T]], *, timeout_secs: float | None) -> T:
        """One request beside tool calls (resources, prompts, completion).

        Raises:
            CallError: the server is not connected, did not answer in time or sent something invalid.
            ServerError: the server answered with an error.
        """
        client = self._live()
        limit = min(timeout_secs if timeout_secs is not None else math.inf, self._limit or math.inf)
        try:
            with anyio.fail_after(limit):
                return await send(client)
        except MCPError as exc:
            self._refused(exc)
            raise ServerError(self.server_id, exc.message) from None
        except TimeoutError:
            raise CallError("timeout", f"server {self.server_id!r} did not answer within {limit:g} s") from None
        except (RuntimeError, ValidationError) as exc:
            raise CallError("invalid_result", self._invalid(exc, "answer")) from None
        except _LOST:
            raise CallError("connection_lost", self._lost()) from None

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message goes to whoever is waiting on a call to it (the gateway's clients).

        A message says nothing of the call it is about: while calls of two audiences (two clients
        of the gateway) are in flight, it goes to neither, as input requests do. One that comes
        while no call is in flight goes to `on_idle_log`.
        """
        if not self._audiences:
            if self._on_idle_log is not None:
                with contextlib.suppress(Exception):
                    await self._on_idle_log(params)
            return
        if len(set(self._audiences)) > 1:
            return
        for sink in list(self._log_sinks):
            with contextlib.suppress(Exception):  # a sink whose client left: the others still hear
                await sink(params)

    def _waiting_input(
        self, relay: InputRelay | None, scope: Clock, timeout_secs: float | None, total: anyio.CancelScope | None
    ) -> contextlib.AbstractContextManager[WaitingCall | None]:
        if self._inputs is None:
            return contextlib.nullcontext()
        # A person's answer may take longer than the total deadline: it is paused too (NET-2 bounds the server).
        limited = total if self._limit is not None else None
        return self._inputs.waiting(relay or InputRelay(audience="host", ask=None), scope, timeout_secs, limited)

    def _refused(self, exc: MCPError) -> None:
        """The answer the SDK gave a request whose response the outbound guard refused for its size."""
        if self._capped and (limit := refused_size(exc.message)) is not None:
            raise CallError("response_too_large", too_large(limit, f"server {self.server_id!r}")) from None

    def _invalid(self, exc: Exception, what: str) -> str:
        first = (self._redact(str(exc)).splitlines() or [type(exc).__name__])[0][:300]
        return f"server {self.server_id!r} sent an invalid {what}: {first}"


class _TaskClock:
    """A call's timeout as one event-loop timer that cancels the calling task when it fires.

    Its `deadline` (the event loop's clock; infinite: stopped) is a cancel scope's, for a call whose clock stops
    while a person answers its server's question (`WaitingCall`).
    """

    __slots__ = ("_cancelled", "_deadline", "_handle", "_loop", "_task", "_timeout")

    def __init__(self, timeout_secs: float | None) -> None:
        self._timeout = timeout_secs
        self._handle: asyncio.TimerHandle | None = None
        self._deadline = math.inf
        self._cancelled = False
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()

    @property
    def deadline(self) -> float:
        return self._deadline

    @deadline.setter
    def deadline(self, value: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._deadline = value
        if value != math.inf and not self._cancelled:
            self._handle = self._loop.call_at(value, self._fire)

    def start(self) -> None:
        if self._timeout is not None:
            self.deadline = self._loop.time() + self._timeout

    def restart(self) -> None:
        if self._handle is not None and not self._cancelled:
            self.start()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        if self._task is not None and not self._cancelled:
            self._cancelled = True
            self._task.cancel()

    def expired(self) -> bool:
        """Whether this clock's own cancellation is what ended the call (it is then taken back)."""
        if not self._cancelled or self._task is None:
            return False
        # Another cancellation arriving too (the caller gave up) still wins.
        return self._task.uncancel() == 0


def _timed_out(tool: str, server_id: str, timeout_secs: float | None) -> str:
    return (
        f"tool {tool!r} on server {server_id!r} did not answer within {timeout_secs or 0:g} s; "
        "mcpyard cancelled it (raise `call_timeout_secs`, or set it to null for tools that wait on a person)"
    )


def _past_limit(tool: str, server_id: str, limit: float) -> str:
    return (
        f"tool {tool!r} on server {server_id!r} did not finish within {limit:g} s, "
        "the limit for one call through the outbound guard; mcpyard cancelled it"
    )


def _closed_locally(exc: MCPError) -> bool:
    """The SDK's own "connection closed", not a server error that happens to use code -32000."""
    return exc.code == types.CONNECTION_CLOSED and exc.message.strip().lower() == "connection closed"
