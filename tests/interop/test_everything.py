"""The Host against npm's server-everything over stdio, streamable HTTP and SSE.

CONN-1, CONN-2, CONN-5, CONN-6, CAT-1, CALL-1, CALL-2 (progress), CALL-5 (images, structured content) and
CALL-8 (a tool that runs only as a task).

mcpyard declares no sampling, elicitation or roots capability, so the server never registers
the tools that depend on them (get-roots-list, trigger-sampling-request[-async],
trigger-elicitation-request[-async], trigger-url-elicitation): an SDK client with the same
(empty) capabilities does not see them either, which the listing comparison proves.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcpyard import CallResult, Host, ToolInfo
from mcpyard.connect import LOCATION_VARIABLES
from tests.conftest import Home
from tests.interop.conftest import EverythingServer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "everything"
CALL_SECONDS = 15
"""Bound on one call as the test sees it; `call_timeout_secs` is shorter, so a hang comes back as a result."""
SETTLE_SECONDS = 10
TINY_DATA_URI = "data:text/plain;base64,aGVsbG8gaW50ZXJvcA=="
"""`hello interop`: gzip-file-as-resource compresses it without going to the network."""


@dataclass(frozen=True)
class Case:
    """One call of one tool and what must come back."""

    arguments: dict[str, Any]
    text: str
    """A fragment of what the model reads."""
    blocks: tuple[str, ...] = ("text",)
    """The content block types, in order."""
    structured: Any = None
    error_code: str | None = None
    """None: the call must succeed."""
    progress: tuple[float, ...] = ()
    """The progress values the call must report, in order."""
    mime_types: Mapping[str, str] = field(default_factory=dict)
    """Block type → the MIME type every block of that type must carry."""
    polled: bool = False
    """The call runs as a task: its progress is the task's polls, counted from 1 (how many depends on timing)."""

    def mismatches(self, tool: str, result: CallResult, progress: list[float]) -> list[str]:
        problems: list[str] = []
        expected_ok = self.error_code is None
        if result.ok != expected_ok or (result.error or {}).get("code") != self.error_code:
            problems.append(f"ok={result.ok}, error={result.error}; expected error code {self.error_code}")
        if self.text not in result.text:
            problems.append(f"text {result.text[:300]!r} lacks {self.text!r}")
        types = tuple(block.get("type") for block in result.content)
        if types != self.blocks:
            problems.append(f"content block types {types}, expected {self.blocks}")
        for block in result.content:
            mime = self.mime_types.get(str(block.get("type")))
            carried = block.get("mimeType") or (block.get("resource") or {}).get("mimeType")
            if mime is not None and carried != mime:
                problems.append(f"a {block.get('type')} block has MIME type {carried!r}, expected {mime!r}")
        if result.structured != self.structured:
            problems.append(f"structured {result.structured!r}, expected {self.structured!r}")
        polls = tuple(float(count) for count in range(1, len(progress) + 1))
        if self.polled and not (progress and tuple(progress) == polls):
            problems.append(f"progress {progress}, expected the task's polls counted from 1")
        elif not self.polled and tuple(progress) != self.progress:
            problems.append(f"progress {progress}, expected {list(self.progress)}")
        return [f"{tool}: {problem}" for problem in problems]


