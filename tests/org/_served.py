"""The organization service served for real: its app on uvicorn on 127.0.0.1, lifespan and all, in this process.

For tests that need a real HTTP port (a client in another thread, schemathesis); `running_service` in
`_service.py` is the same service through an in-memory transport.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from starlette.types import ASGIApp

from tests.org._service import Service, service_app, set_up

__all__ = ["STARTUP_SECONDS", "served_service", "serving"]

STARTUP_SECONDS = 30
STOP_SECONDS = 10


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
async def serving(app: ASGIApp, *, stop_seconds: int = STOP_SECONDS) -> AsyncIterator[str]:
    """Serve `app` (its lifespan on) on a free 127.0.0.1 port until the block ends; yields its origin.

    The socket is bound here and handed to uvicorn, so no other process can take the port in between.
    At the end, open requests get `stop_seconds` to finish (a client's long-lived event stream would
    otherwise hold the server that long).
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none", timeout_graceful_shutdown=stop_seconds)
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
                raise RuntimeError("the service did not start (its lifespan failed; see the log above)")
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                server.should_exit = True
                with anyio.fail_after(stop_seconds + 5):
                    await ended.wait()


@asynccontextmanager
async def served_service(database_url: str, data_home: Path, **settings: Any) -> AsyncIterator[Service]:
    """The service on a real port, an organization `acme` set up, and a client for it."""
    org = await set_up(database_url)
    app = service_app(database_url, data_home, **settings)
    async with serving(app) as origin, httpx2.AsyncClient(base_url=origin, timeout=60, trust_env=False) as client:
        yield Service(client, org, database_url, data_home, app=app)
