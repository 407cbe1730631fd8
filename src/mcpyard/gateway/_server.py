"""The gateway: a host's shared tools as one MCP server, every pipeline rule applied (GW-1 to GW-3)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError

from mcpyard import Host, ToolInfo
from mcpyard.connect import InputFn, InputRelay, LogFn, ProgressFn
from mcpyard.elicitation import elicitor_input
from mcpyard.errors import CallError
from mcpyard.gateway._context import connection_of, conversation_of
from mcpyard.gateway._face import ToolFace
from mcpyard.gateway._logs import LogLevels
from mcpyard.gateway._offered import Offer
from mcpyard.gateway._search import GatewaySearch
from mcpyard.gateway._subscriptions import Subscriptions
from mcpyard.gateway._task_file import TaskFile
from mcpyard.pipeline import FIND_TOOLS, READ_RESULT, CallResult

__all__ = ["GATEWAY_INSTRUCTIONS", "Gateway"]

GATEWAY_INSTRUCTIONS = (
    "mcpyard gateway: the tools below belong to other MCP servers, named <server>__<tool>. Every call "
    "goes through mcpyard's rules (modes, deny rules, files, caching, caps, redaction). Results come back "
    "fenced as untrusted data; a cut result names a handle to read on with read_result."
)


class Gateway(ToolFace):
    """Serves a host's shared tools; one instance per `mcpyard serve`."""

    def __init__(
        self,
        host: Host,
        *,
        share_all: bool = False,
        unprefixed: bool = False,
        tool_search: bool = False,
        task_file: Path | None = None,
    ) -> None:
        self.host = host
        self.tool_search = GatewaySearch() if tool_search else None
        """`--tool-search`: past the budget, each client is offered `find_tools` and what it found (MOD-4)."""
        self.share_all = share_all
        self.unprefixed = unprefixed
        """Offer tools and prompts under their servers' own names (for a single server; names must not collide)."""
        self._offered: Offer | None = None
        self._bus = InMemorySubscriptionBus()
        self._subscriptions = Subscriptions(host, self._bus, self._shared_owner, connection_of)
        logs = LogLevels(self._shares_extras)
        host.on_server_log(logs.between_calls)
        prompt = host.system_prompt()
        super().__init__(
            GATEWAY_INSTRUCTIONS + ("\n\n" + prompt if prompt else ""),
            log_levels=logs,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resource_templates=self._list_templates,
            on_completion=self._complete,
            on_subscribe_resource=self._subscriptions.subscribe,
            on_unsubscribe_resource=self._subscriptions.unsubscribe,
            on_subscriptions_listen=self._subscriptions.listen,
        )
        self.task_file = TaskFile(task_file, host, self._task_owner) if task_file is not None else None
        """Where its tasks outlive it (`serve --transport http`): followed again when it starts."""
        self.tasks.elsewhere = self.task_file

    # ----------------------------------------------------------------- what is shared

    def shared_tools(self) -> list[ToolInfo]:
        """`shared_tools` of each server (globs on the server's own tool names), or all with `--share-all` (GW-1).

        `readOnlyHint` alone never shares a tool; the built-in `read_result` always comes along.
        """
        return list(self._shared().tools)

    async def offer(self, ctx: ServerRequestContext[Any]) -> Offer:
        """What is offered: the same to every client, unless it searches for tools (then, what it found)."""
        shared = self._shared()
        if self.tool_search is None or not self.tool_search.applies(shared, self.host.view.settings.tool_search):
            return shared
        return self.tool_search.offer(shared, conversation_of(ctx), self.host.config.servers)

    def audience(self, ctx: ServerRequestContext[Any]) -> Hashable:
        """With tool search, each client is offered its own findings; else all are offered the same."""
        return conversation_of(ctx) if self.tool_search is not None else None

    def _shared(self) -> Offer:
        """The shared tools, worked out again only when the catalog, the pins or the configuration change."""
        view = self.host.view
        cached = self._offered
        if cached is not None:
            catalog, policies, plan = cached.basis
            if catalog is view.catalog and policies is view.policies and plan is view.plan:
                return cached
        basis = (view.catalog, view.policies, view.plan)
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
        self._offered = Offer(basis, tuple(tools), names, {tool.name: tool for tool in tools})
        return self._offered

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The offered tool's schema, for the SDK's argument check (without a full tools/list per call)."""
        offer = self._shared()
        tool = offer.by_catalog.get(offer.names.get(name, ""))
        return tool.input_schema if tool is not None else None

    def _fingerprint(self) -> str:
        text = "\n".join(f"{tool.name} {tool.definition_hash}" for tool in self._shared().tools)
        return hashlib.sha256(text.encode()).hexdigest()

    async def next_change(self) -> Callable[[Hashable], bool]:
        """Downstream tool changes concern every client (GW-3); tools a client found, that client (MOD-4)."""
        seen = self._fingerprint()
        if self.tool_search is None:
            await self.host.wait_until(lambda h: self._fingerprint() != seen)
            return lambda audience: True
        search = self.tool_search
        concerned: list[Callable[[Hashable], bool]] = []
        async with anyio.create_task_group() as tg:

            async def downstream() -> None:
                await self.host.wait_until(lambda h: self._fingerprint() != seen)
                concerned.append(lambda audience: True)
                tg.cancel_scope.cancel()

            async def found() -> None:
                concerned.append(await search.grown())
                tg.cancel_scope.cancel()

            tg.start_soon(downstream)
            tg.start_soon(found)
        return concerned[0]

    def bus_for(self, audience: Hashable) -> InMemorySubscriptionBus | None:
        del audience
        return self._bus

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
        if name == FIND_TOOLS and self.tool_search is not None:
            return self.tool_search.call(self._shared(), conversation_of(ctx), arguments)
        return await self.host.call(
            name,
            arguments,
            conversation=conversation_of(ctx),
            on_progress=on_progress,
            on_log=on_log,
            on_input=on_input,
            definition_hash=definition_hash,
        )

    def fallback_input(self, ctx: ServerRequestContext[Any], name: str) -> InputFn | None:
        """The host's elicitor (the console, on a terminal) answers what the client cannot take, if there is one."""
        del ctx
        elicitor = self.host.session.elicitor
        entry = self.host.catalog.get(name)
        if elicitor is None or entry is None:
            return None
        return elicitor_input(elicitor, entry.server, name)

    def redact(self, text: str) -> str:
        return self.host.redact(text)

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
