"""The organization service for tests: its real app, on a real database, with real MCP servers on 127.0.0.1."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from starlette.applications import Starlette

from mcpyard.org._app import OrgSettings, org_app
from mcpyard.org.keys._passwords import PasswordHashing
from mcpyard.org.services._api_tokens import create_token
from mcpyard.org.services._people import add_member, create_organization
from mcpyard.org.store._db import open_database
from mcpyard.org.store._migrate import upgrade

__all__ = ["FAST_HASHING", "KEY", "PASSWORD", "Org", "Service", "running_service", "service_app", "set_up"]

KEY = base64.b64encode(os.urandom(32)).decode()
PASSWORD = "correct horse battery staple"
FAST_HASHING = PasswordHashing(time_cost=1, memory_kib=64, parallelism=1)
"""Passwords hashed at argon2id's smallest cost: the tests are about who signs in, not about the hash's strength
(the production parameters are tested in test_passwords.py)."""


@dataclass
class Org:
    """One organization of the running service, with an owner's token."""

    org_id: str
    owner_email: str
    owner_token: str


@dataclass
class Service:
    """The running service, a client for it, and one organization set up with its owner."""

    client: httpx2.AsyncClient
    org: Org
    database_url: str
    data_home: Path
    responses: list[str] = field(default_factory=list)
    """Every response body this client read, to be searched for secrets."""
    app: Starlette | None = None
    """The service's app, when it runs in this process."""

    @property
    def origin(self) -> str:
        """Where the client reaches the service (`http://127.0.0.1:<port>` when it is served for real)."""
        return str(self.client.base_url).rstrip("/")

    async def settled(self) -> None:
        """Wait until the service's background work (a turn going on after its approval) is done."""
        assert self.app is not None, "only a service running in this process can be waited on"
        service = self.app.state.org.service
        assert service is not None, "the service is not running"
        await service.hosts.settled()

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.org.owner_token}"}

    async def request(self, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> httpx2.Response:
        response = await self.client.request(method, path, headers=self.headers(token), **kwargs)
        self.responses.append(response.text)
        return response

    async def get(self, path: str, **kwargs: Any) -> Any:
        response = await self.request("GET", path, **kwargs)
        assert response.status_code == 200, response.text
        return response.json()

    async def post(self, path: str, body: Any = None, *, expect: int = 200, token: str | None = None) -> Any:
        response = await self.request("POST", path, json=body if body is not None else {}, token=token)
        assert response.status_code == expect, response.text
        return response.json() if response.content else None

    async def add_org(self, name: str, email: str) -> Org:
        async with open_database(self.database_url) as db, db.sessions() as session:
            org, owner = await create_organization(
                session, name=name, owner_email=email, owner_password=PASSWORD, hashing=FAST_HASHING
            )
            _, token = await create_token(session, owner)
        return Org(org.id, email, token)

    async def add_member(self, email: str, role: str = "member") -> str:
        """A member of the first organization; their token."""
        async with open_database(self.database_url) as db, db.sessions() as session:
            member = await add_member(
                session, org_id=self.org.org_id, email=email, role=role, password=PASSWORD, hashing=FAST_HASHING
            )
            _, token = await create_token(session, member)
        return token


async def set_up(database_url: str) -> Org:
    """Migrate the database and make the organization `acme`, owned by owner@acme.test, with a token for its owner."""
    async with open_database(database_url) as db:
        await upgrade(db)
        async with db.sessions() as session:
            org, owner = await create_organization(
                session, name="acme", owner_email="owner@acme.test", owner_password=PASSWORD, hashing=FAST_HASHING
            )
            _, token = await create_token(session, owner)
    return Org(org.id, "owner@acme.test", token)


def service_app(database_url: str, data_home: Path, **settings: Any) -> Starlette:
    """The service's app as tests run it: development mode (loopback http), the key given in its environment."""
    options = {
        "dev": True,
        "secure_cookies": False,
        "environ": {"MCPYARD_ORG_KEY": KEY},
        "password_hashing": FAST_HASHING,
        **settings,
    }
    return org_app(OrgSettings(database_url=database_url, data_home=data_home, **options))


@asynccontextmanager
async def running_service(database_url: str, data_home: Path, **settings: Any) -> AsyncIterator[Service]:
    """The service's app with its lifespan, and an organization `acme` owned by owner@acme.test."""
    org = await set_up(database_url)
    app = service_app(database_url, data_home, **settings)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://org.test", timeout=60) as client:
            yield Service(client, org, database_url, data_home, app=app)
