"""Replicas as real processes on 127.0.0.1, and what goes wrong around them (ORG-9, NET-2): two members approving one
call on two replicas at once, a hundred times; a replica killed in the middle of a run; PostgreSQL restarted under
load; a registered server that hangs. On SQLite and PostgreSQL where it applies.

Each replica is `tests/org/_replica.py`: the service's own app on uvicorn in a process of its own, its leases short so
a dead replica's work ends within seconds. The fixture MCP server runs in this process, reached over real HTTP.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest

from mcpyard.org._app import LISTENING
from mcpyard.org.services import add_member, create_token
from mcpyard.org.store import open_database
from tests._waiting import eventually
from tests.conftest import Home
from tests.org._flows import TOKEN
from tests.org._postgres import TemporaryCluster
from tests.org._replica import Replica, replica
from tests.org._service import FAST_HASHING, KEY, PASSWORD, Org, set_up

pytestmark = pytest.mark.anyio

ROUNDS = 100
"""Rounds of two approvals of one call at the same instant."""
SWEPT_SECONDS = 20
"""How soon a dead replica's run is ended by another (its lease is 2 s, the sweep every 0.5 s; a loaded machine)."""


@dataclass
class Api:
    """One member, speaking to one replica."""

    client: httpx2.AsyncClient
    token: str

    async def request(self, method: str, path: str, body: Any = None) -> httpx2.Response:
        headers = {"Authorization": f"Bearer {self.token}"}
        return await self.client.request(method, path, headers=headers, json=body)

    async def ok(self, method: str, path: str, body: Any = None, *, expect: int = 200) -> Any:
        response = await self.request(method, path, body)
        assert response.status_code == expect, response.text
        return response.json() if response.content else None


async def _member(database_url: str, org: Org, email: str, role: str) -> str:
    async with open_database(database_url) as db, db.sessions() as session:
        member = await add_member(
            session, org_id=org.org_id, email=email, role=role, password=PASSWORD, hashing=FAST_HASHING
        )
        _, token = await create_token(session, member)
    return token


@dataclass
class Two:
    """Replicas A and B, each with a client, and the organization's owner, an admin and a member."""

    a: Replica
    b: Replica
    clients: tuple[httpx2.AsyncClient, httpx2.AsyncClient]
    owner: str
    admin: str
    member: str

    def on(self, which: str, token: str) -> Api:
        return Api(self.clients[0 if which == "a" else 1], token)


@pytest.fixture
async def two(database_url: str, home: Home) -> AsyncIterator[Two]:
    org = await set_up(database_url)
    admin = await _member(database_url, org, "admin@acme.test", "admin")
    member = await _member(database_url, org, "member@acme.test", "member")
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(replica(database_url, home.data_home / "a", KEY))
        b = await stack.enter_async_context(replica(database_url, home.data_home / "b", KEY))
        clients = tuple(
            [
                await stack.enter_async_context(httpx2.AsyncClient(base_url=r.origin, timeout=60, trust_env=False))
                for r in (a, b)
            ]
        )
        yield Two(a, b, (clients[0], clients[1]), org.owner_token, admin, member)


async def _tools(api: Api, upstream: str) -> dict[str, dict[str, Any]]:
    server = await api.ok(
        "POST", "/api/v1/servers", {"name": "tools", "url": upstream, "bearer_token": TOKEN}, expect=201
    )
    assert server["state"] == "connected", server
    return {tool["tool"]: tool for tool in server["tools"]}


async def _policy(api: Api, tool: dict[str, Any], policy: str) -> None:
    await api.ok(
        "PUT", f"/api/v1/tools/{tool['id']}/policy", {"policy": policy, "definition_hash": tool["definition_hash"]}
    )


async def _writes(api: Api) -> int:
    counted = await api.ok("POST", "/api/v1/calls", {"tool": "tools__writes", "arguments": {}})
    assert counted["ok"] is True, counted
    return int(counted["structured"]["result"])


