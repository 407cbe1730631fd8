"""Run a fixture server script as a subprocess on 127.0.0.1 and hand tests its MCP URL."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
from anyio.abc import Process

from tests._waiting import eventually
from tests.servers._listen import LISTENING

SERVERS_DIR = Path(__file__).resolve().parent
"""The folder holding the fixture scripts."""

HttpTransport = Literal["streamable-http", "sse"]

PATHS: dict[HttpTransport, str] = {"streamable-http": "/mcp", "sse": "/sse"}
"""The SDK's default endpoint path for each transport."""

STARTUP_SECONDS = 60
"""A bound, not a wait: a server says it listens as soon as it does; at the start of a full run, when every worker
begins its longest tests at once, a gateway has taken more than 20 s to start."""
STOP_SECONDS = 5
_PORT_ATTEMPTS = 3

GATEWAY_LISTENING = "mcpyard gateway on "
"""What `mcpyard serve --transport http` prints on stderr once it takes requests."""


class ServerStartError(RuntimeError):
    """The server process exited before it accepted connections."""

    def __init__(self, message: str, output: str) -> None:
        super().__init__(f"{message}; its stderr:\n{output}")
        self.port_taken = "address already in use" in output.lower() or "EADDRINUSE" in output


def script_path(script: str | Path) -> Path:
    """Resolve a fixture name (`"basic"`) or a path to the script file."""
    path = Path(script)
    if path.suffix != ".py" and not path.is_absolute() and len(path.parts) == 1:
        path = SERVERS_DIR / f"{script}.py"
    return path


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@asynccontextmanager
async def serve_http(
    script: str | Path,
    transport: HttpTransport = "streamable-http",
    args: Sequence[str] = (),
) -> AsyncIterator[str]:
    """Start `script` with `--transport T --host 127.0.0.1 --port P` and yield its MCP URL.

    The URL is `http://127.0.0.1:P/mcp` for streamable HTTP and `http://127.0.0.1:P/sse`
    for SSE. The script must accept those three options and announce itself like the fixtures
    do (`_listen.serve`). The server is stopped (SIGTERM, then SIGKILL) on exit.
    """
    path = script_path(script)

    def command(port: int) -> list[str]:
        return [sys.executable, str(path), "--transport", transport, "--host", "127.0.0.1", "--port", str(port), *args]

    async with serve_process(command, lambda port: f"http://127.0.0.1:{port}{PATHS[transport]}") as url:
        yield url


@asynccontextmanager
async def serve_process(
    command: Callable[[int], Sequence[str]],
    url: Callable[[int], str],
    *,
    env: Callable[[int], Mapping[str, str]] | None = None,
    startup_seconds: float = STARTUP_SECONDS,
    ready: str | None = LISTENING,
    stderr: bytearray | None = None,
) -> AsyncIterator[str]:
    """Start a server process on a free 127.0.0.1 port, wait until it listens, yield its URL, stop it.

    `ready` is what the server prints on stderr once it listens (see `listening_process`); `stderr`, when
    given, receives everything it prints there.

    Raises:
        ServerStartError: The process exited before accepting connections (its stderr is
            in the message); retried on a fresh port when the port was taken meanwhile.
        TimeoutError: It did not listen within `startup_seconds`.
    """
    for attempt in range(1, _PORT_ATTEMPTS + 1):
        port = free_port()
        try:
            async with listening_process(
                command(port),
                port=port,
                env=env(port) if env is not None else None,
                startup_seconds=startup_seconds,
                ready=ready,
                stderr=stderr,
            ):
                yield url(port)
                return
        except ServerStartError as error:
            if not error.port_taken or attempt == _PORT_ATTEMPTS:
                raise
    raise AssertionError("unreachable: the last attempt either yields or raises")


@asynccontextmanager
async def listening_process(
    command: Sequence[str],
    *,
    port: int,
    env: Mapping[str, str] | None = None,
    startup_seconds: float = STARTUP_SECONDS,
    ready: str | None = LISTENING,
    stderr: bytearray | None = None,
) -> AsyncIterator[Process]:
    """Start a server process, yield it once it listens on `port`, and stop it on exit.

    It listens once a line of its stderr holds `ready`: `LISTENING` for the fixtures here,
    `GATEWAY_LISTENING` for `mcpyard serve`. A third-party server that announces nothing one
    may rely on is given `ready=None`: then its port is tried until it takes a connection.
    Its stderr is read as it comes (so the pipe never fills) and shown when it fails to start.

    Raises:
        ServerStartError: The process exited before it listened.
        TimeoutError: It did not listen within `startup_seconds`.
    """
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
    )
    output = bytearray() if stderr is None else stderr
    announced = anyio.Event()
    ended = anyio.Event()

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            output.extend(chunk)
            if ready is not None and not announced.is_set() and ready.encode() in output:
                announced.set()
        ended.set()

    async def started() -> bool:
        if ended.is_set():
            return True
        if ready is not None:
            return announced.is_set()
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return False
        await stream.aclose()
        return True

    try:
        async with process, anyio.create_task_group() as tg:
            try:
                tg.start_soon(read_stderr)
                if ready is not None:
                    with anyio.fail_after(startup_seconds):
                        await _first(announced.wait, ended.wait)
                else:
                    # A server that says nothing we may rely on: nothing to wait on but its port.
                    await eventually(started, within=startup_seconds, what=f"{command[0]} listens on port {port}")
                if ended.is_set() and not announced.is_set():
                    with anyio.move_on_after(STOP_SECONDS):
                        await process.wait()
                    raise ServerStartError(
                        f"the server exited with code {process.returncode} before listening",
                        output.decode(errors="replace"),
                    )
                yield process
            finally:
                await _stop(process)  # its stderr ends with it, and so does the reading task
    except BaseExceptionGroup as group:
        # The reading task does not fail: what the task group wraps is the caller's own error.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _first(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return as soon as one of `waits` returns."""
    async with anyio.create_task_group() as tg:

        async def run(wait: Callable[[], Awaitable[object]]) -> None:
            await wait()
            tg.cancel_scope.cancel()

        for wait in waits:
            tg.start_soon(run, wait)


async def _stop(process: Process) -> None:
    # Shielded so a cancelled test still reaps its server instead of leaking it.
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(STOP_SECONDS):
                await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
