"""CALL-2 over stdio: a tool call sent as a JSON line beside the SDK's session (the fast path) behaves as one the
session sends.

Each test first makes one plain call, which the session sends (and which arms the fast path for that connection);
the calls after it are the subject: a question a new-era server asks, a timeout, progress, a server that dies, a
result against its output schema, the server's own error. Fixture servers as real processes over stdio.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import anyio
import pytest

from mcpyard import ElicitationAnswer, ElicitationRequest
from tests._waiting import eventually
from tests.conftest import Home, body, fixture_server

pytestmark = pytest.mark.anyio


async def test_call2_a_new_era_servers_question_during_a_fast_call_reaches_the_elicitor_and_its_answer_the_server(
    home: Home,
) -> None:
    asked: list[ElicitationRequest] = []

    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer.accept({"name": "Ada"})

    config = home.write_config({"e": fixture_server("elicits")}, mode="auto")
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    async with home.open(config, elicitor=person) as host:
        assert host.status().servers[0].protocol_version == "2026-07-28"
        first = await host.call("e__ask_form", {"message": "First?", "schema": schema})
        assert first.ok, first.error
        with anyio.fail_after(30):
            second = await host.call("e__ask_form", {"message": "Second?", "schema": schema})
    assert second.ok, second.error
    assert "action=accept" in body(second)
    assert "Ada" in body(second)
    assert [request.message for request in asked] == ["First?", "Second?"]


async def test_call2_a_fast_call_past_its_timeout_is_a_timeout_and_cancelled_on_the_server(home: Home) -> None:
    # 3 s: the echo calls around the slow one share its deadline, and a loaded machine can stall one for a second.
    config = home.write_config({"b": {**fixture_server("basic"), "call_timeout_secs": 3}}, mode="auto")
    async with home.open(config) as host:
        assert (await host.call("b__echo", {"text": "arm"})).ok
        with anyio.fail_after(30):
            late = await host.call("b__slow", {"seconds": 30})
            counted = await host.call("b__cancellations", {"at_least": 1})
        again = await host.call("b__echo", {"text": "after"})
    assert late.error is not None
    assert late.error["code"] == "timeout", late.error
    assert counted.ok, counted.error
    assert "1" in body(counted)
    assert again.ok, again.error
    assert "after" in body(again)


async def test_call2_progress_of_a_fast_call_reaches_the_caller_and_keeps_its_timeout_moving(home: Home) -> None:
    heard: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    config = home.write_config({"b": {**fixture_server("basic"), "call_timeout_secs": 1}}, mode="auto")
    async with home.open(config) as host:
        assert (await host.call("b__echo", {"text": "arm"})).ok
        with anyio.fail_after(30):
            slow = await host.call("b__slow", {"seconds": 2.5, "progress_every": 0.25}, on_progress=on_progress)
    assert slow.ok, slow.error
    assert "slept 2.5 s" in body(slow)
    assert "2.5 of 2.5 s" in heard, heard


async def test_call2_a_server_that_dies_during_a_fast_call_is_a_lost_connection_with_its_reason(home: Home) -> None:
    started = home.root / "slow-started"
    entry = {**fixture_server("basic"), "env": {"BASIC_SLOW_STARTED": str(started)}}
    async with home.open(home.write_config({"b": entry}, mode="auto")) as host:
        assert (await host.call("b__echo", {"text": "arm"})).ok
        outcome: list[Any] = []

        async def call() -> None:
            outcome.append(await host.call("b__slow", {"seconds": 60}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            # The server writes its pid once the call sleeps; nothing this process can wait on announces it.
            await eventually(started.exists, within=30, what="the slow call to start")
            os.kill(int(started.read_text(encoding="ascii")), signal.SIGKILL)
        lost = outcome[0]
        assert lost.error is not None
        assert lost.error["code"] == "connection_lost", lost.error
        with anyio.fail_after(30):
            await host.wait_until(lambda h: h.status().servers[0].state != "connected")
        reason = host.status().servers[0].reason
    assert reason is not None
    assert "SIGKILL" in reason, reason


async def test_call2_a_fast_calls_result_against_its_output_schema_is_invalid_and_an_error_the_servers(
    home: Home,
) -> None:
    async with home.open(home.write_config({"r": fixture_server("bad_results")}, mode="auto")) as host:
        assert (await host.call("r__count", {"good": True})).ok
        bad = await host.call("r__count", {"good": False})
        exploded = await host.call("r__explode", {"text": "boom"})
        good = await host.call("r__count", {"good": True})
    assert bad.error is not None
    assert bad.error["code"] == "invalid_result", bad.error
    assert exploded.error is not None
    assert exploded.error["code"] == "server_error", exploded.error
    assert "exploded: boom" in exploded.error["message"]
    assert good.ok, good.error
