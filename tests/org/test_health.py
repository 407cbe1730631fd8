"""`/healthz` and `/readyz` (API-8): the process answers; a replica is ready only when the database answers and its
sealing key opens what it seals and holds every key the stored secrets were sealed with; nothing a probe says ever
holds a key, a password or a URL."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from tests.conftest import Home
from tests.org._flows import register
from tests.org._service import KEY, running_service, service_app

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _probe(database_url: str, home: Home, key: str) -> AsyncIterator[httpx2.AsyncClient]:
    """Another replica of the same service, started with `MCPYARD_ORG_KEY=key`."""
    app = service_app(database_url, home.data_home / "other", environ={"MCPYARD_ORG_KEY": key})
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://org.test") as client:
            yield client


async def test_api8_healthz_answers_and_readyz_says_every_check(database_url: str, home: Home) -> None:
    async with running_service(database_url, home.data_home) as service:
        health = await service.client.get("/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = await service.client.get("/readyz")
        assert ready.status_code == 200, ready.text
        body = ready.json()
        assert body["status"] == "ok"
        assert (body["checks"]["database"], body["checks"]["key"]) == ("ok", "ok")
        hearing = "hearing the other replicas" if database_url.startswith("postgresql") else "each call reads"
        assert hearing in body["checks"]["replicas"]
        assert ready.headers["cache-control"] == "no-store"


async def test_api8_a_replica_without_a_key_in_use_is_not_ready_until_it_holds_it(
    database_url: str, home: Home, upstream: str
) -> None:
    """A rotation in steps: a replica that cannot open what the others sealed says so, naming the key's id only."""
    new = base64.b64encode(os.urandom(32)).decode()
    async with running_service(database_url, home.data_home) as service:
        await register(service, upstream)  # its token sealed with KEY
        async with _probe(database_url, home, new) as only_new:
            refused = await only_new.get("/readyz")
            assert refused.status_code == 503
            problem = refused.json()["checks"]["key"]
            assert "does not hold" in problem
            assert "MCPYARD_ORG_KEY=NEW,OLD" in problem
            assert KEY not in refused.text
            assert new not in refused.text
        async with _probe(database_url, home, f"{new},{KEY}") as both:
            ready = await both.get("/readyz")
            assert ready.status_code == 200, ready.text


async def test_api8_readyz_is_unavailable_while_the_service_is_not_serving(database_url: str, home: Home) -> None:
    app = service_app(database_url, home.data_home)  # never started: its lifespan has not run
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://org.test") as client:
        assert (await client.get("/healthz")).status_code == 200
        not_yet = await client.get("/readyz")
        assert not_yet.status_code == 503
        assert not_yet.json()["status"] == "unavailable"
