"""The gateway's operations endpoints beside `/mcp` (OBS-1): `/healthz`, `/readyz` and `/metrics`.

`/healthz` and `/readyz` answer anyone (a load balancer has no token); `/metrics` names the
servers and tools shared, so with `--token-secret` it asks for the token like `/mcp` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from mcpyard.gateway._server import Gateway

__all__ = ["OPERATIONS_PATHS", "Operations"]

OPERATIONS_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class Operations:
    """Answers the operations paths itself and hands everything else (lifespan included) to the MCP app."""

    def __init__(self, app: ASGIApp, gateway: Gateway, *, guard: Callable[[ASGIApp], ASGIApp] | None = None) -> None:
        self._app = app
        self._gateway = gateway
        self._metrics: ASGIApp = guard(self._scrape) if guard is not None else self._scrape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path not in OPERATIONS_PATHS:
            await self._app(scope, receive, send)
        elif scope["method"] not in ("GET", "HEAD"):
            await _answer(send, 405, b'{"error": "method not allowed: use GET"}\n', "application/json")
        elif path == "/healthz":
            await _answer(send, 200, b'{"status": "ok"}\n', "application/json")
        elif path == "/readyz":
            servers = self._gateway.host.status().servers
            connected = sum(1 for server in servers if server.state == "connected")
            body = {"status": "ready", "servers": len(servers), "connected": connected}
            await _answer(send, 200, json.dumps(body).encode() + b"\n", "application/json")
        else:
            await self._metrics(scope, receive, send)

    async def _scrape(self, scope: Scope, receive: Receive, send: Send) -> None:
        from mcpyard.ops import CONTENT_TYPE, exposition, set_servers

        set_servers(server.state for server in self._gateway.host.status().servers)
        await _answer(send, 200, exposition(), CONTENT_TYPE)


async def _answer(send: Send, status: int, body: bytes, content_type: str) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
