"""GW-1 over stdio: tool calls the front answers on parsed JSON (the fast path) are answered as the SDK's path answers.

`mcpyard serve` as a real process spoken to in raw JSON-RPC lines, in both protocol eras. The
first call of a client goes through the SDK's server; later calls with the same `_meta` take
the fast path. Each test compares what a client reads, or what it may do (cancel, progress).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests._processes import with_ctrl_c
from tests._waiting import eventually
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
LINE_LIMIT = 16 * 1024 * 1024


def modern_meta(**capabilities: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


class Wire:
    """A client of `mcpyard serve` on its standard input and output, one JSON-RPC message per line."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.seen: list[dict[str, Any]] = []
        """Every message read so far, in order."""

    async def send(self, message: dict[str, Any] | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.stdin.send(line + b"\n")

    async def close_input(self) -> None:
        await self.stdin.aclose()

    async def call(self, request_id: Any, name: str, arguments: Any, meta: dict[str, Any] | None = None) -> None:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The response to `request_id` (messages read on the way are kept in `seen`)."""
        with anyio.fail_after(60):
            while True:
                message: dict[str, Any] = json.loads(await self.stdout.receive_until(b"\n", LINE_LIMIT))
                self.seen.append(message)
                if "method" not in message and message.get("id") == request_id:
                    return message

    async def handshake(self) -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        await self.answer("init")
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@asynccontextmanager
async def serving(home: Home, **env: str) -> AsyncIterator[Wire]:
    config = home.write_config({"basic": {**fixture_server("basic"), "env": env}})
    command = [sys.executable, "-m", "mcpyard", "serve", "--share-all", "--mcp-config", str(config)]
    command += ["--workspace", str(home.workspace)]
    async with await anyio.open_process(command, env=home.environ) as process:
        try:
            yield Wire(process)
        finally:
            assert process.stdin is not None
            with contextlib.suppress(anyio.ClosedResourceError):
                await process.stdin.aclose()
            with anyio.fail_after(30):
                await process.wait()


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "id"}


CALLS = [
    ("basic__echo", {"text": "héllo ✓"}),
    ("basic__fail", {}),
    ("basic__tiny_png", {}),
    ("basic__echo", {"text": 7}),  # arguments the tool's schema refuses
    ("basic__echo", {"text": "\ud800"}),  # a lone surrogate the pipeline refuses
    ("basic__nothing_like_it", {}),
]


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_gw1_a_call_on_the_fast_path_reads_as_on_the_sdk_path(home: Home, era: str) -> None:
    meta = modern_meta() if era == MODERN else None
    async with serving(home) as wire:
        if era == HANDSHAKE:
            await wire.handshake()
        for index, (name, arguments) in enumerate(CALLS):
            # The first of each pair carries a progress token (the SDK's path), the second not (the fast path,
            # once a call without one armed it).
            await wire.call(f"arm-{index}", "basic__add", {"a": 1, "b": 1}, meta)
            await wire.answer(f"arm-{index}")
            slow_meta = {**(meta or {}), "progressToken": f"p-{index}"}
            await wire.call(f"sdk-{index}", name, arguments, slow_meta)
            by_sdk = await wire.answer(f"sdk-{index}")
            await wire.call(f"fast-{index}", name, arguments, meta)
            by_fast = await wire.answer(f"fast-{index}")
            assert without_id(by_fast) == without_id(by_sdk), name
            if era == MODERN:
                assert by_fast["result"]["resultType"] == "complete"
                assert by_fast["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpyard"


@pytest.mark.parametrize("named", [2, "2"], ids=["by_number", "by_text_as_the_sdk_matches_it"])
async def test_gw1_a_call_cancelled_on_the_fast_path_is_cancelled_downstream_and_never_answered(
    home: Home, named: int | str
) -> None:
    started = home.root / "slow-started"
    async with serving(home, BASIC_SLOW_STARTED=str(started)) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.call(2, "basic__slow", {"seconds": 60})
        # The server writes the file once the call sleeps; nothing this process can wait on announces it.
        await eventually(started.exists, within=30, what="the slow call to start")
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": named}})
        await wire.call(3, "basic__cancellations", {"at_least": 1})
        counted = await wire.answer(3)
        assert "1" in counted["result"]["content"][0]["text"]
        await wire.call(4, "basic__echo", {"text": "still here"})
        assert "still here" in (await wire.answer(4))["result"]["content"][0]["text"]
        assert not [message for message in wire.seen if message.get("id") == 2]


async def test_gw1_a_call_cancelled_in_the_same_write_as_it_is_never_answered_and_the_session_goes_on(
    home: Home,
) -> None:
    """The cancel may be read before the call's task has begun: the call is never answered, and its id is free again."""
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "basic__slow", "arguments": {"seconds": 60}},
        }
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        await wire.send(json.dumps(call).encode() + b"\n" + json.dumps(cancel).encode())
        await wire.call(2, "basic__echo", {"text": "the same id again"})
        assert "the same id again" in (await wire.answer(2))["result"]["content"][0]["text"]
        assert len([message for message in wire.seen if message.get("id") == 2]) == 1


