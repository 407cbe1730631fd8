"""Processes a test did not start itself (grandchildren, helpers, hooks): whether they live, and their pids.

A process this test did not start cannot be awaited, so these poll /proc through
`eventually`, bounded; a pid file written by such a process is read once complete.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests._waiting import eventually
from tests.conftest import SERVERS, Home

__all__ = [
    "alive",
    "has_line",
    "in_session",
    "left_of",
    "read_pid",
    "read_pids",
    "wait_dead",
    "wait_for_pid",
    "wait_for_pids",
    "with_ctrl_c",
    "wrapped_basic",
]

_CTRL_C_AT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def with_ctrl_c(command: Sequence[str]) -> list[str]:
    """`command` (an absolute program path first) started with Ctrl-C (SIGINT) at its default, as from a terminal.

    A program started with SIGINT ignored keeps ignoring it, as it should; a test runner may
    run tests that way (a background job of a script, a parallel worker), and a test of what
    Ctrl-C does must not depend on it.
    """
    return [sys.executable, "-c", _CTRL_C_AT_DEFAULT, *command]


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def in_session(sid: int) -> list[int]:
    """The live processes (zombies aside) of session `sid`, read from /proc (Linux)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        try:
            # After the command's closing parenthesis: state, parent, process group, session.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split() if entry.name.isdigit() else []
        except (FileNotFoundError, ProcessLookupError):
            continue  # it exited meanwhile
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def wait_dead(*pids: int, within: float = 10) -> None:
    # Processes this test did not start (grandchildren) cannot be awaited: /proc is all there is.
    await eventually(lambda: not any(alive(pid) for pid in pids), within=within, what=f"no process left of {pids}")


async def wait_for_pid(path: Path, within: float = 20) -> int:
    # Written by a process of a process this test did not start: there is nothing to wait on.
    await eventually(lambda: has_line(path), within=within, what=f"{path} is written")
    return read_pid(path)


async def wait_for_pids(path: Path, within: float = 20) -> list[int]:
    """The pids in a file written at once (temp file + rename), one per line."""
    await eventually(lambda: has_line(path), within=within, what=f"{path} is written")
    return read_pids(path)


def has_line(path: Path) -> bool:
    try:
        return path.read_text().endswith("\n")
    except FileNotFoundError:
        return False


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def read_pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()]


def wrapped_basic(home: Home, *, deaf: bool = False, **env: str) -> dict[str, Any]:
    """The basic server run by a shell that goes on once it exits (`sh -c 'server; sleep 30'`).

    The shell writes its pid (the session's) to `wrapper.pid` first, and the server's exit code to
    `server.exit` once the server is gone. `deaf`: the shell ignores SIGINT and SIGTERM, and so does
    everything it starts (only SIGKILL stops its `sleep`).
    """
    server = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVERS / 'basic.py'))}"
    pid_file, exit_file = (shlex.quote(str(home.root / name)) for name in ("wrapper.pid", "server.exit"))
    script = f"echo $$ > {pid_file}; {server}; echo $? > {exit_file}; sleep 30"
    if deaf:
        script = f"trap '' INT TERM; {script}"
    return {"command": "sh", "args": ["-c", script], "env": env}


def left_of(session: int, *pids: int) -> list[int]:
    """The processes of the wrapper's session, and of `pids`, still alive."""
    return sorted({pid for pid in (*pids, *in_session(session)) if alive(pid)})
