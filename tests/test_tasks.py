"""CALL-8: a new-era server that answers a call with a task (the `io.modelcontextprotocol/tasks` extension) is polled
to the end through the host: at the server's interval and never faster than once a second, its questions put to the
call's answerer and the answers sent back, its result shaped like any other, its failure the server's error, and a
call given up cancels the task; `mcpyard call` shows a task's progress while it waits.

The fixture server `tasks` (tests/servers/tasks.py) as a process over stdio, and in the test's process over
streamable HTTP.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

import anyio
import pytest

from mcpyard import ElicitationAnswer, ElicitationRequest
from tests._cli import run_mcpyard
from tests._processes import with_ctrl_c
from tests.conftest import Home, body, fixture_server
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


def _config(home: Home, **server: Any) -> Any:
    return home.write_config({"t": {**fixture_server("tasks"), **server}}, mode="auto")


async def test_call8_a_task_runs_to_its_result_polled_at_the_servers_interval(home: Home) -> None:
    progress: list[str | None] = []

    async def heard(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with home.open(_config(home, call_timeout_secs=2)) as host:
        assert host.status().servers[0].protocol_version == "2026-07-28"
        quick = await host.call("t__quick", {})
        assert quick.ok, quick.error
        assert "quick done" in body(quick)
        with anyio.fail_after(30):
            slow = await host.call("t__slow", {"seconds": 4}, on_progress=heard)
        assert slow.ok, slow.error
        assert "slow done after 4 s" in body(slow)
        assert slow.text.startswith("<mcp-result-"), "a task's result is fenced like any other"
        assert any(message and message.startswith("task working: ") for message in progress), progress
        polls = json.loads(body(await host.call("t__polls", {})))
        assert polls["polls"] >= 4
        assert polls["shortest_gap"] >= 0.95, "never polled faster than the server's interval (1 s)"


async def test_call8_a_task_that_needs_input_asks_the_calls_answerer_once_and_sends_the_answer(home: Home) -> None:
    asked: list[ElicitationRequest] = []

    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer.accept({"name": "Ada"})

    async with home.open(_config(home), elicitor=person) as host:
        with anyio.fail_after(30):
            greeted = await host.call("t__ask", {})
    assert greeted.ok, greeted.error
    assert "hello Ada" in body(greeted)
    assert len(asked) == 1, "a request listed on every poll is asked once"
    assert asked[0].message == "Your name?"


async def test_call8_a_failed_task_is_the_servers_error_and_one_given_up_is_cancelled(home: Home) -> None:
    async with home.open(_config(home, call_timeout_secs=30)) as host:
        with anyio.fail_after(30):
            failed = await host.call("t__fail", {})
        assert not failed.ok
        assert failed.error is not None
        assert failed.error["code"] == "server_error"
        assert "the fixture task failed on purpose" in failed.error["message"]
        with anyio.move_on_after(2.5):  # the caller gives up while the task works
            await host.call("t__forever", {})
        with anyio.fail_after(30):
            cancelled = json.loads(body(await host.call("t__cancelled", {})))
    assert len(cancelled) == 1, "giving up on the call cancelled its task"


async def test_call8_a_task_that_asks_without_end_is_cancelled_and_no_one_is_asked_a_hundred_times(home: Home) -> None:
    asked: list[ElicitationRequest] = []

    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer.decline()

    async with home.open(_config(home), elicitor=person) as host:
        with anyio.fail_after(30):
            nosy = await host.call("t__nosy", {})
            cancelled = json.loads(body(await host.call("t__cancelled", {})))
    assert nosy.error is not None
    assert nosy.error["code"] == "invalid_result", nosy.error
    assert "asked for more than 64 inputs" in nosy.error["message"]
    assert asked == [], "refused before anyone is asked"
    assert len(cancelled) == 1, "and the task cancelled"


async def test_call8_over_streamable_http_each_task_request_names_its_task_for_routing(home: Home) -> None:
    async with serve_http_in_process("tasks") as url:
        config = home.write_config({"t": {"url": url}}, mode="auto")
        async with home.open(config, elicitor=_named("Grace")) as host:
            with anyio.fail_after(30):
                greeted = await host.call("t__ask", {})
                routed = json.loads(body(await host.call("t__routed_names", {})))
    assert "hello Grace" in body(greeted), greeted.error
    assert len(routed) >= 2, "a poll, then the answer"
    assert len(set(routed)) == 1, "every tasks/* request of one task carries its id in Mcp-Name"
    assert routed[0], routed


def _named(name: str) -> Any:
    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer.accept({"name": name})

    return person


def test_call8_mcpyard_call_waits_for_a_task_and_shows_its_progress(home: Home) -> None:
    config = _config(home)
    done = run_mcpyard(home, "call", "t__slow", "--arg", "seconds=3", "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    assert "slow done after 3 s" in done.stdout
    assert "task working" in done.stderr, "the task's status while the call waits"


async def test_call8_ctrl_c_during_mcpyard_call_cancels_the_task_on_the_server(home: Home) -> None:
    async with serve_http_in_process("tasks") as url:
        config = home.write_config({"t": {"url": url}}, mode="auto")
        command = [sys.executable, "-m", "mcpyard", "call", "t__forever", "--mcp-config", str(config)]
        cli = await anyio.open_process(
            with_ctrl_c(command), cwd=home.workspace, env=home.environ, stderr=subprocess.PIPE
        )
        async with cli:
            assert cli.stderr is not None
            heard = b""
            with anyio.fail_after(30):
                async for chunk in cli.stderr:  # the first status line: the task is made and polled
                    heard += chunk
                    if b"task working" in heard:
                        break
            cli.send_signal(signal.SIGINT)
            with anyio.fail_after(10):
                code = await cli.wait()
        assert code == 130, heard
        async with home.open(config) as host:
            cancelled = json.loads(body(await host.call("t__cancelled", {})))
    assert len(cancelled) == 1, "the task was cancelled on the server before mcpyard exited"
