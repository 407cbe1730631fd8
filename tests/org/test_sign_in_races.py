"""Sign-in guesses sent at once are each counted before any password is checked: from one address at most the
allowed number is ever checked, the rest are refused with 429 and Retry-After, and then even the right password waits;
an account's lockout holds the same way against guesses in parallel (ORG-1, THREATS: login)."""

from __future__ import annotations

import json
from datetime import timedelta

import anyio
import httpx2
import pytest

from mcpyard.org.services._people import FREE_FAILURES, create_organization, verify_login
from mcpyard.org.store._db import Database
from mcpyard.org.store._models import utcnow
from tests.conftest import Home
from tests.org._served import served_service
from tests.org._service import PASSWORD

pytestmark = pytest.mark.anyio

ALLOWED = 10
"""Failed sign-ins an address may make in the window (the service's default)."""
SECONDS = 120


async def _at_once(client: httpx2.AsyncClient, path: str, count: int, password: str) -> list[httpx2.Response]:
    """`count` sign-ins sent together: each waits at the line until all are ready, then they go."""
    body = json.dumps({"email": "owner@acme.test", "password": password})
    ready, go = [anyio.Event() for _ in range(count)], anyio.Event()
    answers: list[httpx2.Response] = []

    async def one(at_the_line: anyio.Event) -> None:
        at_the_line.set()
        await go.wait()
        answers.append(await client.post(path, content=body, headers={"Content-Type": "application/json"}))

    with anyio.fail_after(SECONDS):
        async with anyio.create_task_group() as group:
            for event in ready:
                group.start_soon(one, event)
            for event in ready:
                await event.wait()
            go.set()
    return answers


@pytest.mark.parametrize("path", ["/api/v1/login", "/api/v1/session"])
@pytest.mark.parametrize("count", [14, 30])
async def test_org1_wrong_sign_ins_sent_at_once_are_each_counted_and_the_rest_wait(
    database_url: str, home: Home, path: str, count: int
) -> None:
    async with served_service(database_url, home.data_home) as service:
        limits = httpx2.Limits(max_connections=count, max_keepalive_connections=count)
        async with httpx2.AsyncClient(base_url=str(service.client.base_url), limits=limits, timeout=60) as client:
            answers = await _at_once(client, path, count, "a wrong guess")
            statuses = sorted(answer.status_code for answer in answers)
            assert statuses.count(401) <= ALLOWED, statuses
            assert statuses == [401] * statuses.count(401) + [429] * (count - statuses.count(401)), statuses
            assert statuses.count(429) >= count - ALLOWED
            for answer in answers:
                if answer.status_code == 429:
                    assert int(answer.headers["retry-after"]) > 0
                    assert answer.json()["error"]["code"] == "too_many_attempts"
            [right] = await _at_once(client, path, 1, PASSWORD)
            assert right.status_code == 429, "past the limit not even the right password is checked"
            assert int(right.headers["retry-after"]) > 0


async def test_org1_an_accounts_lockout_holds_against_wrong_passwords_sent_at_once(database: Database) -> None:
    """Of many wrong passwords at once, only those before the lock are checked: the lock then covers the rest, so the
    count stays at the first lock (with each guess checked and counted, it would have grown to a far longer lock)."""
    async with database.sessions() as session:
        _, owner = await create_organization(session, name="acme", owner_email="o@acme.test", owner_password=PASSWORD)
    now = utcnow()

    async def guess(password: str) -> bool:
        async with database.sessions() as session:
            return await verify_login(session, email=owner.email, password=password, now=now) is not None

    with anyio.fail_after(SECONDS):
        async with anyio.create_task_group() as group:
            for n in range(14):
                group.start_soon(guess, f"wrong guess {n}")
    assert not await guess(PASSWORD), "locked: even the right password is refused"
    later = now + timedelta(seconds=1, milliseconds=500)
    async with database.sessions() as session:
        member = await verify_login(session, email=owner.email, password=PASSWORD, now=later)
    assert member is not None, f"only {FREE_FAILURES + 1} guesses were checked, so the lock was the first one, 1 s"