CASES: dict[str, Case] = {
    "echo": Case({"message": "hello interop"}, "Echo: hello interop"),
    "get-annotated-message": Case(
        {"messageType": "success", "includeImage": True},
        "Operation completed successfully",
        blocks=("text", "image"),
        mime_types={"image": "image/png"},
    ),
    "get-env": Case({}, '"PATH"'),
    "get-resource-links": Case(
        {"count": 2},
        "Here are 2 resource links",
        blocks=("text", "resource_link", "resource_link"),
    ),
    "get-resource-reference": Case(
        {"resourceType": "Text", "resourceId": 1},
        "demo://resource/dynamic/text/1",
        blocks=("text", "resource", "text"),
        mime_types={"resource": "text/plain"},
    ),
    "get-structured-content": Case(
        {"location": "Chicago"},
        "Light rain",
        structured={"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82},
    ),
    "get-sum": Case({"a": 2, "b": 3.5}, "The sum of 2 and 3.5 is 5.5."),
    "get-tiny-image": Case(
        {},
        "The image above is the MCP logo.",
        blocks=("text", "image", "text"),
        mime_types={"image": "image/png"},
    ),
    "gzip-file-as-resource": Case(
        {"name": "hello.txt.gz", "data": TINY_DATA_URI, "outputType": "resource"},
        "hello.txt.gz",
        blocks=("resource",),
        mime_types={"resource": "application/gzip"},
    ),
    # Declares `execution.taskSupport: "required"`: runs as a task of the 2025-11-25 protocol (CALL-8).
    "simulate-research-query": Case({"topic": "interop"}, "# Research Report: interop", polled=True),
    "toggle-simulated-logging": Case({}, "Started simulated, random-leveled logging"),
    "toggle-subscriber-updates": Case({}, "Started simulated resource updated notifications"),
    "trigger-long-running-operation": Case(
        {"duration": 0.2, "steps": 2},
        "Long running operation completed. Duration: 0.2 seconds, Steps: 2.",
        progress=(1.0, 2.0),
    ),
}

TOGGLES = ("toggle-simulated-logging", "toggle-subscriber-updates")
"""Tools that start timers in the server: switched off again, so a stdio server exits when stdin closes."""


@asynccontextmanager
async def open_host(home: Home, entry: dict[str, Any]) -> AsyncIterator[Host]:
    config = home.write_config({SERVER_ID: entry})
    # `auto`: these tests prove transport and protocol interop, not the approval policy (POL-1).
    async with home.open(
        config,
        mode="auto",
    ) as host:
        yield host


async def list_all(client: Client) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def offered(host: Host) -> dict[str, ToolInfo]:
    return {info.tool: info for info in host.tools() if info.server == SERVER_ID}


async def listings(host: Host, server: EverythingServer) -> tuple[dict[str, dict[str, Any]], dict[str, ToolInfo]]:
    """The server's own listing (through a plain SDK client) and the host's, once they agree.

    The server registers some tools only after the handshake and announces them with
    `tools/list_changed`, so both sides are read again whenever one hears of a change (bounded).
    """
    announced = 0
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        nonlocal announced, heard
        if isinstance(message, types.ToolListChangedNotification):
            announced += 1
            heard.set()
            heard = anyio.Event()

    async with server.direct_client(on_message) as client:
        direct: dict[str, dict[str, Any]] = {}
        with anyio.move_on_after(SETTLE_SECONDS):
            while True:
                heard_before, host_tools = announced, frozenset(offered(host))
                direct = {tool["name"]: tool for tool in await list_all(client)}
                if direct.keys() == host_tools:
                    break
                if announced == heard_before:  # else: listed before that change; list again at once
                    await _either(heard.wait, partial(host.wait_until, _offers_other_than(host_tools)))
    return direct, offered(host)


def _offers_other_than(tools: frozenset[str]) -> Callable[[Host], bool]:
    return lambda host: frozenset(offered(host)) != tools


async def _either(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return once one of `waits` is done."""
    async with anyio.create_task_group() as tg:

        async def run(wait: Callable[[], Awaitable[object]]) -> None:
            await wait()
            tg.cancel_scope.cancel()

        for wait in waits:
            tg.start_soon(run, wait)


async def call(host: Host, tool: str, arguments: Mapping[str, Any], progress: list[float]) -> CallResult:
    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(CALL_SECONDS):
        return await host.call(f"{SERVER_ID}__{tool}", arguments, on_progress=on_progress)


@pytest.mark.long
async def test_conn1_cat1_call1_everything_server_connects_lists_every_tool_and_runs_each(
    home: Home, everything_server: EverythingServer
) -> None:
    entry = everything_server.entry(connect_timeout_secs=20, call_timeout_secs=10)
    async with open_host(home, entry) as host:
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        assert status.transport == everything_server.transport
        assert status.protocol_version

        direct, tools = await listings(host, everything_server)
        assert sorted(tools) == sorted(direct), "the host does not offer exactly the tools the server lists"
        uncovered = direct.keys() - CASES.keys()
        assert not uncovered, f"server-everything lists tools without a case here: {sorted(uncovered)}"
        assert CASES.keys() - direct.keys() == set(), "server-everything no longer lists some tools"
        for name, wire in direct.items():
            info = tools[name]
            assert info.name == f"{SERVER_ID}__{name}"
            assert info.input_schema == wire["inputSchema"], name
            assert info.annotations == wire.get("annotations", {}), name

        problems: list[str] = []
        for tool, case in CASES.items():
            progress: list[float] = []
            result = await call(host, tool, case.arguments, progress)
            assert result.server == SERVER_ID
            problems.extend(case.mismatches(tool, result, progress))
        for tool in TOGGLES:
            result = await call(host, tool, {}, [])
            if not (result.ok and "Stopped" in result.text):
                problems.append(f"{tool} (second call): ok={result.ok}, text {result.text[:200]!r}")
        assert not problems, "\n".join(problems)


MINIMAL_BASE = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR"}
"""CONN-2's base variables outside Windows."""


async def test_conn2_everything_over_stdio_sees_only_the_minimal_base_plus_its_env(
    home: Home, everything: Path
) -> None:
    server = EverythingServer("stdio", everything, None)
    async with open_host(home, server.entry(env={"INTEROP_MARK": "set by the entry"})) as host:
        result = await call(host, "get-env", {}, [])
    assert result.ok, result.error
    seen = json.loads(result.content[0]["text"])
    assert seen["INTEROP_MARK"] == "set by the entry"
    assert "PATH" in seen
    locations = set(LOCATION_VARIABLES)  # where certificates and proxies are, when this machine says
    assert set(seen) - MINIMAL_BASE - locations == {"INTEROP_MARK"}, "the server saw more than CONN-2 allows"


class Boom(Exception):
    """An error in the code using the host."""


SHUTDOWN_SECONDS = 3


async def test_conn5_host_left_by_an_error_stops_a_stdio_server_without_waiting_out_its_timeout(
    home: Home, everything: Path
) -> None:
    server = EverythingServer("stdio", everything, None)
    left = 0.0

    async def use_and_fail() -> None:
        nonlocal left
        async with open_host(home, server.entry(shutdown_timeout_secs=SHUTDOWN_SECONDS)) as host:
            [status] = host.status().servers
            assert status.state == "connected", status.reason
            left = anyio.current_time()
            raise Boom

    with pytest.raises(Boom):
        await use_and_fail()
    # server-everything exits once its stdin closes (~0.3 s); nothing should wait for the timeout.
    elapsed = anyio.current_time() - left
    assert elapsed < SHUTDOWN_SECONDS, f"leaving the host took {elapsed:.1f} s"
