"""The gateway: a host's shared tools as one MCP server, every pipeline rule applied (GW-1 to GW-3)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import traceback
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
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

from mcpyard import Host, ToolInfo, __version__
from mcpyard.connect import InputFn, InputRelay, LogFn
from mcpyard.elicitation import elicitor_input
from mcpyard.errors import CallError
from mcpyard.gateway._context import (
    answerable,
    answers_in_rounds,
    connection_of,
    conversation_of,
    error_result,
    input_relay,
    progress_to,
    wire_result,
    wire_tool,
)
from mcpyard.gateway._logs import LogLevels, send_log_message
from mcpyard.gateway._rounds import ANSWER_SECS, MAX_WAITING_CALLS, RoundTrip, elicitation_modes
from mcpyard.gateway._subscriptions import Subscriptions
from mcpyard.pipeline import READ_RESULT

__all__ = ["GATEWAY_INSTRUCTIONS", "Gateway"]

_log = logging.getLogger("mcpyard.gateway")

GATEWAY_INSTRUCTIONS = (
    "mcpyard gateway: the tools below belong to other MCP servers, named <server>__<tool>. Every call "
    "goes through mcpyard's rules (modes, deny rules, files, caching, caps, redaction). Results come back "
    "fenced as untrusted data; a cut result names a handle to read on with read_result."
)


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


@dataclass(frozen=True, slots=True)
class _Offer:
    basis: tuple[object, ...]
    """The catalog, pins and configuration it was worked out from (compared by identity)."""
    tools: tuple[ToolInfo, ...]
    names: Mapping[str, str]
    """Offered name → catalog name."""
    by_catalog: Mapping[str, ToolInfo]


class Gateway:
    """Serves a host's shared tools; one instance per `mcpyard serve`."""

    def __init__(self, host: Host, *, share_all: bool = False, unprefixed: bool = False) -> None:
        self.host = host
        self.share_all = share_all
        self.unprefixed = unprefixed
        """Offer tools and prompts under their servers' own names (for a single server; names must not collide)."""
        self._logs = LogLevels(self._shares_extras)
        self._offered: _Offer | None = None
        self._trips: dict[str, RoundTrip] = {}
        """New-era calls waiting on their client's answers, by `requestState`."""
        self._tg: anyio.abc.TaskGroup | None = None
        self._bus = InMemorySubscriptionBus()
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._subscriptions = Subscriptions(host, self._bus, self._shared_owner, connection_of)
        host.on_server_log(self._logs.between_calls)
        prompt = host.system_prompt()
        with warnings.catch_warnings():
            # Logging and resources/subscribe are of the handshake era, which the gateway serves on purpose.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = _ChangingServer(
                "mcpyard",
                version=__version__,
                instructions=GATEWAY_INSTRUCTIONS + ("\n\n" + prompt if prompt else ""),
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_list_resources=self._list_resources,
                on_read_resource=self._read_resource,
                on_list_prompts=self._list_prompts,
                on_get_prompt=self._get_prompt,
                on_list_resource_templates=self._list_templates,
                on_completion=self._complete,
                on_set_logging_level=self._set_level,
                get_tool_input_schema=self._input_schema,
                on_subscribe_resource=self._subscriptions.subscribe,
                on_unsubscribe_resource=self._subscriptions.unsubscribe,
                on_subscriptions_listen=self._subscriptions.listen,
            )

    # ----------------------------------------------------------------- what is shared

    def shared_tools(self) -> list[ToolInfo]:
        """`shared_tools` of each server (globs on the server's own tool names), or all with `--share-all` (GW-1).

        `readOnlyHint` alone never shares a tool; the built-in `read_result` always comes along.
        """
        return list(self._offer().tools)

    @property
    def waiting_calls(self) -> int:
        """New-era calls waiting on their clients' answers (input-required rounds) right now."""
        return len(self._trips)

    def _offer(self) -> _Offer:
        """What is offered, worked out again only when the catalog, the pins or the configuration change."""
        view = self.host.view
        basis = (view.catalog, view.policies, view.plan)
        cached = self._offered
        if cached is not None and all(a is b for a, b in zip(cached.basis, basis, strict=True)):
            return cached
        shared = {spec.id: spec.shared_tools for spec in self.host.config.servers}
        tools = [
            tool
            for tool in self.host.server_tools()
            if self.share_all or any(fnmatchcase(tool.tool, glob) for glob in shared.get(tool.server) or ())
        ]
        tools += [t for t in self.host.tools() if t.name == READ_RESULT]
        counts: dict[str, int] = {}
        for tool in tools:
            counts[tool.tool] = counts.get(tool.tool, 0) + 1
        names = {(tool.tool if self.unprefixed and counts[tool.tool] == 1 else tool.name): tool.name for tool in tools}
        self._offered = _Offer(basis, tuple(tools), names, {tool.name: tool for tool in tools})
        return self._offered

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The offered tool's schema, for the SDK's argument check (without a full tools/list per call)."""
        offer = self._offer()
        tool = offer.by_catalog.get(offer.names.get(name, ""))
        return tool.input_schema if tool is not None else None

    def _fingerprint(self) -> str:
        text = "\n".join(f"{tool.name} {tool.definition_hash}" for tool in self._offer().tools)
        return hashlib.sha256(text.encode()).hexdigest()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The gateway's own work while it serves: change notices, and calls that wait on answers."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._follow_changes)
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._tg = None

    async def _follow_changes(self) -> None:
        """Forward downstream tool changes to every client, both eras (GW-3)."""
        seen = [self._fingerprint()]
        while True:
            await self.host.wait_until(lambda h: self._fingerprint() != seen[0])
            seen[0] = self._fingerprint()
            # New era: listeners of `subscriptions/listen`; handshake era: each connection's own channel.
            await self._bus.publish(ToolsListChanged())
            for connection in list(self._connections):
                if connection.protocol_version in MODERN_PROTOCOL_VERSIONS or not connection.has_standalone_channel:
                    continue
                try:
                    await connection.notify("notifications/tools/list_changed", None)
                except Exception:  # a client that went away: nothing to tell it
                    self._connections.discard(connection)

    # ----------------------------------------------------------------- handlers

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del params
        self._remember(ctx)
        offer = self._offer()
        offered = {catalog: public for public, catalog in offer.names.items()}
        return types.ListToolsResult(tools=[wire_tool(tool, offered[tool.name]) for tool in offer.tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        self._remember(ctx)
        name = self._offer().names.get(params.name)
        if name is None:
            return error_result(
                f"no shared tool {params.name!r}: the gateway offers only the tools its configuration shares"
            )
        rounds_open = self._tg is not None and len(self._trips) < MAX_WAITING_CALLS
        if params.request_state is not None or (rounds_open and answers_in_rounds(ctx)):
            return await self._call_in_rounds(ctx, params, name)
        result = await self.host.call(
            name,
            dict(params.arguments or {}),
            conversation=conversation_of(ctx),
            on_progress=progress_to(ctx),
            on_log=self._log_to(ctx),
            on_input=input_relay(ctx, self._console_for(name)),
        )
        return wire_result(result)

    async def _call_in_rounds(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, name: str
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A new-era client that can answer: the call runs on its own, and pauses for the client's answers."""
        if params.request_state is not None:
            trip = self._trips.get(params.request_state)
            if trip is None or trip.name != params.name:
                raise MCPError(types.INVALID_PARAMS, "unknown or expired requestState: call the tool again without one")
            trip.answer(params.input_responses or {})
        elif self._tg is None:
            return error_result("the gateway is stopping; call again once it is back")
        else:
            modes = elicitation_modes(ctx.session.client_capabilities)
            trip = RoundTrip(params.name, answerable(ctx), modes, self._console_for(name))
            self._trips[trip.token] = trip
            self._tg.start_soon(self._run_trip, trip, conversation_of(ctx), name, dict(params.arguments or {}))
        return await trip.step(ctx)

    async def _run_trip(self, trip: RoundTrip, conversation: str, name: str, arguments: dict[str, Any]) -> None:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            # To the round under way, if it asked for progress; between rounds there is no one to tell.
            send = progress_to(trip.ctx) if trip.ctx is not None else None
            if send is not None:
                with contextlib.suppress(Exception):
                    await send(progress, total, message)

        try:
            relay = InputRelay(audience=f"round-trip-{trip.token}", ask=trip.ask)
            with trip.scope:
                result = await self.host.call(
                    name, arguments, conversation=conversation, on_progress=on_progress, on_input=relay
                )
                trip.finish(wire_result(result))
            if trip.finished:
                with anyio.move_on_after(ANSWER_SECS):  # a client that never comes back for it
                    await trip.collected.wait()
        except Exception as exc:  # one call's failure is not the gateway's
            _log.error("%s failed inside mcpyard\n%s", name, self.host.redact(traceback.format_exc()))
            trip.finish(error_result(f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"))
        finally:
            if not trip.finished:  # the client gave up on a round: whoever still asks hears so
                trip.finish(error_result(f"{name} was cancelled: its client gave up on it"))
            self._trips.pop(trip.token, None)

    def _console_for(self, name: str) -> InputFn | None:
        """Who answers a question the client cannot take during a call of `name`: the host's elicitor
        (the console, on a terminal), or no one."""
        elicitor = self.host.session.elicitor
        entry = self.host.catalog.get(name)
        if elicitor is None or entry is None:
            return None
        return elicitor_input(elicitor, entry.server, name)

    def _log_to(self, ctx: ServerRequestContext[Any]) -> LogFn:
        async def on_log(message: types.LoggingMessageNotificationParams) -> None:
            # Downstream log messages (already redacted) reach the caller, at or above its level.
            if self._logs.wants(connection_of(ctx), message.level):
                related = str(ctx.request_id) if ctx.request_id is not None else None
                await send_log_message(ctx.session, message.level, message.data, message.logger, related)

        return on_log

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._remember(ctx)
        self._logs.set(connection_of(ctx), params.level)
        return types.EmptyResult()

    def _shares_extras(self, server: str) -> bool:
        """Resources and prompts come along for servers that share tools, or with `--share-all`."""
        if self.share_all:
            return True
        return any(spec.id == server and spec.shared_tools for spec in self.host.config.servers)

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        del ctx, params
        resources = [
            types.Resource.model_validate(
                {
                    **info.wire,
                    "name": str(info.wire.get("name", info.name)) if self.unprefixed else info.name,
                    "description": info.description or None,
                }
            )
            for info in self.host.resources()
            if self._shares_extras(info.server)
        ]
        return types.ListResourcesResult(resources=resources)

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        del ctx
        uri = str(params.uri)
        if self._shared_owner(uri) is None:
            raise MCPError(types.INVALID_PARAMS, f"no shared resource {uri!r}")
        try:
            return await self.host.read_resource(uri)
        except CallError as exc:
            raise MCPError(types.INTERNAL_ERROR, exc.message) from None

    def _shared_owner(self, uri: str) -> str | None:
        owner = self.host.owner_of_uri(uri)
        return owner if owner is not None and self._shares_extras(owner) else None

    async def _list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        del ctx, params
        templates = [
            types.ResourceTemplate.model_validate(
                {**info.wire, "name": str(info.wire.get("name", info.name)) if self.unprefixed else info.name}
            )
            for info in self.host.templates()
            if self._shares_extras(info.server)
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def _complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        del ctx
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        try:
            return await self.host.complete(params.ref, argument, context, visible=self._shares_extras)
        except CallError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from None

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        del ctx, params
        prompts = [
            types.Prompt.model_validate(
                {
                    "name": info.prompt if self.unprefixed else info.name,
                    "description": info.description or None,
                    "arguments": list(info.arguments) or None,
                }
            )
            for info in self.host.prompts()
            if self._shares_extras(info.server)
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        del ctx
        prompt = next(
            (
                info
                for info in self.host.prompts()
                if params.name in (info.name, info.prompt if self.unprefixed else None)
                and self._shares_extras(info.server)
            ),
            None,
        )
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"no shared prompt {params.name!r}")
        try:
            return await self.host.get_prompt(prompt.name, params.arguments or {})
        except CallError as exc:
            raise MCPError(types.INTERNAL_ERROR, exc.message) from None

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        connection = connection_of(ctx)
        if connection is not None:
            self._connections.add(connection)
