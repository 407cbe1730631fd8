"""An MCP face over mcpyard's pipeline: the tools it offers, their calls, and telling clients when the offer changed.

`ToolFace` is the server code the gateway (`mcpyard serve`, one host's shared tools) and the
organization's `/mcp` (each member's own tools) share: `tools/list`, `tools/call` with progress,
logs, a downstream server's questions relayed to the client (on the call's stream in the handshake
era; in rounds of input-required results in the new era), and `notifications/tools/list_changed`
to the clients a change concerns. A face says what it offers and how a call runs (`offer`,
`run_call`); which clients a change concerns is its `audience` and `next_change`.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
import warnings
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp

from mcpyard import __version__
from mcpyard.connect import TASKS_EXTENSION, InputFn, InputRelay, LogFn, MadeTask, ProgressFn, noticing_tasks
from mcpyard.gateway._context import (
    answerable,
    answers_in_rounds,
    connection_of,
    conversation_of,
    error_result,
    input_relay,
    progress_to,
    trace_from_headers,
    wire_result,
    wire_tool,
)
from mcpyard.gateway._fast import FastPath
from mcpyard.gateway._fast_http import FastHttp
from mcpyard.gateway._fast_stdio import FastCalls
from mcpyard.gateway._logs import LogLevels, send_log_message
from mcpyard.gateway._offered import Listed, Offer
from mcpyard.gateway._rounds import ANSWER_SECS, MAX_WAITING_CALLS, RoundTrip, elicitation_modes
from mcpyard.gateway._tasks import FaceTask, TaskBoard, TaskParams, UpdateParams, declares_tasks
from mcpyard.pipeline import CallResult

__all__ = ["ToolFace"]

_log = logging.getLogger("mcpyard.gateway")


class _ChangingServer(Server[Any]):
    """A low-level server that announces tool changes in the handshake era too."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


