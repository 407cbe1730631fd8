"""Running the gateway over stdio or streamable HTTP, with an optional bearer token (GW-1, GW-4)."""

from __future__ import annotations

import contextlib
import hmac
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpyard.errors import UsageError
from mcpyard.gateway._ops import Operations
from mcpyard.gateway._server import Gateway
from mcpyard.gateway._stdio import stdio_streams

__all__ = ["BearerGuard", "serve_http", "serve_stdio"]

GRACE_SECS = 2
"""How long open requests and streams (an SSE stream never ends by itself) may take when the gateway stops."""


async def serve_stdio(gateway: Gateway) -> None:
    """Serve on this process's standard input and output until the client closes them."""
    server = gateway.server
    async with anyio.create_task_group() as tg:
        await tg.start(gateway.run)
        async with stdio_streams(gateway.fast_calls()) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()


class BearerGuard:
    """Refuses every HTTP request without `Authorization: Bearer <token>` with 401 (GW-4)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"mcpyard gateway: a bearer token is required\n"})
                return
        await self._app(scope, receive, send)


class _Stopping(logging.Filter):
    """Once the gateway is stopping, uvicorn's words about the streams it cuts (an SSE stream never
    ends by itself) are expected, not errors: they stay off the console."""

    def __init__(self) -> None:
        super().__init__()
        self.stopping = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.stopping


def _uvicorn_server(config: Any) -> Any:
    """uvicorn's server without its own signal handling (mcpyard's is in `serve_http`).

    uvicorn re-raises a caught Ctrl-C after it stops, as a KeyboardInterrupt inside the event
    loop, and its lifespan task then logs a traceback: the gateway stops it gracefully instead.
    """
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(config)


async def serve_http(
    gateway: Gateway,
    *,
    host: str,
    port: int,
    token: str | None = None,
    on_listening: Callable[[int], None] | None = None,
    handle_signals: bool = False,
) -> None:
    """Serve streamable HTTP at `http://HOST:PORT/mcp` (stateful, SSE responses) until cancelled, with
    `/healthz`, `/readyz` and `/metrics` beside it.

    `on_listening` is called once requests are taken, with the port taken (the one the system chose for port 0).
    `handle_signals`: stop gracefully on
    SIGINT (then raise KeyboardInterrupt) or SIGTERM (then return); only from the main thread.
    """
    import uvicorn

    app = gateway.fast_http(gateway.server.streamable_http_app(streamable_http_path="/mcp", host=host), "/mcp")
    guard: Callable[[ASGIApp], ASGIApp] | None = None
    if token is not None:
        guard = partial(BearerGuard, token=token)
        app = guard(app)
    app = Operations(app, gateway, guard=guard)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, so asyncio turns on TCP_NODELAY: otherwise each answer waits on a delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot listen on {host}:{port}: {reason}; choose another --port (or --host)") from None
    # No proxy headers: nothing here reads the client's address, and a local client could not forge it either.
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=GRACE_SECS, proxy_headers=False
    )
    server = _uvicorn_server(config)
    stopping = _Stopping()
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addFilter(stopping)
    interrupted = False
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(gateway.run)
            if (tasks := gateway.task_file) is not None:
                tasks.resume(tg)  # the tasks its last run left running, followed on

            async def serve() -> None:
                await server.serve(sockets=[sock])
                if tasks is not None:
                    tasks.hand_on()  # left running on their servers, for the next run to follow
                tg.cancel_scope.cancel()  # stopped: by a signal below, or it could not start

            async def stop_on_signal() -> None:
                nonlocal interrupted
                before = signal.getsignal(signal.SIGINT)
                try:
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for signum in signals:
                            # Further signals change nothing: the stop is bounded (GRACE_SECS, then the servers').
                            interrupted = interrupted or signum == signal.SIGINT
                            stopping.stopping = True
                            server.should_exit = True
                finally:
                    if before is not None:  # what handled Ctrl-C before (asyncio leaves Python's default)
                        signal.signal(signal.SIGINT, before)

            tg.start_soon(serve)
            if handle_signals:
                tg.start_soon(stop_on_signal)
            if on_listening is not None:
                with anyio.fail_after(20):
                    while not server.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
                        await anyio.sleep(0.01)
                on_listening(sock.getsockname()[1])
            try:
                await anyio.sleep_forever()
            finally:
                stopping.stopping = True
                server.should_exit = True
    finally:
        uvicorn_log.removeFilter(stopping)
    if interrupted:
        raise KeyboardInterrupt