@pytest.mark.long
async def test_org9_two_members_approving_one_call_on_two_replicas_at_once_run_it_exactly_once(
    two: Two, upstream: str
) -> None:
    owner_a = two.on("a", two.owner)
    tools = await _tools(owner_a, upstream)
    await _policy(owner_a, tools["write"], "ask_first")
    await _policy(owner_a, tools["writes"], "run_freely")
    before = await _writes(owner_a)
    member_b = two.on("b", two.member)
    for round_ in range(ROUNDS):
        parked = await member_b.ok(
            "POST", "/api/v1/calls", {"tool": "tools__write", "arguments": {"note": f"n{round_}"}}, expect=202
        )
        approval = parked["approval"]["id"]
        answers: dict[str, httpx2.Response] = {}

        async with anyio.create_task_group() as tg:  # both at the same instant, on two replicas
            tg.start_soon(_approve, two.on("a", two.owner), approval, answers, "a")
            tg.start_soon(_approve, two.on("b", two.admin), approval, answers, "b")
        statuses = sorted(response.status_code for response in answers.values())
        assert statuses == [200, 409], [response.text for response in answers.values()]
        [lost] = [response for response in answers.values() if response.status_code == 409]
        assert lost.json()["error"]["code"] == "already_decided"
    assert await _writes(owner_a) == before + ROUNDS, "each approved call ran exactly once"
    done = await owner_a.ok("GET", "/api/v1/approvals")
    assert {item["status"] for item in done} == {"done"}
    assert len(done) == ROUNDS


async def _approve(api: Api, approval: str, answers: dict[str, httpx2.Response], key: str) -> None:
    answers[key] = await api.request("POST", f"/api/v1/approvals/{approval}/approve")


async def test_org9_a_replica_killed_mid_run_leaves_it_failed_never_running_and_never_run_twice(
    two: Two, upstream: str, database_url: str, home: Home
) -> None:
    owner_b = two.on("b", two.owner)
    tools = await _tools(owner_b, upstream)
    await _policy(owner_b, tools["slow_write"], "ask_first")
    await _policy(owner_b, tools["writes"], "run_freely")
    before = await _writes(owner_b)
    slow = await owner_b.ok(
        "POST", "/api/v1/calls", {"tool": "tools__slow_write", "arguments": {"note": "s", "seconds": 4}}, expect=202
    )
    parked = await owner_b.ok(
        "POST", "/api/v1/calls", {"tool": "tools__slow_write", "arguments": {"note": "p", "seconds": 0}}, expect=202
    )
    slow_id, parked_id = slow["approval"]["id"], parked["approval"]["id"]

    async def approve_on_a() -> None:
        with contextlib.suppress(httpx2.HTTPError):  # A dies while this request waits: its answer never comes
            await two.on("a", two.owner).request("POST", f"/api/v1/approvals/{slow_id}/approve")

    async def slow_is(wanted: str) -> bool:
        found = {item["id"]: item for item in await owner_b.ok("GET", "/api/v1/approvals")}
        return bool(found[slow_id]["status"] == wanted)

    async with anyio.create_task_group() as tg:
        tg.start_soon(approve_on_a)
        # A runs it now; nothing in this process hears that, so its state is read until it says so.
        await eventually(lambda: slow_is("running"), within=30, what="A claimed the run")
        await two.a.kill()
    await eventually(lambda: slow_is("failed"), within=SWEPT_SECONDS, what="B ended A's run")
    ended = {item["id"]: item for item in await owner_b.ok("GET", "/api/v1/approvals")}[slow_id]
    assert ended["result"]["error"]["code"] == "interrupted"
    again = await owner_b.request("POST", f"/api/v1/approvals/{slow_id}/approve")
    assert again.json()["error"]["code"] == "already_decided", "never run a second time"
    ran = await owner_b.ok("POST", f"/api/v1/approvals/{parked_id}/approve")
    assert ran["ok"] is True, "a call parked through A is decided and run on B"
    # What A had sent ends with A's connection (this server stops a call whose client went away), or runs once:
    # the parked call ran once on B; nothing ran twice.
    assert before + 1 <= await _writes(owner_b) <= before + 2
    async with (
        replica(database_url, home.data_home / "a2", KEY) as back,
        httpx2.AsyncClient(base_url=back.origin, timeout=60, trust_env=False) as client,
    ):
        ready = await client.get("/readyz")
        assert ready.status_code == 200, ready.text
    assert "Traceback" not in two.b.log


@pytest.mark.long
async def test_net2_a_server_that_hangs_fails_at_its_deadline_while_other_calls_go_on(
    two: Two, upstream: str, database_url: str
) -> None:
    if database_url.startswith("postgresql"):
        pytest.skip("the deadline is the host's, whatever the database: once is enough")
    owner_a, owner_b = two.on("a", two.owner), two.on("b", two.owner)
    tools = await _tools(owner_a, upstream)
    await _policy(owner_a, tools["hang"], "run_freely")
    await _policy(owner_a, tools["lookup"], "run_freely")
    hung: dict[str, Any] = {}

    async def hang() -> None:
        started = anyio.current_time()
        hung["answer"] = await owner_a.ok("POST", "/api/v1/calls", {"tool": "tools__hang", "arguments": {}})
        hung["seconds"] = anyio.current_time() - started

    others = 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(hang)
        while "answer" not in hung and others < 200:  # bounded: the hung call ends within its 30 s
            for api in (owner_a, owner_b):
                with anyio.fail_after(5):
                    answered = await api.ok(
                        "POST", "/api/v1/calls", {"tool": "tools__lookup", "arguments": {"key": "k"}}
                    )
                assert answered["ok"] is True, answered
                others += 1
            await anyio.sleep(0.1)  # a steady trickle of other calls, not a flood
    assert hung["answer"]["ok"] is False
    assert hung["answer"]["error"]["code"] in ("timeout", "server_error"), hung["answer"]
    assert 25 <= hung["seconds"] <= 45, hung["seconds"]
    assert others >= 20, "the other calls went on meanwhile"


