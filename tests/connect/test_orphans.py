"""CONN-5: no server process, nor any of its children, outlives the host."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest

from tests.conftest import SERVERS, Home, fixture_server

pytestmark = pytest.mark.anyio


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


async def wait_dead(*pids: int, within: float = 10) -> None:
    with anyio.fail_after(within):
        while any(alive(pid) for pid in pids):  # noqa: ASYNC110  # other processes: nothing to wait on but /proc
            await anyio.sleep(0.05)


async def read_pid(path: Path, within: float = 20) -> int:
    file = anyio.Path(path)
    with anyio.fail_after(within):
        while not await file.exists():  # noqa: ASYNC110  # written by another process
            await anyio.sleep(0.05)
    return int((await file.read_text()).strip())


async def test_conn5_normal_exit_stops_the_server_and_its_grandchild(home: Home) -> None:
    pid_file = home.root / "grandchild.pid"
    config = home.write_config({"gc": fixture_server("grandchild", "--pid-file", str(pid_file))})
    async with home.open(
        config,
    ) as host:
        assert host.status().servers[0].state == "connected"
        process = host._supervisors["gc"].process
        assert process is not None
        assert process.pid is not None
        server_pid = process.pid
        grandchild = await read_pid(pid_file)
        assert alive(grandchild)
    await wait_dead(server_pid, grandchild)


async def test_conn5_a_grandchild_holding_the_pipes_is_stopped_too(home: Home) -> None:
    pid_file = home.root / "grandchild.pid"
    config = home.write_config({"gc": {**fixture_server("grandchild", "--pid-file", str(pid_file), "--inherit-stdio")}})
    async with home.open(
        config,
    ) as host:
        assert host.status().servers[0].state == "connected"
        grandchild = await read_pid(pid_file)
    await wait_dead(grandchild)


@asynccontextmanager
async def cli_while_connecting(home: Home) -> AsyncIterator[tuple[anyio.abc.Process, list[int]]]:
    """`mcpyard status` still connecting: one server with a grandchild, one that never answers."""
    gc_pid_file = home.root / "grandchild.pid"
    silent_pid_file = home.root / "silent.pid"
    silent = f"echo $$ > {silent_pid_file}; exec {sys.executable} {SERVERS / 'never_answers.py'} --linger"
    config = home.write_config(
        {
            "gc": fixture_server("grandchild", "--pid-file", str(gc_pid_file)),
            "silent": {"command": "sh", "args": ["-c", silent], "connect_timeout_secs": 120},
        }
    )
    cli = await anyio.open_process(
        [sys.executable, "-m", "mcpyard", "status", "--json", "--mcp-config", str(config)],
        cwd=home.workspace,
        env=home.environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    async with cli:
        yield cli, [await read_pid(gc_pid_file), await read_pid(silent_pid_file)]


async def test_conn5_ctrl_c_during_connect_leaves_no_process_behind(home: Home) -> None:
    async with cli_while_connecting(home) as (cli, pids):
        cli.send_signal(signal.SIGINT)
        with anyio.fail_after(20):
            code = await cli.wait()
        assert cli.stderr is not None
        stderr = (await cli.stderr.receive()).decode() if code != 0 else ""
    assert code == 130
    assert "Traceback" not in stderr
    await wait_dead(*pids)


async def test_conn5_servers_stop_even_when_mcpyard_itself_is_killed(home: Home) -> None:
    async with cli_while_connecting(home) as (cli, pids):
        cli.kill()
        with anyio.fail_after(10):
            await cli.wait()
    await wait_dead(*pids)


async def test_conn5_a_server_killed_mid_call_ends_the_call_with_a_clear_error(home: Home) -> None:
    config = home.write_config({"basic": fixture_server("basic")})
    async with home.open(
        config,
    ) as host:
        process = host._supervisors["basic"].process
        assert process is not None
        assert process.pid is not None
        pid = process.pid

        async def kill_soon() -> None:
            await anyio.sleep(0.3)
            os.kill(pid, signal.SIGKILL)

        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_soon)
            with anyio.fail_after(10):
                result = await host.call("basic__slow", {"seconds": 30})
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "connection_lost"
        with anyio.fail_after(10):
            await host.wait_until(lambda h: h.status().servers[0].state == "stopped")
        reason = host.status().servers[0].reason
        assert reason is not None
        assert "SIGKILL" in reason
    await wait_dead(pid)
