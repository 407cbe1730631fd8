"""Running the gateway over stdio or streamable HTTP, with an optional bearer token (GW-1, GW-4)."""

from __future__ import annotations

import hmac
import socket

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpyard.gateway._server import Gateway
from mcpyard.gateway._stdio import stdio_streams

__all__ = ["BearerGuard", "serve_http", "serve_stdio"]


async def serve_stdio(gateway: Gateway) -> None:
    """Serve on this process's standard input and output until the client closes them."""
    server = gateway.server
    async with anyio.create_task_group() as tg:
        await tg.start(gateway.run)
        async with stdio_streams() as (read_stream, write_stream):
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


async def serve_http(
    gateway: Gateway,
    *,
    host: str,
    port: int,
    token: str | None = None,
    ready: anyio.Event | None = None,
) -> None:
    """Serve streamable HTTP at `http://HOST:PORT/mcp` (stateful, SSE responses) until cancelled."""
    import uvicorn

    app: ASGIApp = gateway.server.streamable_http_app(streamable_http_path="/mcp", host=host)
    if token is not None:
        app = BearerGuard(app, token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, so asyncio turns on TCP_NODELAY: otherwise each answer waits on a delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        await tg.start(gateway.run)
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        if ready is not None:
            with anyio.fail_after(20):
                while not server.started:  # noqa: ASYNC110  # uvicorn offers no event to wait on
                    await anyio.sleep(0.01)
            ready.set()
        try:
            await anyio.sleep_forever()
        finally:
            server.should_exit = True
