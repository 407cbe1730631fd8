"""CONN-5 (with CONN-4): no server process, nor any of its children, outlives the host."""

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

from tests._waiting import eventually
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
    # Processes this test did not start (grandchildren) cannot be awaited: /proc is all there is.
    await eventually(lambda: not any(alive(pid) for pid in pids), within=within, what=f"no process left of {pids}")


async def wait_for_pid(path: Path, within: float = 20) -> int:
    # Written by a process of a process this test did not start: there is nothing to wait on.
    await eventually(lambda: has_line(path), within=within, what=f"{path} is written")
    return read_pid(path)


def has_line(path: Path) -> bool:
    try:
        return path.read_text().endswith("\n")
    except FileNotFoundError:
        return False


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


async def test_conn5_normal_exit_stops_the_server_and_its_grandchild(home: Home) -> None:
    pid_file = home.root / "grandchild.pid"
    config = home.write_config({"gc": fixture_server("grandchild", "--pid-file", str(pid_file))})
    async with home.open(
        config,
    ) as host:
        assert host.status().servers[0].state == "connected"
        process = host.server("gc")
        assert process is not None
        assert process.pid is not None
        server_pid = process.pid
        grandchild = read_pid(pid_file)  # written before the server answers its first message
        assert alive(grandchild)
    await wait_dead(server_pid, grandchild)


async def test_conn5_a_grandchild_holding_the_pipes_is_stopped_too(home: Home) -> None:
    pid_file = home.root / "grandchild.pid"
    config = home.write_config({"gc": {**fixture_server("grandchild", "--pid-file", str(pid_file), "--inherit-stdio")}})
    async with home.open(
        config,
    ) as host:
        assert host.status().servers[0].state == "connected"
        grandchild = read_pid(pid_file)  # written before the server answers its first message
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
        yield cli, [await wait_for_pid(gc_pid_file), await wait_for_pid(silent_pid_file)]


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
        process = host.server("basic")
        assert process is not None
        assert process.pid is not None
        pid = process.pid

        killed = False

        async def kill_once_it_runs(progress: float, total: float | None, message: str | None) -> None:
            nonlocal killed
            if not killed:  # the server says the call runs: kill it mid-call
                killed = True
                os.kill(pid, signal.SIGKILL)

        arguments = {"seconds": 30, "progress_every": 0.05}
        with anyio.fail_after(10):
            result = await host.call("basic__slow", arguments, on_progress=kill_once_it_runs)
        assert killed
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "connection_lost"
        with anyio.fail_after(10):
            await host.wait_until(lambda h: h.status().servers[0].state == "stopped")
        reason = host.status().servers[0].reason
        assert reason is not None
        assert "SIGKILL" in reason
    await wait_dead(pid)