class ToolFace:
    """The MCP server code of a face: subclasses say what is offered and how a call runs."""

    def __init__(self, instructions: str, *, log_levels: LogLevels, **handlers: Any) -> None:
        self._logs = log_levels
        self._trips: dict[str, RoundTrip] = {}
        """New-era calls waiting on their client's answers, by `requestState`."""
        self._tg: anyio.abc.TaskGroup | None = None
        self._fast: FastPath | None = None
        self._listed = Listed()
        self._connections: weakref.WeakKeyDictionary[Connection, Hashable] = weakref.WeakKeyDictionary()
        """Handshake-era clients that may hear of changes, each with its audience."""
        with warnings.catch_warnings():
            # Logging and resources/subscribe are of the handshake era, which a face serves on purpose.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = _ChangingServer(
                "mcpyard",
                version=__version__,
                instructions=instructions,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,  # type: ignore[arg-type]  # a task's handle is a plain dict
                on_set_logging_level=self._set_level,
                get_tool_input_schema=self._input_schema,
                **handlers,
            )
        self.server.middleware.insert(0, trace_from_headers)
        self.tasks = TaskBoard(self._task_owner)
        self.server.extensions[TASKS_EXTENSION] = {}
        self.server.add_request_handler("tasks/get", TaskParams, self.tasks.get)
        self.server.add_request_handler("tasks/update", UpdateParams, self.tasks.update)
        self.server.add_request_handler("tasks/cancel", TaskParams, self.tasks.cancel)

    # ----------------------------------------------------------------- what a face says

    async def offer(self, ctx: ServerRequestContext[Any]) -> Offer:
        """The tools offered to the client of `ctx`."""
        raise NotImplementedError

    async def run_call(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None,
        on_log: LogFn | None,
        on_input: InputRelay,
        definition_hash: str | None = None,
    ) -> CallResult:
        """Run the call of the catalog's tool `name` for the client of `ctx` (only on that definition, if given)."""
        raise NotImplementedError

    async def run_offered(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None,
        on_log: LogFn | None,
        on_input: InputRelay,
    ) -> CallResult:
        """`run_call`, on the definition the client of `ctx` was listed if it listed the tools (`_offered.py`)."""
        bound = self._listed.bound(ctx, name)
        result = await self.run_call(
            ctx, name, arguments, on_progress=on_progress, on_log=on_log, on_input=on_input, definition_hash=bound
        )
        if bound is not None:
            self._listed.told(ctx, name, result)
        return result

    def fallback_input(self, ctx: ServerRequestContext[Any], name: str) -> InputFn | None:
        """Who answers a question the client cannot take during a call of `name`; None: no one."""
        del ctx, name
        return None

    def audience(self, ctx: ServerRequestContext[Any]) -> Hashable:
        """Which changes concern the client of `ctx` (compared with what `next_change` returns)."""
        del ctx
        return None

    async def next_change(self) -> Callable[[Hashable], bool]:
        """Wait until what some clients are offered may have changed; which audiences it concerns."""
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    def bus_for(self, audience: Hashable) -> InMemorySubscriptionBus | None:
        """Where the new-era listen streams of an audience hear of changes, if the face serves them."""
        del audience
        return None

    # ----------------------------------------------------------------- serving

    @property
    def task_group(self) -> anyio.abc.TaskGroup | None:
        """Where the face's own work runs while it serves (`run`); None before and after."""
        return self._tg

    def fast_http(self, app: ASGIApp, path: str | None) -> ASGIApp:
        """`app` (the SDK's streamable HTTP app at `path`) behind the fast path for repeated calls (`_fast_http.py`)."""
        self._fast = (front := FastHttp(app, self, path)).fast
        return front

    def fast_calls(self) -> FastCalls:
        """The fast path for the one client of a stdio front (see `_fast_stdio.py`)."""
        self._fast = (calls := FastCalls(self)).path
        return calls

    @property
    def waiting_calls(self) -> int:
        """New-era calls waiting on their clients' answers (input-required rounds) right now."""
        return len(self._trips)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The face's own work while it serves: change notices, and calls that wait on answers."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._follow_changes)
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._tg = None

    async def _follow_changes(self) -> None:
        """Tell the clients a change concerns, both eras (GW-3, ORG-10)."""
        while True:
            concerned = await self.next_change()
            for audience in {audience for audience in self._connections.values() if concerned(audience)} | {None}:
                bus = self.bus_for(audience)
                if bus is not None:
                    await bus.publish(ToolsListChanged())  # new era: its `subscriptions/listen` streams
            for connection, audience in list(self._connections.items()):
                if not concerned(audience):
                    continue
                if connection.protocol_version in MODERN_PROTOCOL_VERSIONS or not connection.has_standalone_channel:
                    continue
                try:
                    await connection.notify("notifications/tools/list_changed", None)
                except Exception:  # a client that went away: nothing to tell it
                    self._connections.pop(connection, None)

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        connection = connection_of(ctx)
        if connection is not None:
            self._connections[connection] = self.audience(ctx)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """No schema for the SDK's own argument check: the pipeline checks arguments against the offered tool."""
        del name
        return None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del params
        self._remember(ctx)
        offer = await self.offer(ctx)
        self._listed.note(ctx, offer)
        offered = {catalog: public for public, catalog in offer.names.items()}
        return types.ListToolsResult(tools=[wire_tool(tool, offered[tool.name]) for tool in offer.tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        self._remember(ctx)
        name = (await self.offer(ctx)).names.get(params.name)
        if name is None:
            return error_result(f"no tool {params.name!r} is offered to you here: list the tools again")
        if params.request_state is None and self._tg is not None and declares_tasks(ctx) and self.tasks.has_room():
            return await self._call_maybe_as_task(ctx, params, name)
        rounds_open = self._tg is not None and len(self._trips) < MAX_WAITING_CALLS
        if params.request_state is not None or (rounds_open and answers_in_rounds(ctx)):
            return await self._call_in_rounds(ctx, params, name)
        on_progress = progress_to(ctx)
        if self._fast is not None:
            self._fast.arm(ctx, eligible=on_progress is None and not answerable(ctx) and not declares_tasks(ctx))
        result = await self.run_offered(
            ctx,
            name,
            dict(params.arguments or {}),
            on_progress=on_progress,
            on_log=self.log_to(ctx),
            on_input=input_relay(ctx, self.fallback_input(ctx, name)),
        )
        return wire_result(result)

    def _task_owner(self, ctx: ServerRequestContext[Any]) -> Hashable:
        """Whose a task is: the client's audience (in the organization, the signed-in member) and HTTP session.

        The extension is of the new era, whose requests carry no session: with no sign-in (the gateway), a task
        is the face's, and its id (192 random bits) is the capability to reach it."""
        return (self.audience(ctx), conversation_of(ctx))

    async def _call_maybe_as_task(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, name: str
    ) -> types.CallToolResult | dict[str, Any]:
        """A client that takes tasks: the result when the call ends without one, else a task once the server makes
        one or the call asks the client something."""
        assert self._tg is not None
        modes = elicitation_modes(ctx.session.client_capabilities)
        trip = RoundTrip(params.name, answerable(ctx), modes, self.fallback_input(ctx, name))
        task = self.tasks.new(ctx, trip, name)
        made = False

        def on_made(made_task: MadeTask) -> None:
            nonlocal made
            made = True
            task.made(made_task)
            trip.wake()

        self._tg.start_soon(self._run_task, task, ctx, name, dict(params.arguments or {}), on_made)
        try:
            while trip.result is None and not made and not trip.open_requests():
                await trip.moved()
        except anyio.get_cancelled_exc_class():
            trip.scope.cancel()  # the client gave up before there was a task to come back to
            raise
        if trip.result is not None:
            return trip.result
        return self.tasks.keep(task)

    async def _run_task(
        self,
        task: FaceTask,
        first: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        on_made: Callable[[MadeTask], None],
    ) -> None:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            del progress, total
            task.note(message)

        trip = task.trip
        try:
            relay = InputRelay(audience=f"task-{trip.token}", ask=trip.ask)
            with trip.scope, noticing_tasks(on_made):
                result = await self.run_offered(
                    first, name, arguments, on_progress=on_progress, on_log=None, on_input=relay
                )
                trip.finish(wire_result(result))
        except Exception as exc:  # one call's failure is not the face's
            _log.error("%s failed inside mcpyard\n%s", name, self.redact(traceback.format_exc()))
            trip.finish(error_result(f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"))
        finally:
            if not trip.finished:
                trip.finish(error_result(f"{name} was cancelled: its client cancelled it"))
            task.end()

    async def _call_in_rounds(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, name: str
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A new-era client that can answer: the call runs on its own, and pauses for the client's answers."""
        if params.request_state is not None:
            trip = self._trips.get(params.request_state)
            if trip is None or trip.name != params.name or trip.audience != self.audience(ctx):
                raise MCPError(types.INVALID_PARAMS, "unknown or expired requestState: call the tool again without one")
            trip.answer(params.input_responses or {})
        elif self._tg is None:
            return error_result("the service is stopping; call again once it is back")
        else:
            modes = elicitation_modes(ctx.session.client_capabilities)
            trip = RoundTrip(params.name, answerable(ctx), modes, self.fallback_input(ctx, name))
            trip.audience = self.audience(ctx)
            self._trips[trip.token] = trip
            self._tg.start_soon(self._run_trip, trip, ctx, name, dict(params.arguments or {}))
        return await trip.step(ctx)

    async def _run_trip(
        self, trip: RoundTrip, first: ServerRequestContext[Any], name: str, arguments: dict[str, Any]
    ) -> None:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            # To the round under way, if it asked for progress; between rounds there is no one to tell.
            send = progress_to(trip.ctx) if trip.ctx is not None else None
            if send is not None:
                with contextlib.suppress(Exception):
                    await send(progress, total, message)

        try:
            relay = InputRelay(audience=f"round-trip-{trip.token}", ask=trip.ask)
            with trip.scope:
                result = await self.run_offered(
                    first, name, arguments, on_progress=on_progress, on_log=None, on_input=relay
                )
                trip.finish(wire_result(result))
            if trip.finished:
                with anyio.move_on_after(ANSWER_SECS):  # a client that never comes back for it
                    await trip.collected.wait()
        except Exception as exc:  # one call's failure is not the face's
            _log.error("%s failed inside mcpyard\n%s", name, self.redact(traceback.format_exc()))
            trip.finish(error_result(f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"))
        finally:
            if not trip.finished:  # the client gave up on a round: whoever still asks hears so
                trip.finish(error_result(f"{name} was cancelled: its client gave up on it"))
            self._trips.pop(trip.token, None)

    def redact(self, text: str) -> str:
        """`text` with every secret the face's servers are sent replaced by its name (for the log)."""
        return text

    def log_to(self, ctx: ServerRequestContext[Any], related: str | None = None) -> LogFn:
        """Where a server's log messages during a call go: its client, related to `related` (else `ctx`'s request)."""
        if related is None and ctx.request_id is not None:
            related = str(ctx.request_id)

        async def on_log(message: types.LoggingMessageNotificationParams) -> None:
            # Downstream log messages (already redacted) reach the caller, at or above its level.
            if self.wants_log(ctx, message.level):
                await send_log_message(ctx.session, message.level, message.data, message.logger, related)

        return on_log

    def wants_log(self, ctx: ServerRequestContext[Any], level: types.LoggingLevel) -> bool:
        """Whether the client of `ctx` takes a log message at `level` (the level it set, default `info`)."""
        return self._logs.wants(connection_of(ctx), level)

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._remember(ctx)
        self._logs.set(connection_of(ctx), params.level)
        return types.EmptyResult()
