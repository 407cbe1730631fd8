"""POL-6, ERR-1: a pre_call hook's answer counts whatever it does with its input; any other failure asks.

Real hook scripts through `Host.call`. The `echo` tool of a server whose annotations are
not trusted asks in `ask` mode (POL-3), and the approver denies every card: so a call that
runs without a card was allowed by the hook, one refused without a card was denied by it,
and one refused after a card is the hook's "no answer: ask".

Hooks are real processes (their subject); the servers are reached in memory.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio
import pytest

from mcpyard import Host
from mcpyard.config import Hook
from mcpyard.pipeline import CallResult
from mcpyard.policy import HOOK_TIMEOUT, ScriptedApprover, run_hooks
from tests._processes import read_pids, wait_dead, wait_for_pids
from tests.conftest import Home, fixture_server

pytestmark = pytest.mark.anyio

LARGE = 4 * 1024 * 1024
"""Far more than a pipe holds: the payload cannot be written before the hook is gone."""
SMALL = 100
ROUNDS = 8
"""Enough repetitions to meet both sides of the race between our write and the hook's exit."""
PYTHON = shlex.quote(sys.executable)

Outcome = Literal["allow", "deny", "ask"]


@dataclass
class Hooked:
    host: Host
    approver: ScriptedApprover

    async def call(self, size: int, tool: str = "b__echo") -> CallResult:
        return await self.host.call(tool, {"text": "x" * size} if tool == "b__echo" else {"name": "HOME"})

    def outcome(self, result: CallResult, cards_before: int) -> Outcome:
        """What the hook's answer was, as the call shows it; never an internal error."""
        code = (result.error or {}).get("code")
        assert code in (None, "denied"), result.error
        asked = len(self.approver.cards) > cards_before
        if result.ok:
            assert not asked
            return "allow"
        return "ask" if asked else "deny"


@asynccontextmanager
async def hooked(home: Home, *hooks: tuple[str, str]) -> AsyncIterator[Hooked]:
    """A host whose `basic` server asks for every tool, with hooks given as (match, command)."""
    entry = {**fixture_server("basic"), "trust_annotations": False}
    config = home.write_config(
        {"b": entry}, hooks={"pre_call": [{"match": match, "command": command} for match, command in hooks]}
    )
    approver = ScriptedApprover.always("deny")
    async with home.open(config, approver=approver) as host:
        assert host.status().servers[0].state == "connected", host.status().servers[0].reason
        yield Hooked(host, approver)


async def outcomes(hooked: Hooked, size: int, rounds: int) -> list[Outcome]:
    found: list[Outcome] = []
    for _ in range(rounds):
        before = len(hooked.approver.cards)
        found.append(hooked.outcome(await hooked.call(size), before))
    return found


# Each answers without reading all (or any) of its input.
IGNORES_ITS_INPUT = [
    ("echo allow", "allow"),
    ("echo deny", "deny"),
    ("echo ask", "ask"),
    ("exec 0<&-; echo allow", "allow"),
    ("exec 0<&-; sleep 0.1; echo deny", "deny"),
    ("head -c 10 > /dev/null; echo allow", "allow"),
    ("printf ALLOW", "allow"),
    ("echo allow; exit 3", "allow"),
    (f"{PYTHON} -c \"print('deny')\"", "deny"),
    (f"{PYTHON} -c \"import os; os.close(0); print('allow', flush=True)\"", "allow"),
]


@pytest.mark.parametrize("size", [LARGE, SMALL], ids=["large", "small"])
@pytest.mark.parametrize(("command", "answer"), IGNORES_ITS_INPUT)
async def test_pol6_a_hook_that_does_not_read_its_input_still_answers(
    home: Home, command: str, answer: Outcome, size: int
) -> None:
    async with hooked(home, ("b__*", command)) as h:
        assert await outcomes(h, size, ROUNDS) == [answer] * ROUNDS


@pytest.mark.parametrize("size", [LARGE, SMALL], ids=["large", "small"])
@pytest.mark.parametrize(
    "command",
    [
        "exit 0",
        "exec 0<&-; exit 1",
        "no-such-hook-command-mcpyard",
        "kill -9 $$",
        "echo maybe",
        "echo",
        f"{PYTHON} -c \"raise SystemExit('no')\"",
        "exec 1>&-; sleep 30",
    ],
)
async def test_pol6_a_hook_that_fails_or_says_nothing_clear_asks(home: Home, command: str, size: int) -> None:
    """ERR-1: never an internal error; the documented "no answer: ask", with a card."""
    async with hooked(home, ("b__*", command)) as h:
        assert await outcomes(h, size, 2) == ["ask", "ask"]


