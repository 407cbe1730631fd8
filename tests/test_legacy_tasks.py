"""CALL-8: a handshake-era server's tool that must run as a task (the experimental tasks of 2025-11-25) is offered and
runs through the host: the call goes with `task`, the task is polled at the server's interval (never faster than once a
second, at least every 30 s), its result fetched with `tasks/result` and shaped like any other; a question the server
asks meanwhile reaches the call's answerer; a failed task is the server's error; a call given up, or a task that
outlives its lifetime, cancels the task on the server.

The fixture server `legacy_tasks` (tests/servers/legacy_tasks.py) as a process over stdio, in memory, and over
streamable HTTP in the test's process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpyard import ElicitationAnswer, ElicitationRequest, Host
from mcpyard.connect import lifetime_secs, poll_secs
from tests.conftest import Home, body, fixture_server
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


def _config(home: Home, **server: Any) -> Path:
    return home.write_config({"t": {**fixture_server("legacy_tasks"), **server}}, mode="auto")


async def _cancelled(host: Host) -> list[str]:
    listed = json.loads(body(await host.call("t__cancelled", {})))
    assert isinstance(listed, list)
    return [str(task_id) for task_id in listed]


def _named(name: str, asked: list[ElicitationRequest]) -> Any:
    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer.accept({"name": name})

    return person


@pytest.mark.parametrize("in_memory", [False, True], ids=["stdio", "memory"])
async def test_call8_a_handshake_era_task_tool_runs_to_its_fenced_result_with_progress(
    home: Home, in_memory: bool
) -> None:
    home.in_memory = in_memory
    progress: list[str | None] = []

    async def heard(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with home.open(_config(home, call_timeout_secs=2)) as host:
        assert host.status().servers[0].protocol_version == "2025-11-25"
        assert "t__slow" in {tool.name for tool in host.tools()}, "a tool that requires a task is offered"
        assert not any("can only run as MCP tasks" in warning for warning in host.status().warnings)
        with anyio.fail_after(30):
            slow = await host.call("t__slow", {"seconds": 4}, on_progress=heard)
            polls = json.loads(body(await host.call("t__polls", {})))
    assert slow.ok, slow.error
    assert "slow done after 4 s" in body(slow)
    assert slow.text.startswith("<mcp-result-"), "a task's result is fenced like any other"
    assert any(message and message.startswith("task working: ") for message in progress), progress
    assert polls["polls"] >= 3, "the call outlived its 2 s timeout: each poll moved it on"
    assert polls["shortest_gap"] >= 0.95, "never polled faster than the server's interval (1 s)"


async def test_call8_a_handshake_era_tasks_question_reaches_the_calls_elicitor_and_the_answer_its_result(
    home: Home,
) -> None:
    asked: list[ElicitationRequest] = []
    async with home.open(_config(home), elicitor=_named("Ada", asked)) as host:
        with anyio.fail_after(30):
            greeted = await host.call("t__ask", {})
    assert greeted.ok, greeted.error
    assert "hello Ada" in body(greeted)
    assert [request.message for request in asked] == ["Your name?"]


async def test_call8_a_handshake_era_tasks_question_over_streamable_http_reaches_the_calls_elicitor(
    home: Home,
) -> None:
    asked: list[ElicitationRequest] = []
    async with serve_http_in_process("legacy_tasks") as url:
        config = home.write_config({"t": {"url": url}}, mode="auto")
        async with home.open(config, elicitor=_named("Grace", asked)) as host:
            assert host.status().servers[0].protocol_version == "2025-11-25"
            with anyio.fail_after(30):
                greeted = await host.call("t__ask", {})
                slow = await host.call("t__slow", {"seconds": 1})
    assert "hello Grace" in body(greeted), greeted.error
    assert "slow done after 1 s" in body(slow), slow.error
    assert len(asked) == 1


async def test_call8_a_failed_handshake_era_task_is_the_servers_error_in_its_words(home: Home) -> None:
    async with home.open(_config(home)) as host:
        with anyio.fail_after(30):
            failed = await host.call("t__fail", {})
            cancelled = await _cancelled(host)
    assert not failed.ok
    assert failed.error is not None
    assert failed.error["code"] == "server_error", failed.error
    assert "the fixture task failed on purpose" in failed.error["message"]
    assert cancelled == [], "a task that ended is not cancelled"


@pytest.mark.parametrize("in_memory", [False, True], ids=["stdio", "memory"])
async def test_call8_a_handshake_era_call_given_up_cancels_its_task_on_the_server(home: Home, in_memory: bool) -> None:
    home.in_memory = in_memory
    async with home.open(_config(home, call_timeout_secs=30)) as host:
        with anyio.move_on_after(2.5) as gave_up:  # the caller gives up while the task works
            await host.call("t__forever", {})
        assert gave_up.cancelled_caught
        with anyio.fail_after(30):
            cancelled = await _cancelled(host)
    assert len(cancelled) == 1, "giving up on the call cancelled its task"


async def test_call8_a_handshake_era_task_polled_at_interval_0_is_polled_once_a_second(home: Home) -> None:
    async with home.open(_config(home)) as host:
        with anyio.fail_after(30):
            slow = await host.call("t__slow", {"seconds": 3, "poll_ms": 0})
            polls = json.loads(body(await host.call("t__polls", {})))
    assert "slow done after 3 s" in body(slow), slow.error
    assert polls["polls"] >= 2
    assert polls["shortest_gap"] >= 0.95, "a poll interval of 0 is taken as 1 s"


async def test_call8_a_handshake_era_task_that_outlives_its_lifetime_is_cancelled_with_a_timeout(home: Home) -> None:
    """The server grants a 3 s lifetime and never ends the task; each poll moves the call's timeout on, the lifetime
    bounds the call."""
    async with home.open(_config(home, call_timeout_secs=2)) as host:
        with anyio.fail_after(30):
            endless = await host.call("t__forever", {"ttl_ms": 3000})
            cancelled = await _cancelled(host)
    assert endless.error is not None
    assert endless.error["code"] == "timeout", endless.error
    assert "did not end within its lifetime (3 s)" in endless.error["message"]
    assert len(cancelled) == 1, "and the task cancelled on the server"


@pytest.mark.parametrize(
    ("poll_interval_ms", "seconds"),
    [
        (None, 1.0),
        (0, 1.0),
        (-5, 1.0),
        (250, 1.0),
        (1500, 1.5),
        (30_000, 30.0),
        (3 * 3_600_000, 30.0),
        (float("nan"), 1.0),
        (float("inf"), 1.0),
    ],
)
def test_call8_a_handshake_era_tasks_poll_interval_is_kept_between_1_and_30_seconds(
    poll_interval_ms: float | None, seconds: float
) -> None:
    assert poll_secs(poll_interval_ms) == seconds


@pytest.mark.parametrize(
    ("asked", "granted_ms", "seconds"),
    [
        (3600.0, None, 3600.0),
        (3600.0, 3000, 3.0),
        (3600.0, 7_200_000, 3600.0),
        (3600.0, 0, 3600.0),
        (3600.0, -1, 3600.0),
        (None, 5000, 5.0),
        (None, None, float("inf")),
    ],
)
def test_call8_a_handshake_era_task_is_followed_for_the_shorter_of_the_asked_and_granted_lifetimes(
    asked: float | None, granted_ms: int | None, seconds: float
) -> None:
    assert lifetime_secs(asked, granted_ms) == seconds