@pytest.mark.long
async def test_org9_postgresql_restarted_under_load_replicas_reconnect_and_lose_nothing_acknowledged(
    home: Home, upstream: str
) -> None:
    cluster = TemporaryCluster.start(durable=True)  # crashed below: what was committed must survive
    try:
        await _restarted_under_load(cluster, home, upstream)
    finally:
        cluster.stop()
        cluster.remove()


async def _restarted_under_load(cluster: TemporaryCluster, home: Home, upstream: str) -> None:
    database_url = cluster.url()
    org = await set_up(database_url)
    async with AsyncExitStack() as stack:
        replicas = [await stack.enter_async_context(replica(database_url, home.data_home / name, KEY)) for name in "ab"]
        clients = [
            await stack.enter_async_context(httpx2.AsyncClient(base_url=r.origin, timeout=60, trust_env=False))
            for r in replicas
        ]
        a, b = (Api(client, org.owner_token) for client in clients)
        tools = await _tools(a, upstream)
        await _policy(a, tools["lookup"], "run_freely")
        await _policy(a, tools["write"], "ask_first")
        acknowledged = (
            await a.ok("POST", "/api/v1/calls", {"tool": "tools__write", "arguments": {"note": "kept"}}, expect=202)
        )["approval"]["id"]
        answers: list[httpx2.Response | Exception] = []
        serving, restarted = anyio.Event(), anyio.Event()

        async def load(api: Api, count: int) -> None:
            for _ in range(count):  # bounded; calls go on until the database is back
                if restarted.is_set():
                    return
                try:
                    answer = await api.request(
                        "POST", "/api/v1/calls", {"tool": "tools__lookup", "arguments": {"key": "k"}}
                    )
                except httpx2.HTTPError as exc:
                    answers.append(exc)
                else:
                    answers.append(answer)
                    if answer.status_code == 200:
                        serving.set()

        async with anyio.create_task_group() as tg:
            for api in (a, b, a, b):
                tg.start_soon(load, api, 400)
            with anyio.fail_after(30):
                await serving.wait()  # the restart lands in the middle of calls that were being served
            await anyio.to_thread.run_sync(cluster.restart)
            restarted.set()
        for answer in answers:
            assert not isinstance(answer, Exception), f"a request got no answer: {answer!r}"
            if answer.status_code != 200:
                body = answer.json()  # a clear error: one JSON object, never a traceback
                assert set(body) == {"error"}, answer.text
                assert "Traceback" not in answer.text
        ok = sum(1 for answer in answers if isinstance(answer, httpx2.Response) and answer.status_code == 200)
        assert ok > 0

        async def both_answer() -> bool:
            for api in (a, b):
                answered = await api.request(
                    "POST", "/api/v1/calls", {"tool": "tools__lookup", "arguments": {"key": "k"}}
                )
                if answered.status_code != 200:
                    return False
            return True

        # Nothing in this process hears the replicas reconnect: ask until both answer again.
        await eventually(both_answer, within=30, what="both replicas serve again")
        # A replica that reconnected hears the others again (and caught up on what it may have missed).
        await eventually(lambda: _hearing(clients), within=30, what="both replicas listen again")
        pending = {item["id"] for item in await b.ok("GET", "/api/v1/approvals?status=pending")}
        assert acknowledged in pending, "an approval acknowledged before the restart is still there"
        await _policy(b, tools["lookup"], "off")
        refused = await a.ok("POST", "/api/v1/calls", {"tool": "tools__lookup", "arguments": {"key": "k"}})
        assert refused["error"]["code"] == "policy_off", "a change after the restart holds on the other replica"
    for running in replicas:
        assert "Traceback" not in running.log, "an outage is one line on the log, not a traceback"


async def _hearing(clients: list[httpx2.AsyncClient]) -> bool:
    for client in clients:
        ready = await client.get("/readyz")
        if ready.status_code != 200 or ready.json()["checks"].get("replicas") != LISTENING:
            return False
    return True