async def test_pol6_the_whole_input_still_reaches_a_hook_that_reads_it(home: Home) -> None:
    record = home.root / "seen.json"
    async with hooked(home, ("b__*", f"cat > {record}; echo allow")) as h:
        result = await h.call(LARGE)
        assert result.ok, result.error
    assert len(record.read_bytes()) > LARGE


@pytest.mark.parametrize("size", [LARGE, SMALL], ids=["large", "small"])
async def test_pol6_a_hook_whose_background_child_holds_its_pipes_answers_at_once_and_leaves_nothing(
    home: Home, size: int
) -> None:
    """The hook's answer counts as soon as it exits; the child holding stdin and stdout is stopped."""
    pids = home.root / "hook.pids"
    command = f"sleep 60 & echo $! > {pids}; echo allow"
    async with hooked(home, ("b__*", command)) as h:
        started = time.monotonic()
        for _ in range(3):
            pids.unlink(missing_ok=True)
            result = await h.call(size)
            assert result.ok, result.error
            await wait_dead(*await wait_for_pids(pids))
        assert time.monotonic() - started < HOOK_TIMEOUT, "no round waited for the child to let go"


DAEMON = """
import os
if os.fork() == 0:
    os.setsid()
    daemon = os.fork()
    if daemon == 0:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.execvp("sleep", ["sleep", "60"])
    print(daemon, flush=True)
    os._exit(0)
os.wait()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="elsewhere only the process group is stopped")
@pytest.mark.parametrize("size", [LARGE, SMALL], ids=["large", "small"])
async def test_pol6_a_hook_whose_helpers_leave_its_process_group_leaves_nothing_either(home: Home, size: int) -> None:
    """A `setsid` child holding the hook's output, and a double-fork daemon: both stopped after the answer."""
    pids = home.root / "hook.pids"
    command = f"setsid sleep 60 & echo $! > {pids}; {PYTHON} -c {shlex.quote(DAEMON)} >> {pids}; echo allow"
    async with hooked(home, ("b__*", command)) as h:
        started = time.monotonic()
        result = await h.call(size)
        assert result.ok, result.error
        assert time.monotonic() - started < HOOK_TIMEOUT
        helpers = read_pids(pids)
        assert len(helpers) == 2
        await wait_dead(*helpers)


async def test_pol6_a_hook_that_never_reads_nor_exits_asks_within_the_time_limit_and_is_stopped(home: Home) -> None:
    """Also a hook that wrote `deny` and hangs: still a refusal. Both run at once, bounded by one limit."""
    hanging = home.root / "hanging.pids"
    denying = home.root / "denying.pids"
    hooks = (
        ("b__echo", f"sleep 60 & echo $$ $! > {hanging}; wait"),
        ("b__env", f"echo deny; sleep 60 & echo $$ $! > {denying}; wait"),
    )
    async with hooked(home, *hooks) as h:
        results: dict[str, CallResult] = {}

        async def call(tool: str) -> None:
            results[tool] = await h.call(LARGE, tool)

        started = time.monotonic()
        with anyio.fail_after(HOOK_TIMEOUT + 10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "b__echo")
                tg.start_soon(call, "b__env")
        elapsed = time.monotonic() - started
        assert HOOK_TIMEOUT - 1 < elapsed < HOOK_TIMEOUT + 5
        echo, env = results["b__echo"], results["b__env"]
        assert echo.error is not None
        assert echo.error["code"] == "denied"
        assert [card.tool for card in h.approver.cards] == ["b__echo"], "the hanging hook asked; `deny` did not"
        assert env.error is not None
        assert env.error["code"] == "denied"
        await wait_dead(*await wait_for_pids(hanging), *await wait_for_pids(denying))


@pytest.mark.parametrize("size", [LARGE, SMALL], ids=["large", "small"])
async def test_pol6_without_a_reaper_a_hook_still_answers_and_its_process_group_is_stopped(
    home: Home, size: int
) -> None:
    """`run_hooks` with no `spawn` (as where there is no reaper): each hook in a process group of its own."""
    pids = home.root / "hook.pids"
    hooks = (
        Hook(match="t", command="echo allow"),
        Hook(match="t", command=f"sleep 60 & echo $! > {pids}; exec 0<&-; echo allow"),
    )
    for _ in range(ROUNDS):
        pids.unlink(missing_ok=True)
        answer = await run_hooks(
            hooks,
            name="t",
            file_paths=[],
            payload={"arguments": {"text": "x" * size}},
            cwd=home.workspace,
            environ=home.environ,
        )
        assert answer == "allow"
        await wait_dead(*read_pids(pids))
