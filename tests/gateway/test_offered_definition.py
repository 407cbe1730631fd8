"""GW-3, CAT-2: a gateway client's call runs on the definition it was listed; once refused as changed, the next runs.

`mcpyard serve` as a process in front of a server that changes a tool's definition while the client is connected,
driven by the SDK's client over stdio (both protocol eras) and over HTTP (a handshake-era session). The calls
before the change go the gateway's fast path (repeated calls), so both of its paths are held to the binding.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Literal

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Home, fixture_server
from tests.gateway.test_fast_path import LINE_LIMIT, Wire
from tests.gateway.test_serve import http_gateway, serve_params, text_of

pytestmark = pytest.mark.anyio

NEW = "Probe, described anew: it now does something else."
WAIT_SECS = 15


class Heard:
    """How many times the gateway told the client its tools changed."""

    def __init__(self) -> None:
        self.count = 0
        self.moved = anyio.Event()

    def note(self) -> None:
        self.count += 1
        self.moved.set()
        self.moved = anyio.Event()

    async def past(self, count: int) -> None:
        with anyio.fail_after(WAIT_SECS):
            while self.count <= count:
                await self.moved.wait()


@asynccontextmanager
async def gateway_client(
    home: Home, front: Literal["stdio", "http"], mode: Literal["legacy", "auto"]
) -> AsyncIterator[tuple[Client, Heard]]:
    config = str(home.write_config({"dyn": fixture_server("list_changed")}, mode="auto"))
    heard = Heard()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.note()

    async with AsyncExitStack() as stack:
        if front == "stdio":
            transport: Any = serve_params(home, config, "--share-all")
        else:
            url = await stack.enter_async_context(http_gateway(home, config, "--share-all"))
            transport = streamable_http_client(url)
        client = await stack.enter_async_context(Client(transport, mode=mode, message_handler=on_message))
        if mode == "auto":  # the new era hears of changes on a `subscriptions/listen` stream
            subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            tg = await stack.enter_async_context(anyio.create_task_group())

            async def follow() -> None:
                async for _event in subscription:
                    heard.note()

            tg.start_soon(follow)
            stack.callback(tg.cancel_scope.cancel)
        yield client, heard


async def changed(client: Client, heard: Heard, description: str) -> None:
    """Have the server describe `probe` anew, and wait until the gateway tells the client."""
    before = heard.count
    described = await client.call_tool("dyn__describe", {"name": "probe", "description": description})
    assert not described.is_error, text_of(described)
    await heard.past(before)


@pytest.mark.parametrize(
    ("front", "mode"), [("stdio", "legacy"), ("stdio", "auto"), ("http", "legacy")], ids=["stdio", "stdio-new", "http"]
)
async def test_gw3_cat2_a_call_to_a_tool_changed_since_its_client_listed_it_is_refused_once(
    home: Home, front: Literal["stdio", "http"], mode: Literal["legacy", "auto"]
) -> None:
    async with gateway_client(home, front, mode) as (client, heard):
        before = heard.count
        added = await client.call_tool("dyn__add_tool", {"name": "probe"})
        assert not added.is_error, text_of(added)
        await heard.past(before)
        assert "dyn__probe" in {tool.name for tool in (await client.list_tools()).tools}
        for _ in range(3):  # repeated calls: the gateway's fast path takes them
            assert "I am probe" in text_of(await client.call_tool("dyn__probe", {}))

        await changed(client, heard, NEW)
        refused = await client.call_tool("dyn__probe", {})
        assert refused.is_error
        assert "not the tool that was offered" in text_of(refused)
        assert "nothing was sent" in text_of(refused)
        again = await client.call_tool("dyn__probe", {})  # told once: it runs on the definition there is now
        assert not again.is_error, text_of(again)
        assert "I am probe" in text_of(again)

        # A client that lists the tools again runs the new definition at once.
        await changed(client, heard, f"{NEW} Twice.")
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["dyn__probe"].description is not None
        assert "Twice." in listed["dyn__probe"].description
        ran = await client.call_tool("dyn__probe", {})
        assert not ran.is_error, text_of(ran)


async def test_gw3_a_client_that_never_listed_the_tools_runs_the_definition_there_is(home: Home) -> None:
    # A client of its own (the SDK's lists the tools by itself after its first call, to check results).
    config = home.write_config({"dyn": fixture_server("list_changed")}, mode="auto")
    command = [sys.executable, "-m", "mcpyard", "serve", "--share-all", "--mcp-config", str(config)]
    async with await anyio.open_process([*command, "--workspace", str(home.workspace)], env=home.environ) as process:
        wire = Wire(process)
        await wire.handshake()
        await wire.call(1, "dyn__add_tool", {"name": "probe"})
        assert not (await wire.answer(1))["result"].get("isError")
        await told(wire, 1)
        await wire.call(2, "dyn__probe", {})
        assert not (await wire.answer(2))["result"].get("isError")
        await wire.call(3, "dyn__describe", {"name": "probe", "description": NEW})
        assert not (await wire.answer(3))["result"].get("isError")
        await told(wire, 2)
        await wire.call(4, "dyn__probe", {})
        ran = (await wire.answer(4))["result"]
        assert not ran.get("isError"), ran
        assert "I am probe" in json.dumps(ran)
        await wire.close_input()
        with anyio.fail_after(WAIT_SECS):
            await process.wait()


async def told(wire: Wire, count: int) -> None:
    """Read until the gateway has told the client `count` times in all that its tools changed."""
    with anyio.fail_after(WAIT_SECS):
        while sum(message.get("method") == "notifications/tools/list_changed" for message in wire.seen) < count:
            wire.seen.append(json.loads(await wire.stdout.receive_until(b"\n", LINE_LIMIT)))
