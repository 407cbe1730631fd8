"""Listing what a server offers: every page, bounded, in wire form, listed again when it says so (CONN-4, CONN-6)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.abc
from mcp import Client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel

from mcpyard.connect._errors import describe_failure
from mcpyard.connect._legacy_tasks import requires_task, takes_tasks

__all__ = ["MAX_ITEMS", "MAX_PAGES", "ToolChanges", "list_extras", "list_tools"]

MAX_PAGES = 100
MAX_ITEMS = 10_000

Wire = Mapping[str, Any]
Page = tuple[Sequence[BaseModel], str | None]


_LEFT_OUT: ContextVar[list[str] | None] = ContextVar("mcpyard_tools_left_out", default=None)
_SDK_DROPS = "dropping tool %r: invalid x-mcp-header (%s)"
"""The SDK's log line for a new-era tool it leaves out of a listing (the 2026-07-28 rule for `x-mcp-header`)."""


class _LeftOutTools(logging.Filter):
    """Takes the SDK's line for each tool it leaves out while `list_tools` lists: said on the status page instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        left_out = _LEFT_OUT.get()
        if left_out is None or record.msg != _SDK_DROPS or not isinstance(record.args, tuple) or len(record.args) != 2:
            return True
        name, reason = record.args
        left_out.append(f"{str(name)[:128]!r} ({str(reason)[:200]})")
        return False


logging.getLogger("client").addFilter(_LeftOutTools())  # the SDK's client session logs under this name


async def _all_pages(fetch: Callable[[str | None], Awaitable[Page]]) -> tuple[list[Wire], bool]:
    """Every item of every page, and whether the page bound cut the listing short."""
    items: list[Wire] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page, cursor = await fetch(cursor)
        items.extend(item.model_dump(by_alias=True, exclude_none=True, mode="json") for item in page)
        if not cursor:
            return items, False
    return items, True


async def list_tools(client: Client, server: str, warn: Callable[[str], None]) -> tuple[Wire, ...]:
    """Every tool the server lists that mcpyard can call, at most `MAX_ITEMS`."""

    async def fetch(cursor: str | None) -> Page:
        page = await client.list_tools(cursor=cursor)
        return page.tools, page.next_cursor

    left_out: list[str] = []
    token = _LEFT_OUT.set(left_out)
    try:
        tools, cut = await _all_pages(fetch)
    finally:
        _LEFT_OUT.reset(token)
    if cut:
        warn(f"server {server!r} listed more than {MAX_PAGES} pages of tools; the rest are ignored")
    if left_out:
        shown = ", ".join(left_out[:20]) + (f" and {len(left_out) - 20} more" if len(left_out) > 20 else "")
        warn(
            f"server {server!r}: tools left out, their x-mcp-header annotations are invalid "
            f"(the protocol says a client must not call them): {shown}"
        )
    if not takes_tasks(client) and (skipped := sorted(str(tool.get("name")) for tool in tools if requires_task(tool))):
        warn(
            f"server {server!r}: tools {', '.join(skipped)} can only run as MCP tasks, which the server "
            "does not declare it takes for tool calls (its `tasks` capability); they are not offered"
        )
        tools = [tool for tool in tools if not requires_task(tool)]
    if len(tools) > MAX_ITEMS:
        warn(f"server {server!r} listed {len(tools)} tools; only the first {MAX_ITEMS} are used")
    return tuple(tools[:MAX_ITEMS])


async def list_extras(
    client: Client, server: str, warn: Callable[[str], None]
) -> tuple[tuple[Wire, ...], tuple[Wire, ...], tuple[Wire, ...]]:
    """Resources, resource templates and prompts, when the server offers them; a failure lists none."""
    capabilities = client.server_capabilities

    async def resources(cursor: str | None) -> Page:
        page = await client.list_resources(cursor=cursor)
        return page.resources, page.next_cursor

    async def templates(cursor: str | None) -> Page:
        page = await client.list_resource_templates(cursor=cursor)
        return page.resource_templates, page.next_cursor

    async def prompts(cursor: str | None) -> Page:
        page = await client.list_prompts(cursor=cursor)
        return page.prompts, page.next_cursor

    try:
        listed_resources = (await _all_pages(resources))[0] if capabilities.resources is not None else []
        listed_templates = (await _all_pages(templates))[0] if capabilities.resources is not None else []
        listed_prompts = (await _all_pages(prompts))[0] if capabilities.prompts is not None else []
    except Exception as exc:  # a server whose extras are broken still serves its tools
        warn(f"server {server!r}: listing resources or prompts failed: {describe_failure(exc)}")
        return (), (), ()
    return tuple(listed_resources[:MAX_ITEMS]), tuple(listed_templates[:MAX_ITEMS]), tuple(listed_prompts[:MAX_ITEMS])


class ToolChanges:
    """Lists a server's tools again whenever it says they changed, in either era (CONN-4).

    Handshake-era servers send `notifications/tools/list_changed` (the supervisor's message
    handler calls `heard()`); new-era ones announce changes on a `listen()` stream.
    """

    def __init__(self, server: str, warn: Callable[[str], None], on_tools: Callable[[tuple[Wire, ...]], None]) -> None:
        self._server = server
        self._warn = warn
        self._on_tools = on_tools
        self._relist = anyio.Event()

    def heard(self) -> None:
        self._relist.set()

    def forget(self) -> None:
        """Drop a change heard before now: the listing about to be made covers it (CONN-6)."""
        self._relist = anyio.Event()

    async def follow(self, client: Client, tg: anyio.abc.TaskGroup) -> None:
        """Start following in `tg`; returns once a new-era server's stream is open (no change goes unheard)."""
        tools = client.server_capabilities.tools
        if bool(tools and tools.list_changed) and client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await tg.start(self._listen, client)
        tg.start_soon(self._relist_on_change, client)

    async def _relist_on_change(self, client: Client) -> None:
        while True:
            await self._relist.wait()
            self._relist = anyio.Event()
            try:
                tools = await list_tools(client, self._server, self._warn)
            except Exception as exc:  # a failed refresh keeps the last listing
                self._warn(f"server {self._server!r}: refreshing tools failed: {describe_failure(exc)}")
                continue
            self._on_tools(tools)

    async def _listen(self, client: Client, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                async for _event in subscription:
                    self._relist.set()
        except Exception as exc:  # the listing still works; only change notices are lost
            self._warn(f"server {self._server!r}: cannot follow tool changes: {describe_failure(exc)}")
            with contextlib.suppress(RuntimeError):
                task_status.started()
