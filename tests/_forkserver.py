"""A fork server for the programs tests start: one per test worker, the SDK imported once, each program a fork of it.

Importing the MCP SDK costs about a second of CPU, and the suite starts some four hundred fixture servers over
stdio, and a hundred-odd organization replicas and mcpyard processes. `fixture_server` gives the command
`python -S tests/_launch.py SOCKET PYTHON SCRIPT ARGS…` instead of `PYTHON SCRIPT ARGS…` (`launched`; a module,
`-m MODULE`, too); the launcher passes its standard streams, folder and environment here, and a fork of this
process runs the script (`runpy`, as `__main__`). For each server a guardian (a fork too) waits on the server and
on the launcher's connection: it passes the launcher's signals on, tells it how the server ended, and kills the
server when the launcher is gone. So a server started this way reads, writes, exits and is signalled as one
started directly; only its place in the process tree differs, and a test about process trees (sessions, process
groups, orphans) marks itself `spawned` to get real processes.

An interpreter reads some variables as it starts (`PYTHONUNBUFFERED`, the locale…), and a fork has its parent's:
a worker starts one fork server for each set of them its programs are started with (`launched(..., environ=)`),
and a program whose set is not its fork server's runs as a process of its own.

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

__all__ = ["SPAWNING", "launched", "listening", "mcpyard_command", "module_command", "start"]

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "tests" / "_launch.py"
PRELOAD = (
    "anyio",
    "anyio._backends._asyncio",
    "pydantic",
    "mcp",
    "mcp_types",
    "mcp.client",
    "mcp.client.streamable_http",
    "mcp.server.mcpserver",
    "mcp.server.lowlevel",
    "mcp.server.stdio",
    "mcp.server.streamable_http_manager",
    "mcp.server.transport_security",
    "mcp.server.mcpserver.exceptions",
    "mcp.shared.exceptions",
    "starlette.applications",
    "sse_starlette",
    "uvicorn",
    "uvicorn.protocols.http.httptools_impl",
    "httpx2",
    "sqlalchemy",
    "sqlalchemy.ext.asyncio",
    "psycopg",
    "jinja2",
    "argon2",
    "cryptography.fernet",
    "jsonschema",
    "regex",
    "jwt",
)
"""What the programs import (the SDK above all, the web server, the database's libraries; never mcpyard, whose
modules may read the environment as they load): imported once, here."""

SPAWNING = {"real": os.environ.get("MCPYARD_TEST_FORK") == "0"}
"""Whether the helpers (`fixture_server`, `mcpyard_command`) give commands that start real processes instead (a test
marked `spawned`, or MCPYARD_TEST_FORK=0 for a whole run)."""

_started: dict[frozenset[tuple[str, str]], str] = {}
"""The socket of each fork server this worker started, by the startup variables it was started with."""


def launched(
    program: Path | str, *args: str, module: bool = False, environ: Mapping[str, str] | None = None
) -> list[str]:
    """The command that runs `program` (a script; with `module`, a module's name, as `-m`) with `args` as a fork of
    one of this worker's fork servers (started on first use): the one whose interpreter started with the startup
    variables of `environ`, the environment the program will be given (None: a fixture server's small one)."""
    # Until the fork server listens, a launcher starts its program itself.
    command = ["-m", str(program)] if module else [str(program)]
    return [sys.executable, "-S", str(LAUNCH), start(environ), sys.executable, *command, *args]


def start(environ: Mapping[str, str] | None = None) -> str:
    """The socket of this worker's fork server for programs given `environ` (as `launched`), started if it is not."""
    wanted = _wanted(environ)
    key = frozenset(wanted.items())
    path = _started.get(key)
    if path is None:
        folder = tempfile.mkdtemp(prefix="mcpyard-fork-")
        path = _started[key] = os.path.join(folder, "s")
        base = {name: value for name, value in os.environ.items() if name not in _startup(os.environ)}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests._forkserver", path],
            cwd=ROOT,
            env={**base, **wanted},  # as the programs' interpreters start: a fork keeps what its parent read
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        atexit.register(_stop, process, folder)
    return path


def mcpyard_command(environ: Mapping[str, str], *args: str) -> list[str]:
    """`python -m mcpyard ARGS`, to be started with the environment `environ`: as a fork of this worker's fork server
    for it, which reads, writes, exits and is signalled as a process of its own. A test about the process tree itself
    (sessions, groups, what the process's children are) starts `sys.executable` directly, or is marked `spawned`."""
    return module_command(environ, "mcpyard", *args)


def module_command(environ: Mapping[str, str], module: str, *args: str) -> list[str]:
    """`python -m MODULE ARGS`, as `mcpyard_command` gives it."""
    if SPAWNING["real"]:
        return [sys.executable, "-m", module, *args]
    return launched(module, *args, module=True, environ=environ)


def _wanted(environ: Mapping[str, str] | None) -> dict[str, str]:
    """The startup variables of a fork server for programs given `environ` (None: fixture servers, the locale's)."""
    if environ is None:
        return {"LANG": os.environ["LANG"]} if "LANG" in os.environ else {}
    return _startup(environ)


def listening(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this worker's fork server for programs given `environ` (started by `launched`) takes launchers now."""
    path = _started.get(frozenset(_wanted(environ).items()))
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
        _launch_one(conn, own)
    except BaseException:  # a guardian that fails says so, and the server goes with it
        traceback.print_exc()
        code = 1
    os._exit(code)


def _launch_one(conn: socket.socket, own: dict[str, str]) -> None:
    """Fork the program the launcher asks for and watch it; return at once when there is nothing to start."""
    first, fds, _, _ = socket.recv_fds(conn, 1, 3)
    if not first:  # a connection that only looked whether this server listens (`listening`)
        return
    (size,) = struct.unpack("!I", _received(conn, 4))
    request = json.loads(_received(conn, size))
    if len(fds) != 3 or _startup(request["env"]) != own:
        conn.sendall(struct.pack("!i", EXEC))
        return
    pid = os.fork()
    if pid == 0:
        _run(conn, fds, request)
    for fd in fds:
        os.close(fd)
    conn.sendall(struct.pack("!i", STARTED))
    _watch(conn, pid)


def _watch(conn: socket.socket, pid: int) -> None:
    server = os.pidfd_open(pid)
    while True:
        readable, _, _ = select.select([conn.fileno(), server], [], [])
        if server in readable:
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                conn.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
            return
        try:
            signals = conn.recv(64)
        except ConnectionResetError:  # the launcher died with something unread: its kernel answered with a reset
            signals = b""
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
        argv = list(request["argv"])
        if argv[0] == "-m":  # as `python -m MODULE`: the folder it starts in comes first on the path
            sys.argv, sys.path[0] = argv[1:], os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
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
