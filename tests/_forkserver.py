"""A fork server for the fixture servers: one per test worker, the SDK imported once, each server a fork of it.

Importing the MCP SDK costs about a second of CPU, and the suite starts some four hundred fixture servers over
stdio. `fixture_server` gives the command `python -S tests/_launch.py SOCKET PYTHON SCRIPT ARGS…` instead of
`PYTHON SCRIPT ARGS…`; the launcher passes its standard streams, folder and environment here, and a fork of this
process runs the script (`runpy`, as `__main__`). For each server a guardian (a fork too) waits on the server and
on the launcher's connection: it passes the launcher's signals on, tells it how the server ended, and kills the
server when the launcher is gone. So a server started this way reads, writes, exits and is signalled as one
started directly; only its place in the process tree differs, and a test about process trees (sessions, process
groups, orphans) marks itself `spawned` to get real processes.

Run as `python -m tests._forkserver SOCKET` from the repository; it ends when its standard input closes (the
worker that started it is gone).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests._launch import EXEC, PASSED_ON, STARTED, received

__all__ = ["launched", "listening"]

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "tests" / "_launch.py"
PRELOAD = (
    "anyio",
    "anyio._backends._asyncio",
    "pydantic",
    "mcp",
    "mcp_types",
    "mcp.server.mcpserver",
    "mcp.server.lowlevel",
    "mcp.server.stdio",
    "mcp.server.transport_security",
    "mcp.server.mcpserver.exceptions",
    "mcp.shared.exceptions",
    "starlette.applications",
)
"""What the fixture servers import (the SDK above all): imported once, here."""

_started: dict[str, Any] = {}


def launched(script: Path, *args: str) -> list[str]:
    """The command that runs `script` with `args` as a fork of this worker's fork server (started on first use)."""
    path = _started.get("socket")
    if path is None:
        folder = tempfile.mkdtemp(prefix="mcpyard-fork-")
        path = _started["socket"] = os.path.join(folder, "s")
        process = subprocess.Popen(
            [sys.executable, "-m", "tests._forkserver", path],
            cwd=ROOT,
            # As a server's interpreter starts: servers get a small environment (no PYTHON… settings, no LC_…).
            env={key: value for key, value in os.environ.items() if key not in _startup(os.environ) or key == "LANG"},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        atexit.register(_stop, process, folder)
    # Until the fork server listens, a launcher starts its server itself.
    return [sys.executable, "-S", str(LAUNCH), path, sys.executable, str(script), *args]


def listening() -> bool:
    """Whether this worker's fork server (started by `launched`) takes launchers now."""
    path = _started.get("socket")
    if path is None:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _stop(process: subprocess.Popen[bytes], folder: str) -> None:
    assert process.stdin is not None
    process.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(folder, "s"))
        os.rmdir(folder)


# ---------------------------------------------------------------------------------------------- the fork server


def serve(path: str) -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    own = _startup(os.environ)
    gc.collect()
    gc.freeze()  # what is imported stays shared with every fork: no collection writes to it
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # guardians are reaped as they end
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    while True:
        readable, _, _ = select.select([listener.fileno(), sys.stdin.fileno()], [], [])
        if sys.stdin.fileno() in readable and not os.read(sys.stdin.fileno(), 1024):
            return  # the worker is gone
        if listener.fileno() in readable:
            conn, _ = listener.accept()
            if os.fork() == 0:
                _guard(conn, listener, own)
            conn.close()


def _startup(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables an interpreter reads as it starts (`PYTHONUNBUFFERED`, the locale…): a fork has its parent's."""
    return {
        key: value
        for key, value in environ.items()
        if key in ("LANG", "LC_ALL", "LC_CTYPE") or (key.startswith("PYTHON") and not key.startswith("PYTHON_"))
    }


def _received(conn: socket.socket, size: int) -> bytes:
    if not (data := received(conn, size)):
        raise EOFError("the launcher left")
    return data


def _guard(conn: socket.socket, listener: socket.socket, own: dict[str, str]) -> None:
    """One launcher's server: forked, watched, signalled, reported. Never returns."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        listener.close()
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        (size,) = struct.unpack("!I", _received(conn, 4))
        request = json.loads(_received(conn, size))
        if len(fds) != 3 or _startup(request["env"]) != own:
            conn.sendall(struct.pack("!i", EXEC))
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            _run(conn, fds, request)
        for fd in fds:
            os.close(fd)
        conn.sendall(struct.pack("!i", STARTED))
        _watch(conn, pid)
    except BaseException:  # a guardian that fails says so, and the server goes with it
        traceback.print_exc()
        code = 1
    os._exit(code)


def _watch(conn: socket.socket, pid: int) -> None:
    server = os.pidfd_open(pid)
    while True:
        readable, _, _ = select.select([conn.fileno(), server], [], [])
        if server in readable:
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                conn.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
            return
        signals = conn.recv(64)
        if not signals:  # the launcher was killed: so is its server
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        for number in signals:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, number)


def _run(conn: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
    """The server: the launcher's streams, folder, environment and command. Never returns."""
    code: int = 0
    try:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for number in PASSED_ON:  # as an interpreter started by the launcher's parent would have them
            ignored = number in request["ignored"]
            default = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
            signal.signal(number, signal.SIG_IGN if ignored else default)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        sys.path[0] = str(Path(sys.argv[0]).resolve().parent)
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # as Python ends on an unhandled Ctrl-C: by the signal
        traceback.print_exc()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


if __name__ == "__main__":
    serve(sys.argv[1])
