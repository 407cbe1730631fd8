"""The organization service served for real: its app on uvicorn on 127.0.0.1, lifespan and all, in this process.

For tests that need a real HTTP port (a client in another thread, schemathesis); `running_service` in
`_service.py` is the same service through an in-memory transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from starlette.types import ASGIApp

from tests.org._service import Service, service_app, set_up
from tests.servers.in_process import STARTUP_SECONDS, serving_on

__all__ = ["STARTUP_SECONDS", "served_service", "serving"]

STOP_SECONDS = 10


@asynccontextmanager
async def serving(
    app: ASGIApp, *, stop_seconds: int = STOP_SECONDS, tls: tuple[Path, Path] | None = None
) -> AsyncIterator[str]:
    """Serve `app` (its lifespan on) on a free 127.0.0.1 port until the block ends; yields its origin.

    At the end, open requests get `stop_seconds` to finish (a client's long-lived event stream would
    otherwise hold the server that long). With `tls`, over https (see `serving_on`).
    """
    async with serving_on(lambda _port: app, stop_seconds=stop_seconds, tls=tls) as origin:
        yield origin


@asynccontextmanager
async def served_service(database_url: str, data_home: Path, **settings: Any) -> AsyncIterator[Service]:
    """The service on a real port, an organization `acme` set up, and a client for it."""
    org = await set_up(database_url)
    app = service_app(database_url, data_home, **settings)
    async with serving(app) as origin, httpx2.AsyncClient(base_url=origin, timeout=60, trust_env=False) as client:
        yield Service(client, org, database_url, data_home, app=app)
