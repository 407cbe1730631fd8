"""Schemas that try to stall the host, through `Host.open` and `Host.call` on a hostile server (CALL-1, ERR-1).

THREATS, Robustness: a schema past a bound makes its one tool unavailable, with a reason; a
costly check is refused within its budget and never holds up another server's call or a
cancellation; the hostile server is never called.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpyard import Host
from mcpyard.pipeline import VALIDATION_BUDGET_SECS, CallResult
from tests.conftest import Home, body, fixture_server

pytestmark = pytest.mark.anyio

REFUSED_AT_LISTING = {
    "exponential": "expands to more than",
    "too_deep": "nests deeper than",
    "remote_ref": "points outside the schema",
    "bad_output": "repeats a group that itself repeats",
}
CATASTROPHIC_TEXT = "a" * 40 + "!"
MARGIN = 10.0
"""What a refused call may take beyond its budget in wall-clock time: a bound, not a speed test. The budget is
wall-clock time (a check that never ends would pass any margin), and on two cores shared with the rest of the suite
a worker thread can wait seconds for a CPU (3 s was seen once); the message naming the budget proves what ended it."""


def exponential_branches(levels: int) -> dict[str, Any]:
    """`x` nested `levels` deep, wrong at the bottom: each level tries both branches of `anyOf` (2^levels)."""
    value: dict[str, Any] = {"end": 1}
    for _ in range(levels):
        value = {"x": value, "end": "e"}
    return value


@asynccontextmanager
async def hostile_and_plain(home: Home) -> AsyncIterator[Host]:
    config = home.write_config({"hs": fixture_server("hostile_schemas"), "plain": fixture_server("basic")})
    async with home.open(config) as host:
        for server in host.status().servers:
            assert server.state == "connected", (server.id, server.reason)
        yield host


async def seen(host: Host) -> int:
    return int(body(await host.call("hs__seen_calls", {})))


async def test_err1_tools_whose_schemas_pass_a_bound_are_not_offered_and_the_servers_others_are(home: Home) -> None:
    async with hostile_and_plain(home) as host:
        offered = {tool.name for tool in host.server_tools()}
        assert {"hs__catastrophic", "hs__branching", "hs__echo", "hs__seen_calls", "plain__echo"} <= offered
        assert not offered & {f"hs__{tool}" for tool in REFUSED_AT_LISTING}
        (hostile,) = [server for server in host.status().servers if server.id == "hs"]
        reasons = {refused.tool: refused.reason for refused in hostile.refused_tools}
        assert set(reasons) == set(REFUSED_AT_LISTING)
        for tool, words in REFUSED_AT_LISTING.items():
            assert words in reasons[tool], reasons[tool]
            assert any(f"tool {tool!r} is not offered" in warning for warning in host.status().warnings)

        result = await host.call("hs__exponential", {"value": 1})
        assert result.error is not None
        assert result.error["code"] == "invalid_schema"
        assert "expands to more than" in result.error["message"]
        assert "hs" in result.error["message"]
        assert (await host.call("hs__echo", {"text": "still here"})).ok
        assert await seen(host) == 1, "only the plain call reached the server"


@pytest.mark.parametrize(
    "arguments",
    [
        {"text": CATASTROPHIC_TEXT},
        {"texts": ["aaaa", CATASTROPHIC_TEXT]},
        {"tags": {CATASTROPHIC_TEXT: "a key the pattern backtracks on"}},
    ],
    ids=["pattern", "pattern-of-items", "patternProperties"],
)
async def test_call1_a_catastrophic_pattern_is_refused_quickly_and_the_server_is_not_called(
    home: Home, arguments: dict[str, Any]
) -> None:
    async with hostile_and_plain(home) as host:
        with anyio.fail_after(VALIDATION_BUDGET_SECS + MARGIN):
            result = await host.call("hs__catastrophic", arguments)
        assert result.error is not None
        assert result.error["code"] == "validation_timeout", result.error
        assert "^(a|aa)+$" in result.error["message"]
        assert "was not called" in result.error["message"]
        assert (await host.call("hs__catastrophic", {"text": "aaaa", "tags": {"aa": "x"}})).ok, "a match still runs"
        assert await seen(host) == 1


async def test_call1_a_costly_check_never_holds_up_a_call_to_another_server(home: Home) -> None:
    async with hostile_and_plain(home) as host:
        hostile: list[CallResult] = []
        hostile_done = anyio.Event()

        async def costly() -> None:
            hostile.append(await host.call("hs__branching", exponential_branches(60)))
            hostile_done.set()

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            tg.start_soon(costly)
            with anyio.fail_after(VALIDATION_BUDGET_SECS):
                other = await host.call("plain__echo", {"text": "meanwhile"})
            assert other.ok, other.error
            assert body(other) == "meanwhile"
            assert not hostile_done.is_set(), "the other server's call finished while the costly check ran"
            with anyio.fail_after(VALIDATION_BUDGET_SECS + MARGIN):
                await hostile_done.wait()
        assert time.monotonic() - started < VALIDATION_BUDGET_SECS + MARGIN
        (result,) = hostile
        assert result.error is not None
        assert result.error["code"] == "validation_timeout", result.error
        assert f"longer than {VALIDATION_BUDGET_SECS:g} s" in result.error["message"]
        assert await seen(host) == 0


async def test_call1_a_call_given_up_during_a_costly_check_ends_at_once_and_frees_its_worker(home: Home) -> None:
    async with hostile_and_plain(home) as host:
        for _ in range(3):  # more than the server's workers: each given-up check must let its worker go
            with anyio.move_on_after(0.1) as scope:
                await host.call("hs__branching", exponential_branches(60))
            assert scope.cancelled_caught
        with anyio.fail_after(VALIDATION_BUDGET_SECS / 2):
            quick = await host.call("hs__branching", exponential_branches(3))
        assert quick.error is not None
        assert quick.error["code"] == "invalid_arguments", quick.error
        assert await seen(host) == 0
