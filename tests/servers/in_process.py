"""Fixture servers served by uvicorn in the test's own process, on a real 127.0.0.1 port.

For tests whose subject is not the server's process nor the wire (the organization service, sign-in,
the pipeline): `serve_http_in_process` is `http_runner.serve_http` without a Python process to start.
The app is the one the fixture's `main` serves for the same command line (its `http_app`), so both
ways serve the same thing. Left out on purpose, so they always run as processes: fixtures that read
their process's environment or id (`echo_secrets`, `turns`, `named`): in this process they would read
the test runner's, and a test that a secret is absent from them could no longer fail.
"""

from __future__ import annotations

import argparse
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import uvicorn
from starlette.types import ASGIApp

from tests.servers import basic, echoes_token, elicits, legacy_tasks, oauth_server, takes_json, tasks
from tests.servers.http_runner import PATHS, HttpTransport

__all__ = ["FIXTURES", "STARTUP_SECONDS", "serve_http_in_process", "serving_on"]

STARTUP_SECONDS = 30
FIXTURE_STOP_SECONDS = 0
"""How long a fixture's open requests get to finish once the block ends: none. The test is over; what is still open
is a client's event stream, which never finishes, and waiting on it cost a second a test."""


class Fixture:
    """How a fixture reads its command line (`parser`) and the ASGI app it serves for it (`http_app`)."""

    def __init__(
        self, parser: Callable[[], argparse.ArgumentParser], http_app: Callable[[argparse.Namespace], ASGIApp]
    ) -> None:
        self.parser = parser
        self.http_app = http_app


FIXTURES: Final[dict[str, Fixture]] = {
    "basic": Fixture(basic.parser, basic.http_app),
    "echoes_token": Fixture(echoes_token.parser, echoes_token.http_app),
    "elicits": Fixture(elicits.parser, elicits.http_app),
    "legacy_tasks": Fixture(legacy_tasks.parser, legacy_tasks.http_app),
    "oauth_server": Fixture(oauth_server.parser, oauth_server.http_app),
    "takes_json": Fixture(takes_json.parser, takes_json.http_app),
    "tasks": Fixture(tasks.parser, tasks.http_app),
}
"""The fixtures that may be served in this process, by the name `serve_http` knows them by."""


@asynccontextmanager
async def serve_http_in_process(
    name: str, transport: HttpTransport = "streamable-http", args: Sequence[str] = ()
) -> AsyncIterator[str]:
    """Serve fixture `name` as `serve_http(name, transport, args)` would, in this process; yield its MCP URL.

    The URL is `http://127.0.0.1:P/mcp` for streamable HTTP and `http://127.0.0.1:P/sse` for SSE.

    Raises:
        ValueError: `name` is not one of `FIXTURES`, or `args` ask for TLS (served by processes only).
    """
    if name not in FIXTURES:
        raise ValueError(f"{name!r} is not served in process; use http_runner.serve_http or one of {sorted(FIXTURES)}")
    if any(arg.startswith("--tls") for arg in args):
        raise ValueError("TLS fixtures are served as processes: use http_runner.serve_http")
    fixture = FIXTURES[name]

    def app(port: int) -> ASGIApp:
        argv = ["--transport", transport, "--host", "127.0.0.1", "--port", str(port), *args]
        return fixture.http_app(fixture.parser().parse_args(argv))

    async with serving_on(app, stop_seconds=FIXTURE_STOP_SECONDS) as origin:
        yield origin + PATHS[transport]


class _Announcing(uvicorn.Server):
    """Sets `listening` once it takes connections (uvicorn leaves `startup` only then, or failed)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.listening.set()


@asynccontextmanager
async def serving_on(
    app: Callable[[int], ASGIApp], *, stop_seconds: int, tls: tuple[Path, Path] | None = None
) -> AsyncIterator[str]:
    """Serve `app(port)` (its lifespan on) on a free 127.0.0.1 port until the block ends; yields its origin.

    With `tls` (a certificate for `localhost` and its key, as files), over https: the origin is then
    `https://localhost:<port>`.

    The socket is bound first and handed to uvicorn, so no other process can take the port in between,
    and the app may know its own port (an OAuth issuer names its origin). At the end, open requests get
    `stop_seconds` to finish, then they are cancelled (a long-lived event stream would hold it forever).

    Raises:
        RuntimeError: The app's lifespan failed at startup.
        TimeoutError: It did not listen within `STARTUP_SECONDS`, or did not stop in time.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    certificate, key = tls if tls is not None else (None, None)
    config = uvicorn.Config(
        app(port),
        log_level="warning",
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=stop_seconds,
        ssl_certfile=certificate,
        ssl_keyfile=key,
    )
    server = _Announcing(config)
    ended = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve(sockets=[listener])
        finally:
            ended.set()

    with listener:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            with anyio.fail_after(STARTUP_SECONDS):
                async with anyio.create_task_group() as first:

                    async def wait(event: anyio.Event) -> None:
                        await event.wait()
                        first.cancel_scope.cancel()

                    first.start_soon(wait, server.listening)
                    first.start_soon(wait, ended)
            if not server.listening.is_set():
                raise RuntimeError("the server did not start (its lifespan failed; see the log above)")
            try:
                yield f"https://localhost:{port}" if tls is not None else f"http://127.0.0.1:{port}"
            finally:
                server.should_exit = True
                with anyio.fail_after(stop_seconds + 5):
                    await ended.wait()
