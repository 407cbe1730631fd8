"""Run a fixture server script as a subprocess on 127.0.0.1 and hand tests its MCP URL."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Literal

import anyio
from anyio.abc import Process

SERVERS_DIR = Path(__file__).resolve().parent
"""The folder holding the fixture scripts."""

HttpTransport = Literal["streamable-http", "sse"]

PATHS: dict[HttpTransport, str] = {"streamable-http": "/mcp", "sse": "/sse"}
"""The SDK's default endpoint path for each transport."""

STARTUP_SECONDS = 20
STOP_SECONDS = 5
_POLL_SECONDS = 0.05
_PORT_ATTEMPTS = 3


class ServerStartError(RuntimeError):
    """The fixture server exited before it accepted connections."""


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
    for SSE. The script must accept those three options (basic.py does; list_changed.py
    does for streamable HTTP). The server is stopped (SIGTERM, then SIGKILL) on exit.
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
) -> AsyncIterator[str]:
    """Start a server process on a free 127.0.0.1 port, wait until it listens, yield its URL, stop it.

    Raises:
        ServerStartError: The process exited before accepting connections (its stderr is
            in the message); retried on a fresh port when the port was taken meanwhile.
        TimeoutError: The port did not accept connections within `startup_seconds`.
    """
    for attempt in range(1, _PORT_ATTEMPTS + 1):
        port = free_port()
        with tempfile.TemporaryFile() as stderr:
            process = await anyio.open_process(
                list(command(port)),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=dict(env(port)) if env is not None else None,
            )
            try:
                try:
                    await _wait_until_listening(process, port, startup_seconds)
                except ServerStartError as error:
                    output = _read_all(stderr)
                    taken = "address already in use" in output.lower() or "EADDRINUSE" in output
                    if taken and attempt < _PORT_ATTEMPTS:
                        continue
                    raise ServerStartError(f"{error}; its stderr:\n{output}") from None
                yield url(port)
                return
            finally:
                await _stop(process)
    raise AssertionError("unreachable: the last attempt either yields or raises")


async def _wait_until_listening(process: Process, port: int, startup_seconds: float) -> None:
    with anyio.fail_after(startup_seconds):
        while True:
            if process.returncode is not None:
                raise ServerStartError(f"the server exited with code {process.returncode} before listening")
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(_POLL_SECONDS)
            else:
                await stream.aclose()
                return


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
        await process.aclose()


def _read_all(stream: IO[bytes]) -> str:
    stream.seek(0)
    return stream.read().decode(errors="replace")
