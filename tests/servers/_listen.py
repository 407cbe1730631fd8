"""Serve a fixture's ASGI app with uvicorn and say so on stderr once it takes connections.

The line is `LISTENING` followed by the server's origin; `http_runner.serve_process` waits for
it instead of trying the port until it answers.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import uvicorn
from starlette.types import ASGIApp

__all__ = ["LISTENING", "serve"]

LISTENING = "fixture server listening on "


class _AnnouncingServer(uvicorn.Server):
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # uvicorn leaves startup only when it listens (it exits when it cannot bind).
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        print(f"{LISTENING}http://{host}:{self.config.port}", file=sys.stderr, flush=True)


def serve(app: ASGIApp, *, host: str, port: int, **options: Any) -> None:
    """Serve `app` on `host:port` until interrupted; `options` go to `uvicorn.Config`.

    Once asked to stop, it waits at most 0.2 s for open requests (a client's long-lived event
    stream would otherwise hold it until the test runner kills it, seconds later).
    """
    options.setdefault("timeout_graceful_shutdown", 0.2)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **options)
    anyio.run(_AnnouncingServer(config).serve)