async def test_gw1_a_call_whose_clients_input_ends_right_after_it_is_answered_connection_closed(home: Home) -> None:
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.call(2, "basic__slow", {"seconds": 60})
        await wire.close_input()
        answer = await wire.answer(2)
        assert answer["error"] == {"code": -32000, "message": "Connection closed"}


async def test_gw1_a_call_asking_for_progress_after_the_fast_path_is_armed_gets_its_progress(home: Home) -> None:
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.call(2, "basic__slow", {"seconds": 0.3, "progress_every": 0.1}, {"progressToken": "tok"})
        answer = await wire.answer(2)
        assert "slept" in answer["result"]["content"][0]["text"]
        progress = [m for m in wire.seen if m.get("method") == "notifications/progress"]
        assert progress
        assert {m["params"]["progressToken"] for m in progress} == {"tok"}


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}}',
        b'{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"basic__echo","arguments":["x"]}}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":["basic__echo"],"arguments":{}}}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"basic__echo","arguments":{},"extra":1}}',
        b'{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"basic__echo","arguments":{"text":"x"}}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"basic__echo","_meta":{"progressToken":NaN}}}',
    ],
)
async def test_gw1_a_message_the_fast_path_does_not_take_is_answered_by_the_sdk_path_and_the_session_goes_on(
    home: Home, line: bytes
) -> None:
    async with serving(home) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.send(line)
        await wire.call(2, "basic__echo", {"text": "after"})
        assert "after" in (await wire.answer(2))["result"]["content"][0]["text"]
        answered = [m for m in wire.seen if m.get("id") not in (1, 2, "init")]
        assert all("error" in m or m["result"].get("isError") for m in answered), answered


@pytest.mark.parametrize("meta", [None, {"progressToken": "t"}], ids=["fast", "sdk"])
async def test_gw1_a_call_running_when_the_client_closes_its_input_is_answered_connection_closed(
    home: Home, meta: dict[str, Any] | None
) -> None:
    started = home.root / "slow-started"
    async with serving(home, BASIC_SLOW_STARTED=str(started)) as wire:
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.call(2, "basic__slow", {"seconds": 60}, meta)
        # The server writes the file once the call sleeps; nothing this process can wait on announces it.
        await eventually(started.exists, within=30, what="the slow call to start")
        await wire.close_input()
        answer = await wire.answer(2)
        assert answer["error"] == {"code": -32000, "message": "Connection closed"}


@pytest.mark.parametrize("meta", [None, {"progressToken": "t"}], ids=["fast", "sdk"])
async def test_gw1_a_call_running_when_the_gateway_is_interrupted_ends_with_it(
    home: Home, meta: dict[str, Any] | None
) -> None:
    """Ctrl-C while a call runs (on the fast path or the SDK's): the gateway stops at once, without a traceback."""
    started = home.root / "slow-started"
    config = home.write_config({"basic": {**fixture_server("basic"), "env": {"BASIC_SLOW_STARTED": str(started)}}})
    command = with_ctrl_c([sys.executable, "-m", "mcpyard", "serve", "--share-all", "--mcp-config", str(config)])
    async with await anyio.open_process(command, env=home.environ) as process:
        wire = Wire(process)
        await wire.handshake()
        await wire.call(1, "basic__add", {"a": 1, "b": 1})
        await wire.answer(1)
        await wire.call(2, "basic__slow", {"seconds": 60}, meta)
        # The server writes the file once the call sleeps; nothing this process can wait on announces it.
        await eventually(started.exists, within=30, what="the slow call to start")
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(10):
            code = await process.wait()
        assert process.stderr is not None
        said = b"".join([chunk async for chunk in process.stderr]).decode()
    assert code == 130, said
    assert "every server was stopped" in said
    assert "Traceback" not in said
