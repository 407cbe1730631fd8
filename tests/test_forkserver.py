"""The fork server the suite starts fixture servers with (tests/_forkserver.py) keeps what a process of its own has:
its streams, folder, environment and arguments, its exit code, the signals it is sent, and its end when whoever
started it is killed. Every test with a fixture server leans on this."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from tests._forkserver import launched, listening
from tests._processes import alive, read_pid, with_ctrl_c
from tests._waiting import eventually

pytestmark = pytest.mark.anyio

SCRIPT = """
import json, os, signal, sys
from pathlib import Path
import mcp  # what the fork server has imported already
Path(sys.argv[1]).write_text(str(os.getpid()))
line = sys.stdin.readline()
print(json.dumps({"line": line, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": os.environ.get("FORKED_VALUE"),
                  "main": __name__, "optimize": sys.flags.optimize}), flush=True)
print("to stderr", file=sys.stderr, flush=True)
if line.strip() == "wait":
    signal.pause()  # until the signal the test sends
sys.exit(int(line.strip() or 0) if line.strip().isdigit() else 0)
"""


async def _start(tmp_path: Path, **extra: str) -> tuple[Process, Path]:
    """The script through a launcher, once the fork server listens (else the launcher would run it itself), with the
    small environment a server gets, plus `extra`."""
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    pid_file = tmp_path / "pid"
    command = with_ctrl_c(launched(script, str(pid_file), "two words"))
    await eventually(listening, within=60, what="the fork server listens")
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env |= {"FORKED_VALUE": "from the launcher", **extra}
    return await anyio.open_process(command, cwd=workdir, env=env), pid_file


async def _forked_server(process: Process, pid_file: Path) -> int:
    await eventually(lambda: pid_file.exists() and pid_file.read_text() != "", within=30, what="the server started")
    server = read_pid(pid_file)
    assert server != process.pid, "the server is a fork, not the launcher itself"
    return server


async def test_a_forked_server_reads_writes_and_ends_as_a_process_of_its_own(tmp_path: Path) -> None:
    process, pid_file = await _start(tmp_path)
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        await _forked_server(process, pid_file)
        await process.stdin.send(b"7\n")
        with anyio.fail_after(30):
            stdout = b"".join([chunk async for chunk in process.stdout])
            stderr = b"".join([chunk async for chunk in process.stderr])
            assert await process.wait() == 7
    assert json.loads(stdout) == {
        "line": "7\n",
        "argv": [str(tmp_path / "pid"), "two words"],
        "cwd": str(tmp_path / "work"),
        "env": "from the launcher",
        "main": "__main__",
        "optimize": 0,
    }
    assert b"to stderr" in stderr


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_to_the_launcher_reaches_the_server_and_both_end_by_it(
    tmp_path: Path, number: signal.Signals
) -> None:
    process, pid_file = await _start(tmp_path)
    async with process:
        assert process.stdin is not None
        await process.stdin.send(b"wait\n")
        server = await _forked_server(process, pid_file)
        process.send_signal(number)
        with anyio.fail_after(10):
            assert await process.wait() == -number
    await eventually(lambda: not alive(server), within=5, what="the server ended")


async def test_a_server_killed_outright_ends_its_launcher_by_the_same_signal(tmp_path: Path) -> None:
    process, pid_file = await _start(tmp_path)
    async with process:
        server = await _forked_server(process, pid_file)
        os.kill(server, signal.SIGKILL)
        with anyio.fail_after(10):
            assert await process.wait() == -signal.SIGKILL


async def test_a_launcher_killed_outright_takes_its_server_with_it(tmp_path: Path) -> None:
    process, pid_file = await _start(tmp_path)
    async with process:
        server = await _forked_server(process, pid_file)
        assert alive(server)
        process.kill()
        with anyio.fail_after(10):
            assert await process.wait() == -signal.SIGKILL
    await eventually(lambda: not alive(server), within=5, what="the server ended with its launcher")


async def test_a_server_whose_environment_sets_up_the_interpreter_otherwise_runs_as_its_own_process(
    tmp_path: Path,
) -> None:
    process, pid_file = await _start(tmp_path, PYTHONOPTIMIZE="1")
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.send(b"0\n")
        with anyio.fail_after(30):
            stdout = b"".join([chunk async for chunk in process.stdout])
            assert await process.wait() == 0
    assert read_pid(pid_file) == process.pid, "the launcher became the server (exec)"
    assert json.loads(stdout)["optimize"] == 1


async def test_a_module_given_an_environment_of_its_own_runs_as_a_fork_of_a_fork_server_started_so(
    tmp_path: Path,
) -> None:
    """`-m MODULE`, as `python -m` runs it (its folder first on the path), forked from the fork server whose interpreter
    started with the program's own startup variables (here `PYTHONOPTIMIZE`), not the fixture servers' one."""
    (tmp_path / "probe.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps({'pid': os.getpid(), 'argv': sys.argv[1:], 'main': __name__, 'path0': sys.path[0],"
        " 'optimize': sys.flags.optimize}))\n",
        encoding="utf-8",
    )
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ} | {"PYTHONOPTIMIZE": "1"}
    command = launched("probe", "an argument", module=True, environ=env)
    await eventually(lambda: listening(env), within=60, what="the fork server for this environment listens")
    assert not listening({**env, "PYTHONOPTIMIZE": "2"}), "one fork server per set of startup variables"
    async with await anyio.open_process(command, cwd=tmp_path, env=env) as process:
        assert process.stdout is not None
        with anyio.fail_after(30):
            stdout = b"".join([chunk async for chunk in process.stdout])
            assert await process.wait() == 0
    said = json.loads(stdout)
    assert said["pid"] != process.pid, "the module ran in a fork, not in the launcher"
    assert (said["argv"], said["main"], said["path0"], said["optimize"]) == (
        ["an argument"],
        "__main__",
        str(tmp_path),
        1,
    )


async def test_without_its_fork_server_the_launcher_runs_the_server_itself(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text("import sys; print('ran', sys.argv[1:]); sys.exit(3)\n", encoding="utf-8")
    command = launched(script, "x")
    command[3] = str(tmp_path / "no-such-socket")  # the socket's place in the command
    done = await anyio.run_process(command, check=False, stderr=subprocess.PIPE)
    assert (done.returncode, done.stdout) == (3, b"ran ['x']\n")
